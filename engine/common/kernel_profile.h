#pragma once
// A side's profile as the worker measured it (engine/eval/JOB_PROTOCOL.md,
// `profile`), as typed values: the kernels one run of the reference or the
// candidate launched, with grid, block, calls and GPU time, and the hardware
// counters when the machine allowed them. engine/eval fills it from the
// worker's JSON (ProfileResult::profile, job_results.h); engine/plan groups
// its kernels into regions and the optimizer shows it in the prompt, neither
// reading JSON.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hiera::engine {

struct ProfiledKernel {
  std::string name;
  std::optional<std::array<std::int64_t, 3>> grid, block;  // none for CPU operators, memcpy
  std::int64_t calls = 0;     // launches over all profiled calls of the reference
  std::int64_t total_ns = 0;  // GPU time over all of them
  std::int64_t mean_ns = 0;   // 0 when the worker sent none
};

// CUPTI's range profiler, percent of peak, weighted by each launch's duration.
struct ProfileCounters {
  double dram_throughput_pct = 0.0;
  double sm_throughput_pct = 0.0;
  double achieved_occupancy_pct = 0.0;
};

struct KernelProfile {
  std::vector<ProfiledKernel> kernels;  // in the worker's order
  std::optional<ProfileCounters> counters;  // none when the worker could not read them
  std::string metrics_unavailable;          // then the worker's reason, when it gave one
};

}  // namespace hiera::engine
