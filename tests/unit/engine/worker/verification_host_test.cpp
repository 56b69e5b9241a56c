// The host side of verification: fp16/bf16 conversions, poison patterns, the
// output comparison (tolerance, NaN/Inf, unwritten elements, determinism),
// input mutation, the trial inputs and the timing summary.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/worker/input_generator.h"
#include "engine/worker/output_checks.h"
#include "engine/worker/scalar_types.h"
#include "engine/worker/timing_stats.h"

namespace {

using namespace hiera::engine::worker;

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<std::byte> poisoned(ScalarType type, Poison which, std::size_t count) {
  std::vector<std::byte> out(count * size_of(type));
  fill_poison(type, which, out.data(), count);
  return out;
}

TEST(ScalarTypes, NamesAndSizes) {
  for (const char* name : {"float32", "float16", "bfloat16", "float64", "int32", "int64", "uint8"}) {
    auto type = parse_scalar_type(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_STREQ(to_string(*type), name);
  }
  EXPECT_FALSE(parse_scalar_type("float").has_value());
  EXPECT_EQ(size_of(ScalarType::BFloat16), 2u);
  EXPECT_EQ(size_of(ScalarType::Int64), 8u);
  EXPECT_TRUE(is_floating(ScalarType::Float16));
  EXPECT_FALSE(is_floating(ScalarType::UInt8));
}

TEST(ScalarTypes, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // halfway to the next: rounds to even, Inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE((float_to_half(std::nanf("")) & 0x7fff) > 0x7c00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // a tie: rounds to even (zero)
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie at 1 + half an ulp: even
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie at 1 + 1.5 ulp: even, up
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), h) << std::hex << bits;  // every half round-trips
  }
}

TEST(ScalarTypes, BFloat16ConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie: even
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::nanf("")))));
  EXPECT_EQ(float_to_bfloat16(-std::numeric_limits<float>::infinity()), 0xff80);
}

TEST(ScalarTypes, ElementsLoadAndStoreAsDouble) {
  std::byte buffer[8];
  store_from_double(ScalarType::Int32, -7.9, buffer);
  EXPECT_EQ(load_as_double(ScalarType::Int32, buffer), -7.0);
  store_from_double(ScalarType::UInt8, 300.0, buffer);
  EXPECT_EQ(load_as_double(ScalarType::UInt8, buffer), 255.0);
  store_from_double(ScalarType::BFloat16, 3.0, buffer);
  EXPECT_EQ(load_as_double(ScalarType::BFloat16, buffer), 3.0);
  store_from_double(ScalarType::Float64, 0.1, buffer);
  EXPECT_EQ(load_as_double(ScalarType::Float64, buffer), 0.1);
}

TEST(Poison, FloatPoisonIsNaNInEveryWidthAndIntegersUse7f) {
  for (auto type : {ScalarType::Float32, ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float64}) {
    for (auto which : {Poison::A, Poison::B}) {
      auto element = poison_element(type, which);
      EXPECT_TRUE(std::isnan(load_as_double(type, element.data()))) << to_string(type);
    }
  }
  auto a = poison_element(ScalarType::Int32, Poison::A);
  std::int32_t value = 0;
  std::memcpy(&value, a.data(), 4);
  EXPECT_EQ(value, 0x7f7f7f7f);
  EXPECT_NE(poison_element(ScalarType::Int32, Poison::A), poison_element(ScalarType::Int32, Poison::B));
  EXPECT_NE(poison_element(ScalarType::Float32, Poison::A), poison_element(ScalarType::Float32, Poison::B));
}

TEST(OutputComparison, AcceptsValuesWithinTolerance) {
  const auto ref = bytes_of(std::vector<float>{1.0f, -2.0f, 0.0f, 1000.0f});
  const auto got = bytes_of(std::vector<float>{1.00005f, -2.0001f, 0.00009f, 1000.09f});
  const auto c = compare_output(ScalarType::Float32, 4, ref.data(), got.data(), got.data(), {1e-4, 1e-4}, true);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.compared, 4u);
  EXPECT_NEAR(c.max_abs_error, 0.09, 1e-3);
  EXPECT_GT(c.max_rel_error, 0.0);
}

TEST(OutputComparison, CountsMismatchesAndNamesTheFirst) {
  const auto ref = bytes_of(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
  const auto got = bytes_of(std::vector<float>{1.0f, 2.5f, 3.0f, 0.0f});
  const auto c = compare_output(ScalarType::Float32, 4, ref.data(), got.data(), got.data(), {1e-4, 1e-4}, true);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.first_mismatch, "[1]: expected 2, got 2.5");
  EXPECT_EQ(c.max_abs_error, 4.0);
}

