#include "engine/worker/cuda_device.h"

#include <cstdio>

#include <cuda_runtime_api.h>

namespace hiera::engine::worker {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

namespace {

std::string uuid_text(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  cudaDeviceGetAttribute(&value, attr, device);
  return value;
}

}  // namespace

std::optional<DeviceInfo> CudaDevice::open(int index, std::string* reason) {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    *reason = cudaGetErrorString(error);
    cudaGetLastError();
    return std::nullopt;
  }
  if (index < 0 || index >= count) {
    *reason = "device " + std::to_string(index) + " was asked for, and " + std::to_string(count) + " are visible";
    return std::nullopt;
  }
  if (cudaError_t error = cudaSetDevice(index); error != cudaSuccess) {
    *reason = cudaGetErrorString(error);
    return std::nullopt;
  }
  // Create the primary context now, so the first job does not pay for it and
  // the driver API (sharing that context) can be used at once.
  if (cudaError_t error = cudaFree(nullptr); error != cudaSuccess) {
    *reason = cudaGetErrorString(error);
    return std::nullopt;
  }
  cudaDeviceProp prop{};
  if (cudaError_t error = cudaGetDeviceProperties(&prop, index); error != cudaSuccess) {
    *reason = cudaGetErrorString(error);
    return std::nullopt;
  }
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.sm_clock_mhz = attribute(cudaDevAttrClockRate, index) / 1000;
  info.mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, index) / 1000;
  info.memory_bytes = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  info.uuid = uuid_text(prop.uuid);
  return info;
}

}  // namespace hiera::engine::worker
