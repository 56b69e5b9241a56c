#pragma once
// The few CUDA driver API functions the worker needs (loading cubins,
// launching kernels), reached through the runtime's
// cudaGetDriverEntryPointByVersion instead of linking libcuda: the binary then
// starts, answers hello and compiles on machines without a driver.
#include <string>

#include <cuda.h>
#include <cudaTypedefs.h>

namespace hiera::engine::worker {

struct DriverApi {
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuMemsetD16_v3020 memset_d16 = nullptr;

  // Loads every entry point once (after the runtime has a device); throws
  // std::runtime_error naming the first one the driver does not provide.
  static const DriverApi& get();
  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
  std::string error_text(CUresult result) const;
};

}  // namespace hiera::engine::worker
