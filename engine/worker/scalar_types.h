#pragma once
// The element types a launch contract may name, their sizes, and host-side
// conversions (fp16 and bf16 have no portable C++ type before C++23), so the
// evaluator can generate, poison and compare any buffer as raw bytes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hiera::engine::worker {

enum class ScalarType { Float32, Float16, BFloat16, Float64, Int32, Int64, UInt8 };

std::optional<ScalarType> parse_scalar_type(std::string_view name);
const char* to_string(ScalarType type);
std::size_t size_of(ScalarType type);
bool is_floating(ScalarType type);

// IEEE binary16 and bfloat16, rounding to nearest even (NaN stays NaN).
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bits);

// One element at `element` (unaligned access is fine) read or written as a double.
double load_as_double(ScalarType type, const std::byte* element);
// Integers are rounded toward zero and saturated to the type's range.
void store_from_double(ScalarType type, double value, std::byte* element);

}  // namespace hiera::engine::worker
