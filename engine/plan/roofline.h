#pragma once
// The roofline the planner places each region on: the ceilings of one GPU
// (engine/common's GpuCeilings, measured by the worker's probe, or a
// datasheet from knowledge/ when no probe is at hand), a region of the reference (kernels, measured time,
// counted work), and where the region sits: compute-bound, memory-bound or
// launch/latency-bound, its speed-of-light time and its headroom, with the
// reason written out for the report (MEASURING.md: speed of light =
// max(flops / peak, bytes / bandwidth)).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/gpu_ceilings.h"
#include "engine/knowledge/gpu_spec.h"
#include "engine/knowledge/recipe.h"

namespace hiera::engine::plan {

// From the worker's probe (JOB_PROTOCOL.md `probe`: measured.copy_gbs,
// measured.gemm_tflops). Non-positive rates are dropped; throws
// std::invalid_argument when copy_gbs is not positive.
GpuCeilings ceilings_from_probe(double copy_gbs, const std::map<std::string, double>& gemm_tflops,
                             const std::string& device_name);
// From a datasheet (knowledge/gpus/*.json), when there is no probe. Throws
// std::invalid_argument when the spec has no memory bandwidth.
GpuCeilings ceilings_from_spec(const knowledge::GpuSpec& spec);
// One line for the report: "probe of NVIDIA H200: 4207 GB/s; bfloat16 806.3,
// float16 771.4, float32 51.0, tf32 416.8 TFLOP/s; 3.00 µs per launch".
std::string describe(const GpuCeilings& ceilings);

// A part of the reference the optimizer can replace: one kernel, a family of
// kernels, an op group, or the whole module. Times and work are per call.
struct Region {
  std::string name;
  std::vector<std::string> kernels;
  double measured_ms = 0.0;
  double flops = 0.0;   // counted (0: not counted)
  double bytes = 0.0;   // the fewest bytes that must cross device memory (0: not counted)
  int launches = 0;     // kernel launches per call
  std::string pattern;  // knowledge::pattern_vocabulary()
  std::string dtype;    // float32, float16, bfloat16, ...
  std::int64_t elements = -1;            // -1: unknown
  std::optional<std::int64_t> last_dim;  // for recipes with a last-dimension condition
  std::string note;     // how the region was formed or its work counted; appended to the reason
};

struct RooflinePoint {
  knowledge::Bottleneck bottleneck = knowledge::Bottleneck::Memory;
  double speed_of_light_ms = 0.0;  // max(flops / peak, bytes / bandwidth)
  // What the planner aims at: the speed of light, except for latency-bound
  // work whose speed of light is below one launch, where it is one launch.
  double bound_ms = 0.0;
  double headroom_ms = 0.0;        // measured - bound, never negative
  double fraction_of_sol = 0.0;    // bound / measured (above 1 when measured faster than light)
  double flop_ms = 0.0;            // flops / peak
  double byte_ms = 0.0;            // bytes / bandwidth
  double launch_ms = 0.0;          // launches x overhead
  std::string compute_dtype;       // whose peak the flops were held against ("" when none)
  bool work_counted = true;        // false: no flops or bytes were counted
  bool faster_than_light = false;  // measured below the speed of light: the counted work or the timing is wrong
  std::string reason;
};

// Places a region: latency-bound when its launches' fixed cost is at least
// half its measured time, or its speed of light is below a tenth of one
// launch; otherwise compute-bound when the flop time exceeds the byte time,
// else memory-bound. `allowed_precision` (numerics.allow) lets a region be
// held against a lower-precision peak: a float32 GEMM with "tf32" allowed is
// measured against the tf32 peak. Throws std::invalid_argument when the
// measured time is not positive.
RooflinePoint place(const Region& region, const GpuCeilings& ceilings,
                    const std::vector<std::string>& allowed_precision = {});

// Patterns assumed compute-bound when no work was counted (gemm, conv, attention, ...).
bool is_compute_pattern(const std::string& pattern);

}  // namespace hiera::engine::plan
