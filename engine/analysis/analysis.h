#pragma once
// Source analysis, step 1 of the optimize walk (ARCHITECTURE.md): document
// text -> findings (CUDA kernels and launch sites; nn.Modules, their layers
// and forward ops; KernelBench inputs), static hints, and the syntax problems
// it read past. Pure and cheap: no I/O, safe on half-typed code, meant to run
// on every edit. Ranges are byte offsets into the text (analysis_json.h makes
// LSP positions).
//
// Incremental: the server keeps a document's last Analysis and passes it
// back. analyze() then returns it as is when neither the text nor the facts
// changed; otherwise it lexes and splits the file again (cheap) and reuses the
// findings and hints of every CUDA function definition and nn.Module class
// whose own text, and the file-level facts it depends on (constants and
// file-scope shared arrays; imports, module-level values, module classes and
// KernelBench inputs), are unchanged, shifted to where that text now starts.
// Only the functions and modules an edit touches are analysed again.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/cuda_findings.h"
#include "engine/analysis/hint.h"
#include "engine/analysis/language.h"
#include "engine/analysis/syntax_problem.h"
#include "engine/analysis/torch_findings.h"
#include "engine/common/size_expression.h"

namespace hiera::engine::analysis {

// A kernel's work per launch as `hiera:` annotations state it (size expressions).
struct KernelWorkAnnotation {
  std::string flops;   // "2*N"; "" when not given
  std::string bytes;   // "12*N"
  SizeMap sizes;       // N=16777216
  std::string dtype = "float32";
  bool operator==(const KernelWorkAnnotation&) const = default;
};

// What analysis cannot read from the text alone: facts the caller has from
// `hiera:` annotations (engine/spec parses them; analysis does not).
struct AnalysisFacts {
  SizeMap sizes;  // Python: module-level sizes to use instead of the file's (hiera: size batch_size=64)
  std::map<std::string, KernelWorkAnnotation> kernels;  // CUDA: by kernel name
  bool operator==(const AnalysisFacts&) const = default;
};

struct AnalysisCache;  // analysis.cpp: what an edit can reuse

struct Analysis {
  Language language = Language::Cuda;
  std::vector<CudaFunction> functions;   // kernels and device functions, in source order
  std::vector<LaunchSite> launches;
  std::vector<TorchModule> modules;
  std::optional<KernelBenchEntry> kernelbench;
  std::vector<Hint> hints;               // in source order
  std::vector<SyntaxProblem> problems;   // in source order
  // Function definitions and module classes analysed, and how many of them
  // were reused from the previous analysis (a server can log it).
  std::size_t items = 0, reused = 0;
  std::shared_ptr<const AnalysisCache> cache;  // for the next analyze() of the same document
};

// `previous` is the same document's last analysis (any language: a changed
// language reuses nothing).
Analysis analyze(std::string_view text, Language language, const AnalysisFacts& facts = {}, const Analysis* previous = nullptr);

}  // namespace hiera::engine::analysis
