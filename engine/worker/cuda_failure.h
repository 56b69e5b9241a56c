#pragma once
// A CUDA failure during a job, classified for the reply: out of memory (the
// job fails, the worker goes on), a timeout, or another runtime error; and
// whether the CUDA context survived. After an illegal address, a launch
// failure or a hung kernel the context is unusable, so the worker replies and
// exits for the engine to restart it.
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace hiera::engine::worker {

class CudaFailure : public std::runtime_error {
 public:
  enum class Kind { Runtime, OutOfMemory, Timeout };
  CudaFailure(Kind kind, const std::string& message, bool context_lost)
      : std::runtime_error(message), kind_(kind), context_lost_(context_lost) {}
  Kind kind() const { return kind_; }
  bool context_lost() const { return context_lost_; }

 private:
  Kind kind_;
  bool context_lost_;
};

// "cudaErrorIllegalAddress: an illegal memory access was encountered".
std::string cuda_error_text(cudaError_t error);
// Errors after which the CUDA context cannot be used again (the numeric values
// are shared by the runtime's cudaError_t and the driver's CUresult).
bool is_sticky_cuda_error(int error);
// Once a kernel is known to be hung or the context broken, nothing may wait on
// the GPU again: cudaFree and module unloads synchronise, and would block the
// reply forever. Cleanup code checks this and leaks instead; the process exits
// right after its reply and the driver reclaims everything.
void abandon_context();
bool context_abandoned();

// Throws a classified CudaFailure unless error is cudaSuccess; `what` names the
// step ("launching the candidate"). Clears a non-sticky error so the next call
// does not see it.
void check_cuda(cudaError_t error, const std::string& what);

}  // namespace hiera::engine::worker
