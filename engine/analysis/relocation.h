#pragma once
// Moving findings by a byte distance: a function or module whose text is
// unchanged but now starts elsewhere keeps its findings, shifted
// (analysis.cpp's reuse across edits). Every span a finding holds moves.
#include <cstdint>

#include "engine/analysis/cuda_findings.h"
#include "engine/analysis/hint.h"
#include "engine/analysis/torch_findings.h"

namespace hiera::engine::analysis {

void relocate(Span& span, std::int64_t delta);
void relocate(CudaFunction& function, std::int64_t delta);
void relocate(LaunchSite& launch, std::int64_t delta);
void relocate(TorchModule& module, std::int64_t delta);
void relocate(Hint& hint, std::int64_t delta);

}  // namespace hiera::engine::analysis
