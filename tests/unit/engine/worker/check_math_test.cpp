// check_math.h, the per-element rules the host and the GPU share: its
// conversions agree with scalar_types', its poison with output_checks', its
// generator is a function of (seed, index) with the promised distributions
// and integer rules, its own log/sin/cos are accurate, and its classification
// reaches every verdict.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <set>
#include <vector>

#include "engine/worker/check_math.h"
#include "engine/worker/input_generator.h"
#include "engine/worker/output_checks.h"
#include "engine/worker/scalar_types.h"

namespace {

using namespace hiera::engine::worker;

constexpr ScalarType kAllTypes[] = {ScalarType::Float32, ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float64,
                                    ScalarType::Int32,   ScalarType::Int64,   ScalarType::UInt8};
constexpr Distribution kAllDistributions[] = {Distribution::Uniform, Distribution::Normal, Distribution::Large};

int code(ScalarType type) { return static_cast<int>(type); }

template <typename T>
std::vector<T> filled(ScalarType type, std::size_t n, Distribution d, std::uint64_t seed,
                      const std::optional<std::pair<double, double>>& range = std::nullopt) {
  std::vector<T> out(n);
  fill_random(type, reinterpret_cast<std::byte*>(out.data()), n, d, seed, range);
  return out;
}

struct Moments {
  double mean = 0, sd = 0, skew = 0, kurtosis = 0, lo = 0, hi = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  double sum = 0;
  for (double x : v) sum += x;
  m.mean = sum / static_cast<double>(v.size());
  double m2 = 0, m3 = 0, m4 = 0;
  for (double x : v) {
    const double d = x - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const double n = static_cast<double>(v.size());
  m2 /= n;
  m3 /= n;
  m4 /= n;
  m.sd = std::sqrt(m2);
  m.skew = m3 / (m2 * m.sd);
  m.kurtosis = m4 / (m2 * m2);
  m.lo = *std::min_element(v.begin(), v.end());
  m.hi = *std::max_element(v.begin(), v.end());
  return m;
}

// ---------------------------------------------------------------- conversions

TEST(CheckMath, HalfAndBFloat16ConversionsAreScalarTypesOwn) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(check::half_to_float(h)), std::bit_cast<std::uint32_t>(half_to_float(h))) << bits;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(check::bfloat16_to_float(h)), std::bit_cast<std::uint32_t>(bfloat16_to_float(h)))
        << bits;
  }
  // Every 65537th float bit pattern: all exponents, signs, NaNs and subnormals.
  for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 65537) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    ASSERT_EQ(check::float_to_half(f), float_to_half(f)) << std::hex << bits;
    ASSERT_EQ(check::float_to_bfloat16(f), float_to_bfloat16(f)) << std::hex << bits;
  }
  EXPECT_EQ(check::float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(check::float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(check::float_to_half(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(CheckMath, LoadsAndStoresAgreeWithScalarTypes) {
  const double values[] = {0.0,  -0.0, 1.0, -7.9, 0.1, 300.0, -300.0, 65504.0, 1e300, -1e300, 2147483647.5, -2147483649.0,
                           9.3e18, -9.3e18, 254.9, 255.5, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                           std::ldexp(1.0, -30), 3.0000001};
  for (ScalarType type : kAllTypes) {
    for (double value : values) {
      std::byte expected[8] = {};
      store_from_double(type, value, expected);
      const std::uint64_t bits = check::store_bits(code(type), value);
      ASSERT_EQ(std::memcmp(&bits, expected, size_of(type)), 0) << to_string(type) << " " << value;
      ASSERT_EQ(bits & ~check::width_mask(code(type)), 0u) << to_string(type) << " " << value;
      const double back = check::load_double(code(type), bits);
      const double scalar_back = load_as_double(type, expected);
      ASSERT_TRUE(back == scalar_back || (std::isnan(back) && std::isnan(scalar_back))) << to_string(type) << " " << value;
    }
  }
  EXPECT_EQ(check::store_bits(check::kInt32, -7.9), 0xfffffff9u);  // toward zero: -7
  EXPECT_EQ(check::load_double(check::kInt32, 0xfffffff9u), -7.0);
  EXPECT_EQ(check::load_double(check::kInt64, 0xffffffffffffffffull), -1.0);
  EXPECT_EQ(check::store_bits(check::kUInt8, 300.0), 255u);
  EXPECT_EQ(check::store_bits(check::kInt64, std::numeric_limits<double>::quiet_NaN()), 0u);
}

TEST(CheckMath, PoisonBitsAreTheBuffersPoison) {
  for (ScalarType type : kAllTypes) {
    for (Poison which : {Poison::A, Poison::B}) {
      const auto element = poison_element(type, which);
      std::uint64_t bits = 0;
      std::memcpy(&bits, element.data(), element.size());
      EXPECT_EQ(check::poison_bits(code(type), which == Poison::B), bits) << to_string(type);
    }
  }
  EXPECT_EQ(check::poison_bits(check::kFloat32, false), 0x7fff7fffu);
  EXPECT_EQ(check::poison_bits(check::kFloat64, true), 0xffffffffffffffffull);
  EXPECT_EQ(check::poison_bits(check::kUInt8, false), 0x7fu);
  EXPECT_EQ(check::poison_bits(check::kInt64, true), 0x8080808080808080ull);
}

TEST(CheckMath, ClassificationByBits) {
  EXPECT_TRUE(check::is_nan(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(check::is_nan(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(check::is_inf(-std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(check::is_finite(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_TRUE(check::is_finite(std::numeric_limits<double>::max()));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(check::fabs_of(-0.0)), 0u);
  EXPECT_EQ(check::fabs_of(-2.5), 2.5);
}

// ---------------------------------------------------------------- log, sin, cos

TEST(CheckMath, OwnLogSinAndCosAreAccurate) {
  double worst_log = 0, worst_turn = 0;
  for (int i = 1; i <= 200000; ++i) {
    // Dense over (0, 1], plus the tiny values Box-Muller sees.
    const double x = i % 2 ? static_cast<double>(i) / 200000.0 : std::ldexp(static_cast<double>(i), -60);
    worst_log = std::max(worst_log, std::fabs(check::log_unit(x) - std::log(x)) / std::max(1.0, std::fabs(std::log(x))));
    const double u = static_cast<double>(i - 1) / 200000.0;
    worst_turn = std::max(worst_turn, std::fabs(check::turn(u, false) - std::cos(2 * std::numbers::pi * u)));
    worst_turn = std::max(worst_turn, std::fabs(check::turn(u, true) - std::sin(2 * std::numbers::pi * u)));
  }
  EXPECT_LT(worst_log, 1e-15);
  EXPECT_LT(worst_turn, 1e-15);
  EXPECT_EQ(check::log_unit(1.0), 0.0);
  EXPECT_EQ(check::turn(0.0, false), 1.0);
  EXPECT_EQ(check::turn(0.25, true), 1.0);
  EXPECT_EQ(check::turn(0.5, false), -1.0);
  EXPECT_EQ(check::turn(0.75, true), -1.0);
}

// ---------------------------------------------------------------- the generator

TEST(CheckMath, AnElementDependsOnlyOnSeedAndIndex) {
  for (ScalarType type : kAllTypes) {
    for (Distribution d : kAllDistributions) {
      const std::size_t n = 4001;  // odd: the last normal is the cosine half of a pair
      std::vector<std::byte> all(n * size_of(type)), prefix(1000 * size_of(type));
      fill_random(type, all.data(), n, d, 77);
      fill_random(type, prefix.data(), 1000, d, 77);
      ASSERT_EQ(std::memcmp(all.data(), prefix.data(), prefix.size()), 0) << to_string(type) << " " << to_string(d);
      // Element by element, backwards: the order of computing changes nothing.
      for (std::size_t i = n; i-- > 0;) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, all.data() + i * size_of(type), size_of(type));
        ASSERT_EQ(random_element(type, i, d, 77), bits) << to_string(type) << " " << to_string(d) << " [" << i << "]";
      }
    }
  }
  // Far indices too (a 2^40-element buffer is beyond any GPU, but the rule holds).
  EXPECT_EQ(random_element(ScalarType::Float32, 1ull << 40, Distribution::Normal, 5),
            random_element(ScalarType::Float32, 1ull << 40, Distribution::Normal, 5));
  EXPECT_NE(random_element(ScalarType::Float64, 12345, Distribution::Uniform, 5),
            random_element(ScalarType::Float64, 12345, Distribution::Uniform, 6));
  EXPECT_NE(random_element(ScalarType::Float64, 12345, Distribution::Uniform, 5),
            random_element(ScalarType::Float64, 12346, Distribution::Uniform, 5));
}

TEST(CheckMath, TheFirstElementsOfAKnownSeedStayPut) {
  // Pinned values: a change to the generator shows here, and must be deliberate
  // (it changes every trial's inputs, and GPU and host must change together).
  EXPECT_EQ(check::hash(0, 0), 0xe220a8397b1dcdafull);  // splitmix64's first output from 0
  const auto uniform = filled<double>(ScalarType::Float64, 2, Distribution::Uniform, 0);
  EXPECT_EQ(uniform[0], static_cast<double>(0xe220a8397b1dcdafull >> 11) * 0x1p-53);
  const auto normal = filled<double>(ScalarType::Float64, 2, Distribution::Normal, 0);
  const double u1 = static_cast<double>((check::hash(0, 0) >> 11) + 1) * 0x1p-53;
  const double u2 = static_cast<double>(check::hash(0, 1) >> 11) * 0x1p-53;
  const double radius = std::sqrt(-2.0 * std::log(u1));
  EXPECT_NEAR(normal[0], radius * std::cos(2 * std::numbers::pi * u2), 1e-14);
  EXPECT_NEAR(normal[1], radius * std::sin(2 * std::numbers::pi * u2), 1e-14);
}

TEST(CheckMath, FloatingDistributionsHaveTheirMoments) {
  const std::size_t n = 100000;
  const Moments uniform = moments(filled<double>(ScalarType::Float64, n, Distribution::Uniform, 11));
  EXPECT_NEAR(uniform.mean, 0.5, 0.005);
  EXPECT_NEAR(uniform.sd, std::sqrt(1.0 / 12.0), 0.003);
  EXPECT_NEAR(uniform.skew, 0.0, 0.03);
  EXPECT_NEAR(uniform.kurtosis, 1.8, 0.03);
  EXPECT_GE(uniform.lo, 0.0);
  EXPECT_LT(uniform.hi, 1.0);
  EXPECT_LT(uniform.lo, 1e-3);
  EXPECT_GT(uniform.hi, 1.0 - 1e-3);

  const auto normal_values = filled<double>(ScalarType::Float64, n, Distribution::Normal, 12);
  const Moments normal = moments(normal_values);
  EXPECT_NEAR(normal.mean, 0.0, 0.01);
  EXPECT_NEAR(normal.sd, 1.0, 0.01);
  EXPECT_NEAR(normal.skew, 0.0, 0.04);
  EXPECT_NEAR(normal.kurtosis, 3.0, 0.1);
  EXPECT_LT(normal.lo, -3.5);  // negatives, with tails
  EXPECT_GT(normal.hi, 3.5);
  const double within_one = static_cast<double>(std::count_if(normal_values.begin(), normal_values.end(),
                                                              [](double x) { return std::fabs(x) < 1.0; })) / n;
  EXPECT_NEAR(within_one, 0.6827, 0.005);
  // The two halves of each Box-Muller pair are uncorrelated.
  double cross = 0;
  for (std::size_t i = 0; i + 1 < n; i += 2) cross += normal_values[i] * normal_values[i + 1];
  EXPECT_NEAR(cross / (n / 2), 0.0, 0.015);

  const Moments large = moments(filled<double>(ScalarType::Float64, n, Distribution::Large, 13));
  EXPECT_NEAR(large.mean, 0.0, 10.0);
  EXPECT_NEAR(large.sd, 1000.0, 10.0);
  EXPECT_LT(large.lo, -3500.0);

  // Float32 holds the same draws rounded.
  const auto as_float = filled<float>(ScalarType::Float32, 1000, Distribution::Normal, 12);
  for (std::size_t i = 0; i < as_float.size(); ++i) ASSERT_EQ(as_float[i], static_cast<float>(normal_values[i]));
}

TEST(CheckMath, IntegersAreNonNegativeAndSmall) {
  const std::size_t n = 100000;
  for (ScalarType type : {ScalarType::Int32, ScalarType::Int64, ScalarType::UInt8}) {
    std::vector<std::byte> raw(n * size_of(type));
    auto values = [&](Distribution d) {
      fill_random(type, raw.data(), n, d, 21);
      std::vector<double> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = load_as_double(type, raw.data() + i * size_of(type));
      return out;
    };
    const auto uniform = values(Distribution::Uniform);
    EXPECT_EQ(std::set<double>(uniform.begin(), uniform.end()).size(), 64u) << to_string(type);  // each of 0..63
    EXPECT_EQ(*std::min_element(uniform.begin(), uniform.end()), 0.0);
    EXPECT_EQ(*std::max_element(uniform.begin(), uniform.end()), 63.0);
    const auto normal = values(Distribution::Normal);
    const Moments folded = moments(normal);
    EXPECT_EQ(folded.lo, 0.0) << to_string(type);
    EXPECT_NEAR(folded.mean, 16.0 * std::sqrt(2.0 / std::numbers::pi) - 0.5, 0.15) << to_string(type);  // E floor(16|z|)
    EXPECT_GT(folded.hi, 55.0);
    for (double x : normal) ASSERT_EQ(x, std::floor(x));
    const auto large = values(Distribution::Large);
    EXPECT_EQ(*std::min_element(large.begin(), large.end()), 0.0);
    // uint8 saturates the [0, 1000) draw at 255, as store_from_double always has.
    EXPECT_EQ(*std::max_element(large.begin(), large.end()), type == ScalarType::UInt8 ? 255.0 : 999.0) << to_string(type);
  }
}

TEST(CheckMath, ARangeOverridesTheDistribution) {
  const std::size_t n = 100000;
  for (Distribution d : kAllDistributions) {
    const auto ints = filled<std::int32_t>(ScalarType::Int32, n, d, 31, std::make_pair(-5.0, 5.0));
    std::set<std::int32_t> seen(ints.begin(), ints.end());
    EXPECT_EQ(seen, (std::set<std::int32_t>{-5, -4, -3, -2, -1, 0, 1, 2, 3, 4})) << to_string(d);
    const Moments floats = moments(filled<double>(ScalarType::Float64, n, d, 31, std::make_pair(-2.0, 3.0)));
    EXPECT_GE(floats.lo, -2.0);
    EXPECT_LT(floats.hi, 3.0);
    EXPECT_NEAR(floats.mean, 0.5, 0.02) << to_string(d);
    EXPECT_NEAR(floats.sd, 5.0 / std::sqrt(12.0), 0.01) << to_string(d);
  }
  // The range draw is the uniform draw, scaled: lo + u (hi - lo).
  EXPECT_EQ(random_element(ScalarType::Float64, 9, Distribution::Normal, 3, std::make_pair(10.0, 20.0)),
            std::bit_cast<std::uint64_t>(10.0 + check::uniform(3, 9) * 10.0));
}

TEST(CheckMath, SixteenBitInputsStayInRange) {
  for (ScalarType type : {ScalarType::Float16, ScalarType::BFloat16}) {
    const auto bits = filled<std::uint16_t>(type, 20000, Distribution::Uniform, 41);
    for (auto b : bits) {
      const float f = type == ScalarType::Float16 ? half_to_float(b) : bfloat16_to_float(b);
      ASSERT_GE(f, 0.0f);
      ASSERT_LE(f, 1.0f);  // [0,1) rounded to 16 bits may reach 1.0
    }
    const auto large = filled<std::uint16_t>(type, 20000, Distribution::Large, 41);
    bool negative = false;
    for (auto b : large) negative = negative || (b & 0x8000u);
    EXPECT_TRUE(negative) << to_string(type);
  }
}

// ---------------------------------------------------------------- classification

TEST(CheckMath, ClassifyReachesEachVerdict) {
  const auto f = [](float x) { return static_cast<unsigned long long>(std::bit_cast<std::uint32_t>(x)); };
  const unsigned long long a = check::poison_bits(check::kFloat32, false);
  const unsigned long long b = check::poison_bits(check::kFloat32, true);
  const auto verdict = [](unsigned long long r, unsigned long long r1, unsigned long long r2, bool poisoned = true) {
    return check::classify(check::kFloat32, r, r1, r2, 1e-3, 1e-3, poisoned);
  };
  EXPECT_EQ(verdict(f(1), a, b).flags, check::kUnwritten);
  EXPECT_EQ(verdict(a, a, b).flags, 0u);            // unwritten by the reference too
  EXPECT_EQ(verdict(a, f(5), f(5)).flags, 0u);      // the reference's unwritten elements are skipped
  EXPECT_EQ(verdict(a, a, a, false).flags, check::kCompared);  // inout: no poison; NaN where the reference has NaN
  EXPECT_EQ(verdict(a, a, b, false).flags, check::kCompared | check::kNondeterministic);
  EXPECT_EQ(verdict(f(1), f(1), f(1)).flags, check::kCompared);
  EXPECT_EQ(verdict(f(1), f(1.0005f), f(1.0005f)).flags, check::kCompared);  // within atol + rtol
  EXPECT_EQ(verdict(f(1), f(1.01f), f(1.01f)).flags, check::kCompared | check::kMismatch);
  EXPECT_EQ(verdict(f(1), f(1), f(1.0001f)).flags, check::kCompared | check::kNondeterministic);
  EXPECT_EQ(verdict(f(1), a, a).flags, check::kCompared | check::kNanInf);  // NaN written by both runs
  EXPECT_EQ(verdict(f(std::numeric_limits<float>::infinity()), f(std::numeric_limits<float>::infinity()),
                    f(std::numeric_limits<float>::infinity()))
                .flags,
            check::kCompared);
  EXPECT_EQ(verdict(f(std::numeric_limits<float>::infinity()), f(-std::numeric_limits<float>::infinity()),
                    f(-std::numeric_limits<float>::infinity()))
                .flags,
            check::kCompared | check::kNanInf);
  const auto errors = verdict(f(2), f(2.5f), f(2.5f));
  EXPECT_EQ(errors.abs_error, 0.5);
  EXPECT_EQ(errors.rel_error, 0.25);
  EXPECT_EQ(verdict(f(0), f(0.5f), f(0.5f)).rel_error, 0.0);  // no relative error against 0
}

TEST(CheckMath, StatsKeepTheFirstIndexAndTheMaxima) {
  check::CompareStats stats = check::empty_compare_stats();
  check::note(stats, {check::kCompared | check::kMismatch, 0.5, 0.25}, 7);
  check::note(stats, {check::kCompared | check::kMismatch, 2.0, 0.1}, 3);
  check::note(stats, {check::kCompared, 0.0, 0.0}, 1);
  check::note(stats, {check::kUnwritten, 0.0, 0.0}, 9);
  EXPECT_EQ(stats.compared, 3u);
  EXPECT_EQ(stats.mismatches, 2u);
  EXPECT_EQ(stats.first_mismatch, 3u);
  EXPECT_EQ(stats.unwritten, 1u);
  EXPECT_EQ(stats.first_unwritten, 9u);
  EXPECT_EQ(stats.first_nan_inf, check::kNoIndex);
  EXPECT_EQ(check::double_from_bits(stats.max_abs_error_bits), 2.0);
  EXPECT_EQ(check::double_from_bits(stats.max_rel_error_bits), 0.25);
  // Bits of non-negative doubles order like the values (the device's atomicMax relies on it).
  EXPECT_LT(check::bits_of(0.0), check::bits_of(1e-300));
  EXPECT_LT(check::bits_of(1.5), check::bits_of(2.0));
  EXPECT_LT(check::bits_of(1e308), check::bits_of(std::numeric_limits<double>::infinity()));
}

TEST(CheckMath, DescribedComparisonsQuoteEachTypeAsTheHostLoopDoes) {
  // Through describe_output: the device path's messages come from the same code.
  const std::int64_t ref64[] = {1, -5, 1ll << 40};
  const std::int64_t got64[] = {1, -4, 1ll << 40};
  const auto c64 = compare_output(ScalarType::Int64, 3, reinterpret_cast<const std::byte*>(ref64),
                                  reinterpret_cast<const std::byte*>(got64), reinterpret_cast<const std::byte*>(got64),
                                  {0.5, 0.0}, true);
  EXPECT_EQ(c64.mismatches, 1u);
  EXPECT_EQ(c64.first_mismatch, "[1]: expected -5, got -4");
  const std::uint16_t ref16[] = {float_to_bfloat16(1.5f), float_to_bfloat16(-2.0f)};
  const std::uint16_t got16[] = {float_to_bfloat16(1.5f), float_to_bfloat16(-2.5f)};
  const auto c16 = compare_output(ScalarType::BFloat16, 2, reinterpret_cast<const std::byte*>(ref16),
                                  reinterpret_cast<const std::byte*>(got16), reinterpret_cast<const std::byte*>(got16),
                                  {1e-3, 1e-3}, true);
  EXPECT_EQ(c16.first_mismatch, "[1]: expected -2, got -2.5");
  EXPECT_EQ(c16.max_rel_error, 0.25);

  check::CompareStats stats = check::empty_compare_stats();
  stats.compared = 10;
  stats.nondeterministic = 2;
  stats.first_nondeterministic = 4;
  std::vector<std::uint64_t> asked;
  const auto c = describe_output(ScalarType::Float32, 10, stats, [&](std::uint64_t i) {
    asked.push_back(i);
    return OutputSample{std::bit_cast<std::uint32_t>(1.0f), std::bit_cast<std::uint32_t>(1.0f),
                        std::bit_cast<std::uint32_t>(1.5f)};
  });
  EXPECT_EQ(asked, std::vector<std::uint64_t>{4});  // only the quoted element is fetched
  EXPECT_EQ(c.first_nondeterministic, "[4]: first run 1, second run 1.5");
  EXPECT_EQ(c.elements, 10u);
  EXPECT_TRUE(c.first_mismatch.empty());
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
