#include "engine/worker/driver_api.h"

#include <stdexcept>

#include <cuda_runtime_api.h>

namespace hiera::engine::worker {

namespace {

template <typename Fn>
void load(Fn& fn, const char* symbol, unsigned int version) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error = cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &status);
  if (error != cudaSuccess || status != cudaDriverEntryPointSuccess || address == nullptr) {
    throw std::runtime_error(std::string("the CUDA driver does not provide ") + symbol + " (version " +
                             std::to_string(version) + "): " + cudaGetErrorString(error));
  }
  fn = reinterpret_cast<Fn>(address);
}

DriverApi load_all() {
  DriverApi api;
  load(api.get_error_name, "cuGetErrorName", 6000);
  load(api.get_error_string, "cuGetErrorString", 6000);
  load(api.module_load_data, "cuModuleLoadData", 2000);
  load(api.module_unload, "cuModuleUnload", 2000);
  load(api.module_get_function, "cuModuleGetFunction", 2000);
  load(api.func_set_attribute, "cuFuncSetAttribute", 9000);
  load(api.launch_kernel, "cuLaunchKernel", 4000);
  load(api.memset_d16, "cuMemsetD16", 3020);
  return api;
}

}  // namespace

const DriverApi& DriverApi::get() {
  static const DriverApi api = load_all();  // a throw leaves it unset: the next call tries again
  return api;
}

std::string DriverApi::error_text(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_error_name) get_error_name(result, &name);
  if (get_error_string) get_error_string(result, &text);
  return std::string(name ? name : "CUDA_ERROR_" + std::to_string(static_cast<int>(result))) + ": " +
         (text ? text : "unknown driver error");
}

}  // namespace hiera::engine::worker
