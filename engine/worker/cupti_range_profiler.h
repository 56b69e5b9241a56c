#pragma once
// Hardware metrics of a region of GPU work through CUPTI's Range Profiler
// API (cupti_range_profiler.h with the profiler host API of
// cupti_profiler_host.h, both in libcupti since CUDA 12.6; libcupti loads its
// metric library libnvperf_host.so at run time). Auto range (one range per
// kernel launch) with kernel replay: CUPTI saves device memory, runs each
// kernel once per pass the metrics need and restores memory in between, so
// the region's kernels must be re-runnable, as a profiled side is.
//
// Never throws for CUPTI: every refusal (restricted counters, a profiler
// already holding them, an unsupported device, libnvperf_host missing) comes
// back as MetricsOutcome::unavailable. Only the region's own failures leave:
// a CudaFailure that lost the context is rethrown untouched (CUPTI is then not
// called again); any other failure of the region becomes a reason too.
//
// Call only once every CuptiTracer has stopped: activity tracing and the
// profiler must not overlap (the replays would show up in the trace).
#include <functional>

#include "engine/worker/cupti_metrics.h"

namespace hiera::engine::worker {

// Runs `region` (it launches the kernels and waits for them) exactly once
// under the profiler, on the calling thread's current CUDA context.
MetricsOutcome collect_hardware_metrics(const std::function<void()>& region);

}  // namespace hiera::engine::worker
