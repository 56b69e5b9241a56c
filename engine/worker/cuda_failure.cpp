#include "engine/worker/cuda_failure.h"

#include <atomic>

namespace hiera::engine::worker {

namespace {
std::atomic<bool> g_abandoned{false};
}  // namespace

void abandon_context() { g_abandoned = true; }
bool context_abandoned() { return g_abandoned; }

std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

bool is_sticky_cuda_error(int error) {
  switch (static_cast<cudaError_t>(error)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void check_cuda(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return;
  const std::string text = what + ": " + cuda_error_text(error);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw CudaFailure(CudaFailure::Kind::OutOfMemory, "out of memory: " + text, false);
  }
  bool lost = is_sticky_cuda_error(error);
  if (!lost) {
    cudaGetLastError();  // a non-sticky error is cleared by reading it
    lost = cudaDeviceSynchronize() != cudaSuccess;  // ...unless the context itself is broken
  }
  if (lost) abandon_context();
  throw CudaFailure(CudaFailure::Kind::Runtime, text, lost);
}

}  // namespace hiera::engine::worker
