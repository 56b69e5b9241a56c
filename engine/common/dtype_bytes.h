#pragma once
// Bytes per element of a torch dtype named as the runner and the analysis write it ("float32",
// "bfloat16"): the one table the static estimates and the captured graph's speed-of-light bounds share.
#include <string_view>

namespace hiera::engine {

// float32 4, float16/bfloat16/int16 2, float64/int64/complex64 8, int8/uint8/bool/float8 1; 4 when unknown.
int dtype_bytes(std::string_view dtype);

}  // namespace hiera::engine
