#pragma once
// Per-kernel activity of a region of GPU work through CUPTI's activity API
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): every kernel that ran, with its
// grid, block and duration, whichever library or stream launched it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

struct KernelActivity {
  std::string name;  // demangled where possible
  std::array<std::int32_t, 3> grid{};
  std::array<std::int32_t, 3> block{};
  std::uint64_t duration_ns = 0;
};

// One trace at a time (CUPTI's activity buffers are process-wide).
class CuptiTracer {
 public:
  CuptiTracer();   // starts recording; throws std::runtime_error when CUPTI refuses
  ~CuptiTracer();  // stops recording if stop() was not called
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Synchronises the device, flushes CUPTI's buffers and returns what ran.
  std::vector<KernelActivity> stop();

 private:
  bool running_ = false;
};

// The protocol's "kernels" list: one entry per kernel name (with the grid and
// block of its first launch), calls, total_ns and mean_ns, longest first.
nlohmann::json summarize_kernels(const std::vector<KernelActivity>& activities);

}  // namespace hiera::engine::worker
