#pragma once
// CUDA C++ source -> cubin for one architecture through NVRTC (no GPU or
// driver needed), with the on-disk cubin cache in front of it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/worker/compile_diagnostics.h"
#include "engine/worker/cubin_cache.h"

namespace hiera::engine::worker {

struct CompileRequest {
  std::string source;
  std::vector<std::string> options;
  std::string arch = "sm_90";  // real machine code: "sm_NN" (with an optional a/f suffix)
  int line_offset = 0;
  // Kernel names (or name expressions such as "scale<float>") whose mangled
  // names are needed to launch them; extern "C" names map to themselves.
  std::vector<std::string> name_expressions;
  std::string file_name = "candidate.cu";
};

struct CompileResult {
  bool ok = false;
  bool cache_hit = false;
  std::string key;
  std::string log;
  std::vector<CompileDiagnostic> diagnostics;
  double compile_ms = 0.0;
  std::string cubin;  // ELF bytes when ok
  std::map<std::string, std::string> lowered_names;
};

class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NvrtcCompiler {
 public:
  // Without a cache directory every compile runs NVRTC.
  explicit NvrtcCompiler(std::optional<std::filesystem::path> cache_dir);
  // Throws CompileError for a request that cannot be compiled at all (an
  // invalid arch); a source that does not compile is ok == false with its log.
  CompileResult compile(const CompileRequest& request) const;
  // "13.0"
  static std::string version();
  // The toolkit headers (cuda_fp16.h, ...) when they exist on this machine.
  static std::optional<std::string> toolkit_include_dir();

 private:
  std::optional<CubinCache> cache_;
};

}  // namespace hiera::engine::worker
