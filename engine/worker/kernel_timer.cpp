#include "engine/worker/kernel_timer.h"

#include <algorithm>
#include <vector>

#include "engine/worker/cuda_failure.h"
#include "engine/worker/kernel_module.h"

namespace hiera::engine::worker {

KernelTimer::KernelTimer(std::size_t l2_bytes, std::chrono::milliseconds run_limit) : run_limit_(run_limit) {
  flush_bytes_ = std::max<std::size_t>(2 * l2_bytes, 8u << 20);
  check_cuda(cudaMalloc(&flush_, flush_bytes_), "allocating the L2 flush buffer");
  if (cudaError_t e = cudaEventCreate(&start_); e != cudaSuccess) {
    cudaFree(flush_);
    check_cuda(e, "creating a timing event");
  }
  if (cudaError_t e = cudaEventCreate(&stop_); e != cudaSuccess) {
    cudaEventDestroy(start_);
    cudaFree(flush_);
    check_cuda(e, "creating a timing event");
  }
}

KernelTimer::~KernelTimer() {
  if (context_abandoned()) return;
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFree(flush_);
}

void KernelTimer::flush_l2() {
  // A different value each time, so no layer can skip the write as redundant.
  flush_value_ = (flush_value_ + 1) & 0xff;
  check_cuda(cudaMemsetAsync(flush_, static_cast<int>(flush_value_), flush_bytes_, stream_), "flushing L2");
}

double KernelTimer::time_one(const Run& run) {
  flush_l2();
  check_cuda(cudaEventRecord(start_, stream_), "recording a timing event");
  run(stream_);
  check_cuda(cudaEventRecord(stop_, stream_), "recording a timing event");
  wait_for_event(stop_, run_limit_, "timed run");
  check_cuda(cudaDeviceSynchronize(), "synchronising after a timed run");
  float ms = 0.0f;
  check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "reading a timing event");
  return static_cast<double>(ms);
}

TimingStats KernelTimer::time(const Run& run, int trials, int warmup) {
  for (int i = 0; i < warmup; ++i) time_one(run);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(trials));
  for (int i = 0; i < trials; ++i) samples.push_back(time_one(run));
  return summarize_timings(std::move(samples));
}

std::pair<TimingStats, TimingStats> KernelTimer::time_interleaved(const Run& a, const Run& b, int trials, int warmup) {
  return interleave([&] { return time_one(a); }, [&] { return time_one(b); }, trials, warmup);
}

std::pair<TimingStats, TimingStats> KernelTimer::interleave(const Sample& a, const Sample& b, int trials, int warmup) {
  for (int i = 0; i < warmup; ++i) {
    a();
    b();
  }
  std::vector<double> samples_a, samples_b;
  samples_a.reserve(static_cast<std::size_t>(trials));
  samples_b.reserve(static_cast<std::size_t>(trials));
  for (int i = 0; i < trials; ++i) {
    if (i % 2 == 0) {
      samples_a.push_back(a());
      samples_b.push_back(b());
    } else {
      samples_b.push_back(b());
      samples_a.push_back(a());
    }
  }
  return {summarize_timings(std::move(samples_a)), summarize_timings(std::move(samples_b))};
}

}  // namespace hiera::engine::worker
