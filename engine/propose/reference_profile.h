#pragma once
// What the prompt's "profile" part says about the reference, as typed values:
// its time per call and device, the plan's regions with where each sits on the
// roofline, and the worker's profile (hardware counters when it had them, the
// kernels it ran). The optimizer fills it; prompt_builder.h's profile_text
// writes it as the model reads it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hiera::engine::propose {

struct ReferenceProfile {
  double reference_ms = 0.0;  // median per call
  std::string gpu;            // the device that measured, or "cpu"
  struct Region {
    std::string name;
    std::string roofline;  // the region's roofline reason ("memory-bound: ...")
  };
  std::vector<Region> regions;  // in the plan's order
  struct Counters {             // CUPTI, percent of peak
    double dram_throughput_pct = 0.0;
    double sm_throughput_pct = 0.0;
    double achieved_occupancy_pct = 0.0;
  };
  std::optional<Counters> counters;  // none when the worker could not read them
  struct Kernel {
    std::string name;
    std::int64_t calls = 0;
    double mean_ns = 0.0;
  };
  std::vector<Kernel> kernels;  // as the worker listed them
};

}  // namespace hiera::engine::propose
