#include "engine/worker/input_generator.h"

#include <bit>
#include <cstring>

#include "engine/worker/check_math.h"

namespace hiera::engine::worker {

static_assert(std::endian::native == std::endian::little,
              "elements are written as the low bytes of a 64-bit word, as on the GPU");

namespace {

// The element type is a template argument so the per-element math compiles
// to straight-line code for it.
template <int Type>
void fill(std::byte* out, std::size_t count, int distribution, std::uint64_t seed, bool has_range, double lo, double hi) {
  constexpr std::size_t width = static_cast<std::size_t>(check::width_of(Type));
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned long long bits = check::generate_bits(Type, distribution, seed, i, has_range, lo, hi);
    std::memcpy(out + i * width, &bits, width);
  }
}

}  // namespace

const char* to_string(Distribution distribution) {
  switch (distribution) {
    case Distribution::Uniform: return "uniform";
    case Distribution::Normal: return "normal";
    case Distribution::Large: return "large";
  }
  return "?";
}

Distribution distribution_for_trial(int trial) {
  static constexpr Distribution kCycle[] = {Distribution::Uniform, Distribution::Normal, Distribution::Large};
  return kCycle[(trial % 3 + 3) % 3];
}

std::uint64_t argument_seed(std::uint64_t trial_seed, std::size_t argument_index) {
  // One splitmix64 step from a state mixing both (unchanged since the first
  // generator): arguments of one trial, and one argument across trials, get
  // unrelated generator keys.
  return check::mix64((trial_seed ^ (0xa0761d6478bd642full * (argument_index + 1))) + 0x9e3779b97f4a7c15ull);
}

void fill_random(ScalarType type, std::byte* out, std::size_t count, Distribution distribution, std::uint64_t seed,
                 const std::optional<std::pair<double, double>>& range) {
  const int d = static_cast<int>(distribution);
  const bool has_range = range.has_value();
  const double lo = has_range ? range->first : 0.0;
  const double hi = has_range ? range->second : 0.0;
  switch (type) {
    case ScalarType::Float32: return fill<check::kFloat32>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::Float16: return fill<check::kFloat16>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::BFloat16: return fill<check::kBFloat16>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::Float64: return fill<check::kFloat64>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::Int32: return fill<check::kInt32>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::Int64: return fill<check::kInt64>(out, count, d, seed, has_range, lo, hi);
    case ScalarType::UInt8: return fill<check::kUInt8>(out, count, d, seed, has_range, lo, hi);
  }
}

std::uint64_t random_element(ScalarType type, std::uint64_t index, Distribution distribution, std::uint64_t seed,
                             const std::optional<std::pair<double, double>>& range) {
  return check::generate_bits(static_cast<int>(type), static_cast<int>(distribution), seed, index, range.has_value(),
                              range ? range->first : 0.0, range ? range->second : 0.0);
}

}  // namespace hiera::engine::worker
