#pragma once
// A compiled kernel loaded into the current context and launched through the
// driver API, plus a bounded wait: a kernel that never finishes becomes a
// `timeout` failure instead of a worker that never answers.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "engine/worker/launch_contract.h"

namespace hiera::engine::worker {

class KernelModule {
 public:
  // Loads the cubin and finds `mangled_name` in it; throws CudaFailure.
  KernelModule(const std::string& cubin, const std::string& mangled_name, const std::string& label);
  ~KernelModule();
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;

  // Enqueues one launch; `params` holds a pointer to each argument's bytes.
  // Launch-time errors (bad geometry, too many resources) throw CudaFailure.
  void launch(const LaunchDims& dims, std::vector<void*>& params, cudaStream_t stream) const;
  const std::string& label() const { return label_; }

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string label_;  // "reference" or "candidate", for messages
  mutable unsigned shared_limit_set_ = 48 * 1024;
};

// Waits for everything enqueued on `stream` for at most `limit`; throws a
// CudaFailure (timeout, context lost) past it, or the kernel's own error.
void wait_for_stream(cudaStream_t stream, std::chrono::milliseconds limit, const std::string& what);
// The same for one recorded event.
void wait_for_event(cudaEvent_t event, std::chrono::milliseconds limit, const std::string& what);

}  // namespace hiera::engine::worker