TEST(OutputComparison, NaNAndInfOnlyWhereTheReferenceHasThem) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto ref = bytes_of(std::vector<float>{nan, inf, -inf, 1.0f, 1.0f, nan});
  const auto good = bytes_of(std::vector<float>{nan, inf, -inf, 1.0f, 1.0f, nan});
  EXPECT_EQ(compare_output(ScalarType::Float32, 6, ref.data(), good.data(), good.data(), {}, true).nan_inf, 0u);
  const auto bad = bytes_of(std::vector<float>{0.0f, -inf, inf, nan, inf, 1.0f});
  const auto c = compare_output(ScalarType::Float32, 6, ref.data(), bad.data(), bad.data(), {1e9, 1e9}, true);
  EXPECT_EQ(c.nan_inf, 6u);  // a huge tolerance does not excuse any of them
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.first_nan_inf, "[0]: expected nan, got 0");
}

TEST(OutputComparison, ElementsLeftAtPoisonAreUnwritten) {
  const std::size_t n = 6;
  auto ref = bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6});
  // The reference leaves element 5 alone: the candidate may too.
  std::memcpy(ref.data() + 5 * 4, poison_element(ScalarType::Float32, Poison::A).data(), 4);
  auto run1 = poisoned(ScalarType::Float32, Poison::A, n);
  auto run2 = poisoned(ScalarType::Float32, Poison::B, n);
  // The candidate writes only the first half.
  for (std::size_t i = 0; i < 3; ++i) {
    const float v = static_cast<float>(i + 1);
    std::memcpy(run1.data() + i * 4, &v, 4);
    std::memcpy(run2.data() + i * 4, &v, 4);
  }
  const auto c = compare_output(ScalarType::Float32, n, ref.data(), run1.data(), run2.data(), {}, true);
  EXPECT_EQ(c.unwritten, 2u);  // elements 3 and 4; 5 is unwritten by both
  EXPECT_EQ(c.first_unwritten, "[3]: expected 4, never written");
  EXPECT_EQ(c.nan_inf, 0u);
  EXPECT_EQ(c.nondeterministic, 0u);
  EXPECT_EQ(c.compared, 3u);
}

TEST(OutputComparison, AValueEqualToOnePoisonIsNotUnwritten) {
  // uint8 127 is poison A's byte; written in both runs it is a real value.
  const std::vector<std::uint8_t> values{127, 127};
  const auto ref = bytes_of(std::vector<std::uint8_t>{1, 127});
  const auto run = bytes_of(values);
  const auto c = compare_output(ScalarType::UInt8, 2, ref.data(), run.data(), run.data(), {0, 0}, true);
  EXPECT_EQ(c.unwritten, 0u);
  EXPECT_EQ(c.mismatches, 1u);  // element 0: 127 where 1 was expected
  EXPECT_EQ(c.first_mismatch, "[0]: expected 1, got 127");
}

TEST(OutputComparison, RunsThatDifferAreNondeterministic) {
  const auto ref = bytes_of(std::vector<float>{1, 2, 3});
  const auto run1 = bytes_of(std::vector<float>{1, 2, 3});
  const auto run2 = bytes_of(std::vector<float>{1, 2.0000002f, 4});
  const auto c = compare_output(ScalarType::Float32, 3, ref.data(), run1.data(), run2.data(), {1e-4, 1e-4}, true);
  EXPECT_EQ(c.nondeterministic, 2u);  // bit for bit: even a tolerable difference counts
  EXPECT_EQ(c.mismatches, 0u);        // values are judged on the first run
  EXPECT_EQ(c.first_nondeterministic, "[1]: first run 2, second run 2.0000002");
}

TEST(OutputComparison, InoutArgumentsAreNotPoisonChecked) {
  auto ref = poisoned(ScalarType::Float32, Poison::A, 2);
  const auto c = compare_output(ScalarType::Float32, 2, ref.data(), ref.data(), ref.data(), {}, false);
  EXPECT_EQ(c.unwritten, 0u);
  EXPECT_EQ(c.compared, 2u);
  EXPECT_EQ(c.nan_inf, 0u);  // NaN where the reference has NaN
}

TEST(OutputComparison, SixteenMillionElementsAreEveryOneCompared) {
  // Past 2^24 elements a float counter would stall: every element must still count.
  // (How fast the comparison is belongs to a benchmark, not to this test.)
  const std::size_t n = (std::size_t{1} << 24) + 3;
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000) * 0.5f - 100.0f;
  const auto bytes = bytes_of(values);
  const auto c = compare_output(ScalarType::Float32, n, bytes.data(), bytes.data(), bytes.data(), {1e-4, 1e-4}, true);
  EXPECT_EQ(c.compared, n);
  EXPECT_EQ(c.mismatches, 0u);
}

