#pragma once
// Reading the worker's `profile` result (JOB_PROTOCOL.md) into the typed
// KernelProfile of engine/common/kernel_profile.h: the one place that reads
// its kernels and metrics. Strict about what the planner cannot do without (a
// name, calls, total_ns) and lenient about the rest (grid and block may be
// null: CPU operators, memcpy; mean_ns may be missing).
#include <nlohmann/json.hpp>

#include "engine/common/kernel_profile.h"

namespace hiera::engine::eval {

// Throws MalformedResult (job_results.h) naming the field:
// "profile.kernels[2].total_ns must be a non-negative integer".
KernelProfile read_kernel_profile(const nlohmann::json& result);

}  // namespace hiera::engine::eval
