#pragma once
// The device and its measured ceilings (MEASURING.md, "Ceilings first"): a
// large device-to-device copy for bandwidth and 8192^3 cuBLAS GEMMs per dtype
// for compute, on random data. Measured once per device and cached on disk
// by the device's UUID (re-measured when the driver changes, or on refresh).
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/common/gpu_ceilings.h"
#include "engine/worker/cuda_device.h"

namespace hiera::engine::worker {

// The probe's result JSON (JOB_PROTOCOL.md `probe`), measuring only when the
// cache has nothing for this device and driver, or when `refresh`. Throws
// CudaFailure when a measurement fails.
nlohmann::json probe_device(const DeviceInfo& device, const std::filesystem::path& cache_dir, bool refresh);

GpuCeilings ceilings_from_probe(const nlohmann::json& probe);

}  // namespace hiera::engine::worker
