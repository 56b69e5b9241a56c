#pragma once
// The GPU this worker serves: opened once through the CUDA runtime, or the
// reason there is none ("no CUDA device: ..."), which hello reports as
// cuda:false and GPU jobs as a JSON-RPC error. Opening needs no libcuda at
// link time; without a driver the runtime simply reports an error.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  std::size_t memory_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t smem_per_block_optin = 0;
  int driver_version = 0;   // 13000 for 13.0
  int runtime_version = 0;
  std::string uuid;         // "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it

  std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

// "13.0" from 13000.
std::string cuda_version_text(int version);

class CudaDevice {
 public:
  // Selects device `index` and creates its primary context; nullopt with
  // *reason set when there is no usable device.
  static std::optional<DeviceInfo> open(int index, std::string* reason);
};

}  // namespace hiera::engine::worker