TEST(InputComparison, FindsEveryChangedElement) {
  const auto original = bytes_of(std::vector<std::int32_t>{1, 2, 3, 4});
  EXPECT_EQ(compare_input(ScalarType::Int32, 4, original.data(), original.data()).changed, 0u);
  const auto after = bytes_of(std::vector<std::int32_t>{1, 0, 3, 0});
  const auto c = compare_input(ScalarType::Int32, 4, original.data(), after.data());
  EXPECT_EQ(c.changed, 2u);
  EXPECT_EQ(c.first_changed, "[1]: was 2, now 0");
  EXPECT_EQ(compare_input(ScalarType::Int32, 0, nullptr, nullptr).changed, 0u);
}

TEST(InputGenerator, DistributionsCycleAndSeedsReproduce) {
  EXPECT_EQ(distribution_for_trial(0), Distribution::Uniform);
  EXPECT_EQ(distribution_for_trial(1), Distribution::Normal);
  EXPECT_EQ(distribution_for_trial(2), Distribution::Large);
  EXPECT_EQ(distribution_for_trial(3), Distribution::Uniform);
  const std::size_t n = 100000;
  std::vector<float> a(n), b(n), c(n);
  fill_random(ScalarType::Float32, reinterpret_cast<std::byte*>(a.data()), n, Distribution::Normal, 42);
  fill_random(ScalarType::Float32, reinterpret_cast<std::byte*>(b.data()), n, Distribution::Normal, 42);
  fill_random(ScalarType::Float32, reinterpret_cast<std::byte*>(c.data()), n, Distribution::Normal, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(argument_seed(1234, 0), argument_seed(1234, 1));
  EXPECT_NE(argument_seed(1234, 0), argument_seed(1235, 0));
}

TEST(InputGenerator, EachDistributionHasItsShape) {
  const std::size_t n = 200000;
  std::vector<double> v(n);
  auto stats = [&](Distribution d) {
    fill_random(ScalarType::Float64, reinterpret_cast<std::byte*>(v.data()), n, d, 7);
    double sum = 0, sq = 0, lo = 1e300, hi = -1e300;
    for (double x : v) {
      sum += x;
      sq += x * x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double mean = sum / n;
    return std::array<double, 4>{mean, std::sqrt(sq / n - mean * mean), lo, hi};
  };
  const auto uniform = stats(Distribution::Uniform);
  EXPECT_NEAR(uniform[0], 0.5, 0.01);
  EXPECT_GE(uniform[2], 0.0);
  EXPECT_LT(uniform[3], 1.0);
  const auto normal = stats(Distribution::Normal);
  EXPECT_NEAR(normal[0], 0.0, 0.01);
  EXPECT_NEAR(normal[1], 1.0, 0.01);
  EXPECT_LT(normal[2], -3.0);  // negatives, with tails
  const auto large = stats(Distribution::Large);
  EXPECT_NEAR(large[1], 1000.0, 10.0);
}

TEST(InputGenerator, IntegersAreSmallAndNonNegativeUnlessARangeIsGiven) {
  const std::size_t n = 10000;
  std::vector<std::int32_t> v(n);
  for (auto d : {Distribution::Uniform, Distribution::Normal, Distribution::Large}) {
    fill_random(ScalarType::Int32, reinterpret_cast<std::byte*>(v.data()), n, d, 9);
    for (auto x : v) ASSERT_GE(x, 0);
  }
  fill_random(ScalarType::Int32, reinterpret_cast<std::byte*>(v.data()), n, Distribution::Large, 9, std::make_pair(-5.0, 5.0));
  bool negative = false;
  for (auto x : v) {
    ASSERT_GE(x, -5);
    ASSERT_LT(x, 5);
    negative = negative || x < 0;
  }
  EXPECT_TRUE(negative);
  std::vector<std::uint16_t> h(n);
  fill_random(ScalarType::Float16, reinterpret_cast<std::byte*>(h.data()), n, Distribution::Uniform, 1);
  for (auto bits : h) {
    const float f = half_to_float(bits);
    ASSERT_GE(f, 0.0f);
    ASSERT_LE(f, 1.0f);  // [0,1) rounded to half may reach 1.0
  }
}

TEST(TimingStats, MedianPercentilesAndMin) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // 1..100, unsorted
  const auto s = summarize_timings(samples);
  EXPECT_EQ(s.trials, 100);
  EXPECT_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.median_ms, 50.5);
  EXPECT_DOUBLE_EQ(s.p10_ms, 10.9);
  EXPECT_DOUBLE_EQ(s.p90_ms, 90.1);
  const auto one = summarize_timings({2.0});
  EXPECT_EQ(one.median_ms, 2.0);
  EXPECT_EQ(one.p90_ms, 2.0);
  EXPECT_EQ(summarize_timings({}).trials, 0);
  const auto j = to_json(s);
  EXPECT_EQ(j["trials"], 100);
  EXPECT_EQ(j["min_ms"], 1.0);
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
