#pragma once
// The implementation spaces a run may plan on its device. S2 (CUDA libraries:
// cuBLAS, cuDNN, CUDA graphs) and S3 (custom CUDA kernels) need a CUDA device;
// a run whose worker has none (a CPU run) plans S1, PyTorch operators, only,
// so no proposer is asked for a candidate that cannot run there.
#include <string>

#include "engine/plan/planner.h"

namespace hiera::engine::plan {

// Leaves context.allowed_spaces as they are when context.cuda; else keeps
// only S1 of them (none when the spec allows no S1). Returns the decision to
// record when it removed a space, "" otherwise.
std::string restrict_to_device(PlanContext& context);

}  // namespace hiera::engine::plan
