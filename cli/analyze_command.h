#pragma once
// `hiera analyze FILE [--json] [--gpu ID]`: the static findings and hints of a
// CUDA (.cu, .cuh) or PyTorch (.py) file, as a readable listing or as JSON
// (engine/analysis/analysis_json.h), with roofline estimates on the chosen GPU
// where shapes are known (KernelBench get_inputs, `hiera:` annotations).
// Exit codes: 0 findings printed (hints or not), 1 the file cannot be read, 2
// bad usage (an unsupported file type, an unknown GPU).
#include <string>

#include <CLI/CLI.hpp>

namespace hiera::cli {

inline constexpr int kAnalyzeOk = 0;
inline constexpr int kAnalyzeUnreadable = 1;
inline constexpr int kAnalyzeUsage = 2;

struct AnalyzeArgs {
  std::string file;
  bool json = false;
  std::string gpu = "h200";  // a knowledge/gpus id; "none" for no estimates
  std::string knowledge_dir;
};

CLI::App* add_analyze_command(CLI::App& app, AnalyzeArgs& args);
int run_analyze(const AnalyzeArgs& args, const char* argv0);

}  // namespace hiera::cli
