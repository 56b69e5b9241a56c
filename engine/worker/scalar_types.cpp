#include "engine/worker/scalar_types.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/common/kernel_args.h"

namespace hiera::engine::worker {

namespace {

// ScalarType's enumerators are in the order of engine::kElementTypeNames.
constexpr bool named(ScalarType type, std::string_view name) {
  return engine::kElementTypeNames[static_cast<std::size_t>(type)] == name;
}
static_assert(engine::kElementTypeNames.size() == 7 && named(ScalarType::Float32, "float32") &&
              named(ScalarType::Float16, "float16") && named(ScalarType::BFloat16, "bfloat16") &&
              named(ScalarType::Float64, "float64") && named(ScalarType::Int32, "int32") &&
              named(ScalarType::Int64, "int64") && named(ScalarType::UInt8, "uint8"));

}  // namespace

std::optional<ScalarType> parse_scalar_type(std::string_view name) {
  const auto index = engine::element_type_index(name);
  if (!index) return std::nullopt;
  return static_cast<ScalarType>(*index);
}

const char* to_string(ScalarType type) {
  const auto index = static_cast<std::size_t>(type);
  return index < engine::kElementTypeNames.size() ? engine::kElementTypeNames[index] : "?";
}

std::size_t size_of(ScalarType type) {
  switch (type) {
    case ScalarType::Float32: return 4;
    case ScalarType::Float16: return 2;
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float64: return 8;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::UInt8: return 1;
  }
  return 0;
}

bool is_floating(ScalarType type) {
  return type == ScalarType::Float32 || type == ScalarType::Float16 || type == ScalarType::BFloat16 ||
         type == ScalarType::Float64;
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN; keep a quiet NaN a NaN
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: Inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit, round to nearest even.
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const int exponent = static_cast<int>(abs >> 23);
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // value / 2^-24 == mantissa * 2^(exponent - 126)
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry into the exponent is correct
  return static_cast<std::uint16_t>(sign | half);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // Subnormal: value = mantissa * 2^-24.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bfloat16(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; overflow rounds to Inf as it should
  return static_cast<std::uint16_t>(x >> 16);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

namespace {

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <typename T>
void store(std::byte* p, T value) {
  std::memcpy(p, &value, sizeof value);
}

template <typename T>
T saturate(double value) {
  if (std::isnan(value)) return T{0};
  const double truncated = std::trunc(value);
  if (truncated <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (truncated >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(truncated);
}

}  // namespace

double load_as_double(ScalarType type, const std::byte* element) {
  switch (type) {
    case ScalarType::Float32: return load<float>(element);
    case ScalarType::Float16: return half_to_float(load<std::uint16_t>(element));
    case ScalarType::BFloat16: return bfloat16_to_float(load<std::uint16_t>(element));
    case ScalarType::Float64: return load<double>(element);
    case ScalarType::Int32: return load<std::int32_t>(element);
    case ScalarType::Int64: return static_cast<double>(load<std::int64_t>(element));
    case ScalarType::UInt8: return load<std::uint8_t>(element);
  }
  return 0.0;
}

void store_from_double(ScalarType type, double value, std::byte* element) {
  switch (type) {
    case ScalarType::Float32: store(element, static_cast<float>(value)); return;
    case ScalarType::Float16: store(element, float_to_half(static_cast<float>(value))); return;
    case ScalarType::BFloat16: store(element, float_to_bfloat16(static_cast<float>(value))); return;
    case ScalarType::Float64: store(element, value); return;
    case ScalarType::Int32: store(element, saturate<std::int32_t>(value)); return;
    case ScalarType::Int64: store(element, saturate<std::int64_t>(value)); return;
    case ScalarType::UInt8: store(element, saturate<std::uint8_t>(value)); return;
  }
}

}  // namespace hiera::engine::worker
