#pragma once
// The atol and rtol an output is checked with when the spec names none for
// its element type: the spec's defaults (engine/spec), the task sent to the
// worker and the worker's own fallback read this one figure. The Python
// runner's copy is hiera_runner/verify.py's DEFAULT_TOLERANCE.
#include <string_view>

namespace hiera::engine {

inline constexpr double kDefaultTolerance = 1e-4;        // float32, float64 and integer outputs
inline constexpr double kHalfPrecisionTolerance = 1e-2;  // float16 and bfloat16

constexpr double default_tolerance(std::string_view dtype) {
  return dtype == "float16" || dtype == "bfloat16" ? kHalfPrecisionTolerance : kDefaultTolerance;
}

}  // namespace hiera::engine
