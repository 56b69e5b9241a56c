#pragma once
// The launch contract of a CUDA kernel that has none, inferred from what the
// file shows (ANNOTATIONS.md, "Directives"): the arguments from the kernel's
// parameters (element types, roles from how the body uses each pointer), the
// sizes from the integer parameters and the host values the launch passes
// them, the extents from where the host code allocates each array
// (cudaMalloc, torch::empty/zeros/..., x.numel()), and the launch geometry
// from the launch site with its host definitions (dim3 variables, constants,
// #defines). It is written as the `hiera:` lines an editor inserts above the
// kernel. What the text does not say is written `?`, which the annotation
// parser refuses, so the user is shown each value still to fill in; a size
// value hiera had to choose is said so in a plain comment line.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/analysis.h"

namespace hiera::engine::spec {

struct InferredContract {
  std::string kernel;
  std::size_t insert_at = 0;  // byte offset: the start of the kernel's first line
  // The comment lines to insert there, each with the kernel line's indentation
  // and ending in '\n': a note saying where the contract comes from (and what
  // was chosen or must be filled in), then the `// hiera:` lines.
  std::string text;
  std::vector<std::string> unknown;  // what is written `?`: "the extent of x", "the launch grid"
  std::vector<std::string> chosen;   // values chosen without evidence: "N=1048576"
  bool complete() const { return unknown.empty(); }
};

// nullopt when `kernel` is not a complete __global__ kernel of `analysis`
// (made from `text`), takes no parameters, or already has `arg` or `launch`
// annotations (the user has started the contract; diagnostics take over).
std::optional<InferredContract> infer_launch_contract(std::string_view text, const analysis::Analysis& analysis,
                                                      std::string_view kernel);

}  // namespace hiera::engine::spec
