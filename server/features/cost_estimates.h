#pragma once
// The cost estimates the features show, under the server's names; they are
// editor-neutral and live in the engine facade (engine/facade/cost_estimates.h).
#include "engine/facade/cost_estimates.h"

namespace hiera::server {

using engine::facade::CostEstimate;
using engine::facade::kernel_estimate;
using engine::facade::module_estimate;
using engine::facade::op_estimate;
using engine::facade::work_estimate;

}  // namespace hiera::server
