#pragma once
// How full a launch keeps an SM, estimated from what the source shows: the
// threads per block (and a constant dynamic shared-memory size) against the
// GPU's limits on warps and resident blocks per SM. Registers are not known
// before compiling, so this is an upper bound: the occupancy the block shape
// allows.
#include <cstdint>
#include <optional>
#include <string>

#include "engine/facade/knowledge.h"

namespace hiera::server {

struct LaunchOccupancy {
  std::int64_t blocks_per_sm = 0;     // resident blocks per SM
  std::int64_t warps_per_block = 0;   // threads rounded up to whole warps
  std::int64_t max_warps_per_sm = 0;
  double fraction = 0;                // resident warps / max_warps_per_sm
  std::string limited_by;             // "warps", "blocks per SM" or "shared memory"
};

// The most blocks an SM of this compute capability ("9.0") holds at once.
std::int64_t max_blocks_per_sm(const std::string& compute_capability);

// nullopt when the GPU's limits are unknown or the block cannot launch
// (no threads, more than 1024, more shared memory than an SM has).
std::optional<LaunchOccupancy> launch_occupancy(const engine::knowledge::GpuSpec& gpu, std::int64_t threads_per_block,
                                                std::int64_t shared_bytes = 0);

}  // namespace hiera::server
