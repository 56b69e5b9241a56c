#pragma once
// From the reference's profile to the regions the planner places on the
// roofline. A CUDA kernel task is one region (its kernel). A PyTorch module's
// kernel list is grouped by kernel name families (kernel_families.h: gemm,
// elementwise_chain, norm, ...), or by the ops analysis counted, when an op
// says which families it runs as (a Linear + bias + GELU op claims the gemm and
// elementwise kernels: one gemm_epilogue region). A module whose launches
// cost at least half its time is one whole_module region: no single kernel is
// the cost there. Each region gets its counted work; where only the module's
// totals are counted, they are apportioned by time, and the region says so.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/roofline.h"
#include "engine/common/kernel_profile.h"

namespace hiera::engine::plan {

// Work analysis counted for one op (or op group) of the module.
struct OpWork {
  std::string name;                   // "linear+bias+gelu"
  std::string pattern;                // the region's pattern: "gemm_epilogue"
  std::vector<std::string> families;  // kernel families it runs as; empty: {pattern}
  double flops = 0.0;
  double bytes = 0.0;
  std::int64_t elements = -1;             // -1: the task's
  std::optional<std::int64_t> last_dim;   // unset: the task's
  std::string dtype;                      // empty: the task's
};

// What the task spec knows about the reference, per call.
struct TaskWork {
  int runs = 1;            // calls of the reference the profile covers (the runner profiles 5, a CUDA task 1)
  double flops = 0.0;      // counted for the whole task (0: not counted)
  double bytes = 0.0;
  std::string dtype;
  std::int64_t elements = -1;  // -1: unknown
  std::optional<std::int64_t> last_dim;
  std::string pattern;     // for kernels no family names (a user's kernel: from analysis, e.g. "stencil")
  std::optional<double> module_ms;  // the reference's timed median per call, when known (launch gaps show in it)
  std::vector<OpWork> ops;          // claimed in order: a family goes to the first op naming it
};

// Regions, the costliest first (ties by name). Kernels with no GPU time are
// left out; an op whose families ran no kernel forms no region (its work
// still counts against the module's totals). Throws std::invalid_argument
// when runs is below 1.
std::vector<Region> regions_from_profile(const KernelProfile& profile, const TaskWork& work, const GpuCeilings& ceilings);

}  // namespace hiera::engine::plan
