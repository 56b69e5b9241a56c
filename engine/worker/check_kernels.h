#pragma once
// Verification work on the GPU with hiera's own kernels (check_kernels.cu):
// trial inputs generated in device memory, outputs and inputs compared there,
// so only a few counters, and the handful of elements the messages quote,
// cross to the host. The results equal fill_random's values and
// compare_output's / compare_input's on the same data, message for message:
// check_math.h is the one definition of the per-element rules for both.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/worker/cuda_device.h"
#include "engine/worker/input_generator.h"
#include "engine/worker/kernel_module.h"
#include "engine/worker/nvrtc_compiler.h"
#include "engine/worker/output_checks.h"

namespace hiera::engine::worker {

class CheckKernels {
 public:
  // This process's check kernels: compiled on the first call (or read from the
  // compiler's cubin cache) for `device`, then kept until the process exits.
  // Throws CompileError when NVRTC rejects them (a bug in hiera) and
  // CudaFailure when the device cannot take them.
  static const CheckKernels& get(const NvrtcCompiler& compiler, const DeviceInfo& device);

  // Writes `count` elements at device address `out`: exactly what
  // fill_random(type, ..., count, distribution, key, range) writes on the host.
  void generate(ScalarType type, void* out, std::uint64_t count, Distribution distribution, std::uint64_t key,
                const std::optional<std::pair<double, double>>& range) const;
  // compare_output and compare_input over device buffers.
  OutputComparison compare_output(ScalarType type, std::uint64_t count, const void* reference, const void* run1,
                                  const void* run2, const Tolerance& tolerance, bool poisoned) const;
  InputComparison compare_input(ScalarType type, std::uint64_t count, const void* original, const void* after) const;

  CheckKernels(const CheckKernels&) = delete;
  CheckKernels& operator=(const CheckKernels&) = delete;

 private:
  CheckKernels(CompileResult build, int sm_count);
  // Each kernel's module is loaded on first use: a task touches a few types.
  const KernelModule& kernel(const std::string& name_expression) const;
  // Launches over `count` elements on the legacy stream and waits for it.
  void run(const std::string& name_expression, std::uint64_t count, std::vector<void*>& params,
           const std::string& what) const;

  std::string cubin_;
  std::map<std::string, std::string> lowered_names_;
  unsigned max_blocks_;
  void* stats_ = nullptr;  // device memory for one check::CompareStats or check::ChangeStats
  // Jobs run one at a time, so this cache needs no lock.
  mutable std::map<std::string, std::unique_ptr<KernelModule>> modules_;
};

}  // namespace hiera::engine::worker
