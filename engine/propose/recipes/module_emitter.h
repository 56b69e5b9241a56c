#pragma once
// (reference graph, reference source, replacements) -> a candidate module:
// the reference source verbatim, then a generated block defining
// `class ModelNew(Model)` whose forward is the captured graph with the
// replacements' statements in place of the nodes they cover. Subclassing Model
// keeps the constructor, every parameter and buffer name and so the
// reference's state_dict. The emitter refuses (an error, never broken code)
// when replacements overlap or the rest of forward still needs a value a
// replacement removed. The text is deterministic: same inputs, same bytes.
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/compile_proposer.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes {

struct EmittedModule {
  std::string source;  // the complete candidate, when error is empty
  std::string error;   // why nothing was emitted
  bool ok() const { return error.empty(); }
};

struct EmitOptions {
  // Each replacement that launches kernels becomes a module-level function
  // under `_hiera_eager` (torch.compiler.disable), which forward calls: under
  // torch.compile every such region runs as it is (a graph break; dynamo
  // cannot trace the ctypes launch) and inductor compiles what lies between.
  bool opaque_kernel_regions = false;
};

// Without a captured graph (capture fell back) only whole-forward replacements
// apply: forward then wraps the reference's own forward (super().forward).
EmittedModule emit_module(const graph::OpGraph& graph, const std::string& reference_source,
                          const std::vector<Replacement>& replacements, const EmitOptions& options = {});

// The Python of `_divider`, which the emitted module defines when a launch
// divides a kernel's index by a size: for harnesses that run launch statements
// without a module.
std::string divider_helper();

// The Python of `_broadcast_shapes`, defined when a launch broadcasts its
// inputs' shapes; for the same harnesses.
std::string broadcast_helper();

// The comment line that starts the generated block.
inline constexpr const char* kGeneratedMarker =
    "# ---- hiera knowledge proposer: everything below is generated from the captured graph ----";

}  // namespace hiera::engine::propose::recipes
