#pragma once
// Evaluation of CUDA kernel tasks ("kind": "cuda"): every verification rule
// of JOB_PROTOCOL.md (trials over seeds and distributions plus the second
// shape, tolerances, NaN/Inf, poisoned outputs, input mutation, two runs bit
// for bit, static checks, speed of light), then interleaved timing; and the
// per-kernel profile of one side.
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/worker/cuda_device.h"
#include "engine/worker/device_probe.h"
#include "engine/worker/nvrtc_compiler.h"

namespace hiera::engine::worker {

// Thrown out of profile() when the CUDA context was lost: the worker answers
// with an error and exits for the engine to restart it.
class ContextLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NativeEvaluator {
 public:
  // `ceilings` measures or reads the probe; nullopt when that fails (the
  // speed-of-light rule is then skipped, with a log line).
  NativeEvaluator(const DeviceInfo& device, const NvrtcCompiler& compiler, std::function<std::optional<GpuCeilings>()> ceilings);

  // params {"task", "trials", "timing_trials", "seed", "launch_timeout_ms"} -> Evaluation JSON.
  // A result with "restart": true means the CUDA context was lost.
  // Throws protocol::RpcError (InvalidParams) for a task that cannot run at all.
  nlohmann::json evaluate(const nlohmann::json& params) const;
  // params {"task", "which": "reference"|"candidate"} -> {"kernels", "metrics"}.
  nlohmann::json profile(const nlohmann::json& params) const;

 private:
  const DeviceInfo& device_;
  const NvrtcCompiler& compiler_;
  std::function<std::optional<GpuCeilings>()> ceilings_;
};

}  // namespace hiera::engine::worker
