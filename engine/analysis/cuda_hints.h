#pragma once
// The CUDA hint rules (hint_rules.h has their ids, explanations and recipes):
// uncoalesced global accesses, read-only pointers without const/__restrict__,
// shared-memory bank conflicts, atomics in loops, block sizes, missing bounds
// checks, double precision in loops, and launches in a loop that could be one.
#include <string_view>
#include <vector>

#include "engine/analysis/cuda_scanner.h"
#include "engine/analysis/hint.h"

namespace hiera::engine::analysis {

// The hints of one function, its launches' included, in source order. Its
// body must have been walked (scan_cuda_body).
std::vector<Hint> cuda_hints(std::string_view source, const CudaScan& scan, std::size_t function);

// cuda.grid_overrun, from the file's findings: a chevron launch whose grid is
// `(n + a) / b` (inline or through a variable) of a kernel whose own hints
// include cuda.missing_bounds_check. `functions` in source order, `hints`
// with their final spans. Computed after every function's hints, so a reused
// launcher follows its kernel's edits.
std::vector<Hint> launch_overrun_hints(std::string_view source, const std::vector<CudaFunction>& functions,
                                       const std::vector<LaunchSite>& launches, const std::vector<Hint>& hints);

}  // namespace hiera::engine::analysis
