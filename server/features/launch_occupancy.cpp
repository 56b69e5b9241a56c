#include "server/features/launch_occupancy.h"

#include <algorithm>

namespace hiera::server {

namespace {

constexpr std::int64_t kWarp = 32;
constexpr std::int64_t kMaxThreadsPerBlock = 1024;

}  // namespace

std::int64_t max_blocks_per_sm(const std::string& cc) {
  // CUDA C++ Programming Guide, "Technical Specifications per Compute Capability".
  if (cc == "7.5" || cc == "8.6" || cc == "8.7") return 16;
  if (cc == "8.9") return 24;
  return 32;  // 7.0, 8.0, 9.0, 10.0
}

std::optional<LaunchOccupancy> launch_occupancy(const engine::knowledge::GpuSpec& gpu, std::int64_t threads,
                                                std::int64_t shared_bytes) {
  if (threads <= 0 || threads > kMaxThreadsPerBlock || gpu.max_threads_per_sm < kWarp) return std::nullopt;
  LaunchOccupancy out;
  out.warps_per_block = (threads + kWarp - 1) / kWarp;
  out.max_warps_per_sm = gpu.max_threads_per_sm / kWarp;
  out.blocks_per_sm = out.max_warps_per_sm / out.warps_per_block;
  out.limited_by = "warps";
  if (const auto cap = max_blocks_per_sm(gpu.compute_capability); cap < out.blocks_per_sm) {
    out.blocks_per_sm = cap;
    out.limited_by = "blocks per SM";
  }
  if (shared_bytes > 0) {
    if (gpu.smem_per_sm_bytes <= 0 || shared_bytes > gpu.smem_per_sm_bytes) return std::nullopt;
    if (const auto fit = gpu.smem_per_sm_bytes / shared_bytes; fit < out.blocks_per_sm) {
      out.blocks_per_sm = fit;
      out.limited_by = "shared memory";
    }
  }
  out.fraction = static_cast<double>(out.blocks_per_sm * out.warps_per_block) / static_cast<double>(out.max_warps_per_sm);
  return out;
}

}  // namespace hiera::server
