#pragma once
// One GPU's datasheet figures (knowledge/gpus/*.json): the roofline the planner
// uses when no probe is at hand, and the yardstick probes are checked against.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace hiera::engine::knowledge {

struct GpuSpec {
  std::string id;                       // "h200"
  std::string name;                     // "NVIDIA H200 (SXM, 141 GB)"
  std::vector<std::string> match;       // substrings of CUDA device names, e.g. {"H200"}
  std::string compute_capability;       // "9.0"
  int sm_count = 0;
  double memory_bandwidth_gbs = 0;      // peak HBM/GDDR, GB/s
  std::int64_t memory_bytes = 0, l2_bytes = 0, smem_per_sm_bytes = 0, smem_per_block_optin_bytes = 0;
  int max_threads_per_sm = 0;
  double boost_clock_mhz = 0;
  std::map<std::string, double> peak_tflops;  // dense: float32, tf32, float16, bfloat16, float64, int8
  std::string source;                   // where the figures come from (datasheet name)
};

// A knowledge/gpus/*.json object -> GpuSpec. Every field is required; throws
// FieldError naming the first missing, mistyped, out-of-range or unknown one.
GpuSpec gpu_spec_from_json(const nlohmann::json& value);

}  // namespace hiera::engine::knowledge
