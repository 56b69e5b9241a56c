#pragma once
// What every rewrite of the knowledge proposer produces: a set of graph nodes
// it replaces, and the Python statements (plus any CUDA kernels) that compute
// the same value. The module emitter (module_emitter.h) turns the reference's
// graph and a list of non-overlapping replacements into a ModelNew source.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/knowledge/recipe.h"

namespace hiera::engine::propose::recipes {

// A CUDA kernel a replacement launches: compiled once with NVRTC through
// hiera_runner.nvrtc_runtime by the emitted module's `_kernel(name)` helper.
struct KernelSource {
  std::string name;         // the extern "C" entry point; unique within one candidate
  std::string source;       // complete NVRTC source (no host headers)
  std::vector<std::string> options;  // NVRTC options, e.g. "--use_fast_math" (rarely: changes numerics)
};

struct Replacement {
  std::string recipe;                 // knowledge/recipes id it applies ("s3_elementwise_fusion")
  knowledge::Space space = knowledge::Space::S1;
  std::string description;            // one line for the report: "relu + bias + scale after conv fused into one kernel"
  std::set<std::string> covered;      // node names no longer emitted (includes `produces`)
  std::string produces;               // the covered node whose value the statements assign to a variable of that name
  // Statements of forward, in order, each one line without indentation; they
  // may read any live node's variable (by node name) and `self`, and must
  // assign `produces`. Helpers the emitter provides: `_kernel(name)` (the
  // compiled KernelSource of that name), `_grid(n, block)` (blocks for a
  // grid-stride loop over n items: SM count x 4 at most), `nvrtc_runtime`
  // (int64()/float64() wrappers for 64-bit scalars).
  std::vector<std::string> statements;
  std::vector<KernelSource> kernels;
  std::vector<std::string> imports;   // extra module-level imports ("import math")
  // Module-level code the statements use, each a complete top-level
  // statement or block: import-time choices such as
  // `_HIERA_HAS_ADDMM_ACTIVATION = hasattr(torch, "_addmm_activation")`
  // (a fallback chosen once at import, never a try/except around forward).
  // Emitted once per distinct text, in order of first use.
  std::vector<std::string> definitions;

  // Whole-forward rewrites leave `covered`, `produces` and `statements` empty:
  // process-wide library flags set for the call and restored in a finally
  // block ({"torch.backends.cudnn.benchmark", "True"}), or the whole forward
  // captured in a CUDA graph and replayed.
  std::vector<std::pair<std::string, std::string>> settings;
  bool cuda_graph = false;

  // Can differ from the reference beyond float reassociation (inputs that
  // overflow, NaN/inf, a capture that may fail, a different library path): the
  // proposer also offers the combination without it.
  bool risky = false;

  // Its kernel computes what torch hands to a library that is poor at it (a
  // depthwise conv, which cuDNN runs as a GEMM of one channel): torch.compile
  // calls the same library, so a model compiled by torch.compile keeps this
  // kernel (the recipe proposer's compiled composition).
  bool library_gap = false;

  bool whole_forward() const { return covered.empty(); }
};

}  // namespace hiera::engine::propose::recipes
