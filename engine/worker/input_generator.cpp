#include "engine/worker/input_generator.h"

#include <cmath>
#include <numbers>

namespace hiera::worker {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Standard normal, Box-Muller; the second value of each pair is kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    spare_ = radius * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return radius * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

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
  std::uint64_t state = trial_seed ^ (0xa0761d6478bd642full * (argument_index + 1));
  return splitmix64(state);
}

void fill_random(ScalarType type, std::byte* out, std::size_t count, Distribution distribution, std::uint64_t seed,
                 const std::optional<std::pair<double, double>>& range) {
  Xoshiro256 rng(seed);
  const std::size_t width = size_of(type);
  const bool floating = is_floating(type);
  for (std::size_t i = 0; i < count; ++i) {
    double value = 0.0;
    if (range) {
      value = range->first + rng.uniform() * (range->second - range->first);
      if (!floating) value = std::floor(value);
    } else if (floating) {
      switch (distribution) {
        case Distribution::Uniform: value = rng.uniform(); break;
        case Distribution::Normal: value = rng.normal(); break;
        case Distribution::Large: value = rng.normal() * 1e3; break;
      }
    } else {
      switch (distribution) {
        case Distribution::Uniform: value = std::floor(rng.uniform() * 64.0); break;
        case Distribution::Normal: value = std::floor(std::fabs(rng.normal()) * 16.0); break;
        case Distribution::Large: value = std::floor(rng.uniform() * 1000.0); break;
      }
    }
    store_from_double(type, value, out + i * width);
  }
}

}  // namespace hiera::worker
