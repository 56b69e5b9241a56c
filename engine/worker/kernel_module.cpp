#include "engine/worker/kernel_module.h"

#include <thread>

#include "engine/worker/cuda_failure.h"
#include "engine/worker/driver_api.h"

namespace hiera::engine::worker {

namespace {

[[noreturn]] void throw_driver(CUresult result, const std::string& what) {
  const auto& api = DriverApi::get();
  const std::string text = what + ": " + api.error_text(result);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) throw CudaFailure(CudaFailure::Kind::OutOfMemory, "out of memory: " + text, false);
  bool lost = is_sticky_cuda_error(static_cast<int>(result));
  if (!lost) {
    cudaGetLastError();
    lost = cudaDeviceSynchronize() != cudaSuccess;
  }
  if (lost) abandon_context();
  throw CudaFailure(CudaFailure::Kind::Runtime, text, lost);
}

template <typename Query>
void wait_until_done(Query query, std::chrono::milliseconds limit, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + limit;
  for (;;) {
    const cudaError_t state = query();
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) check_cuda(state, what);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      // The kernel cannot be stopped from here; only the end of this process
      // frees the GPU, so the context counts as lost.
      abandon_context();
      throw CudaFailure(CudaFailure::Kind::Timeout,
                        what + ": still running after " + std::to_string(limit.count()) + " ms", true);
    }
    // Spin briefly (short kernels), then sleep so a long one does not burn a core.
    if (now - start > std::chrono::milliseconds(2)) std::this_thread::sleep_for(std::chrono::microseconds(200));
    else std::this_thread::yield();
  }
}

}  // namespace

KernelModule::KernelModule(const std::string& cubin, const std::string& mangled_name, const std::string& label)
    : label_(label) {
  const auto& api = DriverApi::get();
  if (CUresult r = api.module_load_data(&module_, cubin.data()); r != CUDA_SUCCESS) {
    module_ = nullptr;
    throw_driver(r, "loading the " + label + "'s cubin");
  }
  if (CUresult r = api.module_get_function(&function_, module_, mangled_name.c_str()); r != CUDA_SUCCESS) {
    api.module_unload(module_);
    module_ = nullptr;
    throw_driver(r, "finding the " + label + " kernel '" + mangled_name + "'");
  }
}

KernelModule::~KernelModule() {
  if (module_ && !context_abandoned()) DriverApi::get().module_unload(module_);
}

void KernelModule::launch(const LaunchDims& dims, std::vector<void*>& params, cudaStream_t stream) const {
  const auto& api = DriverApi::get();
  // More than 48 KiB of dynamic shared memory must be asked for explicitly.
  if (dims.shared_bytes > shared_limit_set_) {
    if (CUresult r = api.func_set_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(dims.shared_bytes));
        r != CUDA_SUCCESS) {
      throw_driver(r, "allowing " + std::to_string(dims.shared_bytes) + " bytes of shared memory for the " + label_);
    }
    shared_limit_set_ = dims.shared_bytes;
  }
  const CUresult r = api.launch_kernel(function_, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1],
                                       dims.block[2], dims.shared_bytes, reinterpret_cast<CUstream>(stream),
                                       params.data(), nullptr);
  if (r != CUDA_SUCCESS) throw_driver(r, "launching the " + label_);
}

void wait_for_stream(cudaStream_t stream, std::chrono::milliseconds limit, const std::string& what) {
  wait_until_done([stream] { return cudaStreamQuery(stream); }, limit, what);
}

void wait_for_event(cudaEvent_t event, std::chrono::milliseconds limit, const std::string& what) {
  wait_until_done([event] { return cudaEventQuery(event); }, limit, what);
}

}  // namespace hiera::engine::worker
