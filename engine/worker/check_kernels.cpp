#include "engine/worker/check_kernels.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>

#include <cuda_runtime_api.h>

#include "engine/worker/check_math.h"
#include "engine/worker/check_program.h"
#include "engine/worker/cuda_failure.h"

namespace hiera::engine::worker {

namespace {

// Whole warps (the kernels reduce per warp), and enough blocks to fill every
// SM several times over; the grid-stride loops cover the rest.
constexpr unsigned kThreads = 256;
constexpr unsigned kBlocksPerSm = 8;
// A pass over even a 100 GB buffer takes well under a second: past this the
// GPU is wedged, and the job fails with `timeout` as a hung candidate would.
constexpr std::chrono::milliseconds kCheckLimit{60000};

// One element's bits, copied from device memory.
std::uint64_t fetch(const void* buffer, std::size_t width, std::uint64_t index) {
  std::uint64_t bits = 0;
  check_cuda(cudaMemcpy(&bits, static_cast<const std::byte*>(buffer) + index * width, width, cudaMemcpyDeviceToHost),
             "reading an element for a message");
  return bits;
}

}  // namespace

const CheckKernels& CheckKernels::get(const NvrtcCompiler& compiler, const DeviceInfo& device) {
  static std::mutex mutex;
  // Never destroyed: unloading modules at exit would wait on a context that may
  // be lost, and the driver frees them with the process anyway.
  static CheckKernels* kernels = nullptr;
  const std::lock_guard lock(mutex);
  if (!kernels) {
    CompileResult build = compiler.compile(check_compile_request(device.arch()));
    if (!build.ok) throw CompileError("hiera's check kernels do not compile for " + device.arch() + ":\n" + build.log);
    kernels = new CheckKernels(std::move(build), device.sm_count);
  }
  return *kernels;
}

CheckKernels::CheckKernels(CompileResult build, int sm_count)
    : cubin_(std::move(build.cubin)),
      lowered_names_(std::move(build.lowered_names)),
      max_blocks_(static_cast<unsigned>(std::max(sm_count, 1)) * kBlocksPerSm) {
  check_cuda(cudaMalloc(&stats_, sizeof(check::CompareStats)), "allocating the verification counters");
}

const KernelModule& CheckKernels::kernel(const std::string& name_expression) const {
  auto& module = modules_[name_expression];
  if (!module) {
    module = std::make_unique<KernelModule>(cubin_, lowered_names_.at(name_expression), "check kernel " + name_expression);
  }
  return *module;
}

void CheckKernels::run(const std::string& name_expression, std::uint64_t count, std::vector<void*>& params,
                       const std::string& what) const {
  LaunchDims dims;
  dims.block = {kThreads, 1, 1};
  dims.grid = {static_cast<unsigned>(std::clamp<std::uint64_t>((count + kThreads - 1) / kThreads, 1, max_blocks_)), 1, 1};
  kernel(name_expression).launch(dims, params, nullptr);
  wait_for_stream(nullptr, kCheckLimit, what);
}

void CheckKernels::generate(ScalarType type, void* out, std::uint64_t count, Distribution distribution,
                            std::uint64_t key, const std::optional<std::pair<double, double>>& range) const {
  if (count == 0) return;
  unsigned long long elements = count;
  int distribution_code = static_cast<int>(distribution);
  unsigned long long generator_key = key;
  int has_range = range ? 1 : 0;
  double lo = range ? range->first : 0.0;
  double hi = range ? range->second : 0.0;
  std::vector<void*> params{&out, &elements, &distribution_code, &generator_key, &has_range, &lo, &hi};
  run(check_generate_kernel(type), count, params, "generating trial inputs on the GPU");
}

OutputComparison CheckKernels::compare_output(ScalarType type, std::uint64_t count, const void* reference,
                                              const void* run1, const void* run2, const Tolerance& tolerance,
                                              bool poisoned) const {
  check::CompareStats stats = check::empty_compare_stats();
  if (count > 0) {
    check_cuda(cudaMemcpy(stats_, &stats, sizeof stats, cudaMemcpyHostToDevice), "resetting the verification counters");
    unsigned long long elements = count;
    double atol = tolerance.atol;
    double rtol = tolerance.rtol;
    int poisoned_code = poisoned ? 1 : 0;
    void* stats_ptr = stats_;
    std::vector<void*> params{&reference, &run1, &run2, &elements, &atol, &rtol, &poisoned_code, &stats_ptr};
    run(check_compare_kernel(type), count, params, "comparing outputs on the GPU");
    check_cuda(cudaMemcpy(&stats, stats_, sizeof stats, cudaMemcpyDeviceToHost), "reading the verification counters");
  }
  const std::size_t width = size_of(type);
  return describe_output(type, count, stats, [&](std::uint64_t i) {
    return OutputSample{fetch(reference, width, i), fetch(run1, width, i), fetch(run2, width, i)};
  });
}

InputComparison CheckKernels::compare_input(ScalarType type, std::uint64_t count, const void* original,
                                            const void* after) const {
  check::ChangeStats stats = check::empty_change_stats();
  if (count > 0) {
    check_cuda(cudaMemcpy(stats_, &stats, sizeof stats, cudaMemcpyHostToDevice), "resetting the verification counters");
    unsigned long long elements = count;
    void* stats_ptr = stats_;
    std::vector<void*> params{&original, &after, &elements, &stats_ptr};
    run(check_changed_kernel(type), count, params, "comparing inputs on the GPU");
    check_cuda(cudaMemcpy(&stats, stats_, sizeof stats, cudaMemcpyDeviceToHost), "reading the verification counters");
  }
  const std::size_t width = size_of(type);
  return describe_input(type, stats, [&](std::uint64_t i) {
    return InputSample{fetch(original, width, i), fetch(after, width, i)};
  });
}

}  // namespace hiera::engine::worker
