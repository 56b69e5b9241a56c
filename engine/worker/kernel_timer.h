#pragma once
// Times GPU work the way MEASURING.md asks: CUDA events around each run,
// warm-up first, L2 flushed before every timed run (a write of twice the L2
// size), device-wide synchronisation before the events are read (work on any
// stream counts), and two subjects interleaved so drift hits both alike.
#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>

#include <cuda_runtime_api.h>

#include "engine/worker/timing_stats.h"

namespace hiera::engine::worker {

class KernelTimer {
 public:
  using Run = std::function<void(cudaStream_t)>;
  // One timed sample of a subject, however it is taken (here, or in another process).
  using Sample = std::function<double()>;

  // Allocates the flush buffer (2 x l2_bytes); throws CudaFailure.
  KernelTimer(std::size_t l2_bytes, std::chrono::milliseconds run_limit);
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

  TimingStats time(const Run& run, int trials, int warmup = 3);
  // Alternates the order (a b, b a, ...) so neither always runs right after a flush's tail.
  std::pair<TimingStats, TimingStats> time_interleaved(const Run& a, const Run& b, int trials, int warmup = 3);
  // The same order over two samplers: one subject may be timed elsewhere.
  static std::pair<TimingStats, TimingStats> interleave(const Sample& a, const Sample& b, int trials, int warmup = 3);
  // One timed run: flush, start event, the run, stop event, device synchronised; milliseconds.
  double time_one(const Run& run);

 private:
  void flush_l2();

  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  unsigned flush_value_ = 0;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  cudaStream_t stream_ = nullptr;  // the legacy default stream: every launch and copy serialises on it
  std::chrono::milliseconds run_limit_;
};

}  // namespace hiera::engine::worker
