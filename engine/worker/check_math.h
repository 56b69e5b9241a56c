#pragma once
// The per-element rules of verification, defined once for the host and the
// GPU: counter-based trial inputs (value = f(key, index)), the element types'
// bit conversions, the poison patterns and the classification of one output
// element. Host C++ includes it (input_generator.cpp, output_checks.cpp);
// hiera-worker embeds this very file in the NVRTC program of its check kernels
// (check_program.cpp, check_kernels.cu), so device and host agree bit for bit.
//
// That agreement holds because the math uses only builtin types and
// operations IEEE 754 rounds correctly everywhere (+ - * /, sqrt, conversions,
// floor/trunc), with our own log and sin/cos built from them (libm and CUDA's
// math library differ in the last bit), and nothing contracted into FMAs: the
// check program is compiled with --fmad=false and the host files that include
// this header with -ffp-contract=off (engine/worker/CMakeLists.txt).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define HIERA_HD __host__ __device__
#else
#define HIERA_HD
#include <bit>
#include <cmath>
#endif

namespace hiera::engine::worker::check {

// Element types and distributions by number, in the order of ScalarType and
// Distribution (static_asserts in check_program.cpp keep them in step).
inline constexpr int kFloat32 = 0;
inline constexpr int kFloat16 = 1;
inline constexpr int kBFloat16 = 2;
inline constexpr int kFloat64 = 3;
inline constexpr int kInt32 = 4;
inline constexpr int kInt64 = 5;
inline constexpr int kUInt8 = 6;

inline constexpr int kUniform = 0;
inline constexpr int kNormal = 1;
inline constexpr int kLarge = 2;

// ---------------------------------------------------------------- bits

HIERA_HD inline unsigned long long bits_of(double x) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned long long>(__double_as_longlong(x));
#else
  return std::bit_cast<unsigned long long>(x);
#endif
}

HIERA_HD inline double double_from_bits(unsigned long long bits) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(bits));
#else
  return std::bit_cast<double>(bits);
#endif
}

HIERA_HD inline unsigned float_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  return std::bit_cast<unsigned>(x);
#endif
}

HIERA_HD inline float float_from_bits(unsigned bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// Exact operations, from each side's own library.
HIERA_HD inline double sqrt_of(double x) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

HIERA_HD inline double floor_of(double x) {
#ifdef __CUDA_ARCH__
  return ::floor(x);
#else
  return std::floor(x);
#endif
}

HIERA_HD inline double trunc_of(double x) {
#ifdef __CUDA_ARCH__
  return ::trunc(x);
#else
  return std::trunc(x);
#endif
}

// Classified by bits, so no compiler flag can change the answer.
HIERA_HD inline double fabs_of(double x) { return double_from_bits(bits_of(x) & 0x7fffffffffffffffull); }
HIERA_HD inline bool is_nan(double x) { return (bits_of(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
HIERA_HD inline bool is_inf(double x) { return (bits_of(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }
HIERA_HD inline bool is_finite(double x) { return (bits_of(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }

// ---------------------------------------------------------------- element types

HIERA_HD constexpr bool is_floating(int type) {
  return type == kFloat32 || type == kFloat16 || type == kBFloat16 || type == kFloat64;
}

HIERA_HD constexpr int width_of(int type) {
  switch (type) {
    case kFloat16:
    case kBFloat16: return 2;
    case kFloat64:
    case kInt64: return 8;
    case kUInt8: return 1;
    default: return 4;
  }
}

// The low width_of(type) bytes, which hold an element's bits here.
HIERA_HD constexpr unsigned long long width_mask(int type) {
  const int width = width_of(type);
  return width == 8 ? ~0ull : (1ull << (8 * width)) - 1ull;
}

// IEEE binary16 from a float, rounding to nearest even; NaN stays a (quiet) NaN.
HIERA_HD inline unsigned short float_to_half(float value) {
  const unsigned x = float_bits(value);
  const unsigned sign = (x >> 16) & 0x8000u;
  const unsigned magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    return static_cast<unsigned short>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x0200u : 0u));
  }
  if (magnitude >= 0x477ff000u) return static_cast<unsigned short>(sign | 0x7c00u);  // rounds to >= 65520: Inf
  if (magnitude < 0x38800000u) {
    // A subnormal half (or zero): the mantissa with its implicit bit, shifted and rounded to nearest even.
    if (magnitude < 0x33000000u) return static_cast<unsigned short>(sign);  // below half the smallest subnormal
    const int exponent = static_cast<int>(magnitude >> 23);
    const unsigned mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // value / 2^-24 == mantissa * 2^(exponent - 126)
    unsigned half = mantissa >> shift;
    const unsigned rest = mantissa & ((1u << shift) - 1u);
    const unsigned halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<unsigned short>(sign | half);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  unsigned half = (magnitude - 0x38000000u) >> 13;
  const unsigned rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry into the exponent is correct
  return static_cast<unsigned short>(sign | half);
}

HIERA_HD inline float half_to_float(unsigned short bits) {
  const unsigned sign = static_cast<unsigned>(bits & 0x8000u) << 16;
  const unsigned exponent = (bits >> 10) & 0x1fu;
  const unsigned mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0u) {
    if (mantissa == 0u) return float_from_bits(sign);
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // a subnormal: exact
    return sign ? -magnitude : magnitude;
  }
  return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// bfloat16 from a float, rounding to nearest even; overflow rounds to Inf as it should.
HIERA_HD inline unsigned short float_to_bfloat16(float value) {
  unsigned x = float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x0040u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<unsigned short>(x >> 16);
}

HIERA_HD inline float bfloat16_to_float(unsigned short bits) { return float_from_bits(static_cast<unsigned>(bits) << 16); }

// An element's value from its bits (integers as two's complement).
HIERA_HD inline double load_double(int type, unsigned long long bits) {
  switch (type) {
    case kFloat32: return static_cast<double>(float_from_bits(static_cast<unsigned>(bits)));
    case kFloat16: return static_cast<double>(half_to_float(static_cast<unsigned short>(bits)));
    case kBFloat16: return static_cast<double>(bfloat16_to_float(static_cast<unsigned short>(bits)));
    case kFloat64: return double_from_bits(bits);
    case kInt32: return static_cast<double>(static_cast<int>(static_cast<unsigned>(bits)));
    case kInt64: return static_cast<double>(static_cast<long long>(bits));
    case kUInt8: return static_cast<double>(bits & 0xffu);
    default: return 0.0;
  }
}

// An element's bits from a value: floats round to nearest even (through
// float for the 16-bit types); integers round toward zero and saturate, NaN
// becomes 0.
HIERA_HD inline unsigned long long store_bits(int type, double value) {
  switch (type) {
    case kFloat32: return float_bits(static_cast<float>(value));
    case kFloat16: return float_to_half(static_cast<float>(value));
    case kBFloat16: return float_to_bfloat16(static_cast<float>(value));
    case kFloat64: return bits_of(value);
    default: break;
  }
  if (is_nan(value)) return 0ull;
  const double whole = trunc_of(value);
  switch (type) {
    case kInt32:
      if (whole <= -2147483648.0) return 0x80000000ull;
      if (whole >= 2147483647.0) return 0x7fffffffull;
      return static_cast<unsigned>(static_cast<int>(whole));
    case kInt64:
      if (whole <= -9223372036854775808.0) return 0x8000000000000000ull;
      if (whole >= 9223372036854775808.0) return 0x7fffffffffffffffull;
      return static_cast<unsigned long long>(static_cast<long long>(whole));
    case kUInt8:
      if (whole <= 0.0) return 0ull;
      if (whole >= 255.0) return 255ull;
      return static_cast<unsigned long long>(static_cast<unsigned>(whole));
    default: return 0ull;
  }
}

// ---------------------------------------------------------------- poison

// One poisoned element: the 16-bit word 0x7fff (A) or 0xffff (B) repeated for
// floating types (a NaN in each), the byte 0x7f (A) or 0x80 (B) for integers.
HIERA_HD inline unsigned long long poison_bits(int type, bool pattern_b) {
  const unsigned long long pattern = is_floating(type) ? (pattern_b ? 0xffffffffffffffffull : 0x7fff7fff7fff7fffull)
                                                       : (pattern_b ? 0x8080808080808080ull : 0x7f7f7f7f7f7f7f7full);
  return pattern & width_mask(type);
}

// ---------------------------------------------------------------- inputs

// The counter-th output of a splitmix64 stream started at `key`: a value
// depends only on (key, index), never on which thread or loop computes it.
HIERA_HD inline unsigned long long mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

HIERA_HD inline unsigned long long hash(unsigned long long key, unsigned long long counter) {
  return mix64(key + (counter + 1ull) * 0x9e3779b97f4a7c15ull);
}

// [0, 1) with 53 random bits.
HIERA_HD inline double uniform(unsigned long long key, unsigned long long index) {
  return static_cast<double>(hash(key, index) >> 11) * 0x1p-53;
}

// ln(x) for x in (0, 1] from + - * / alone: x = m 2^e with m in
// [sqrt(1/2), sqrt(2)], ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <
// 0.172, whose series is below 1e-18 after the 1/23 term.
HIERA_HD inline double log_unit(double x) {
  const unsigned long long bits = bits_of(x);
  int exponent = static_cast<int>((bits >> 52) & 0x7ffull) - 1023;
  double m = double_from_bits((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 0x1.6a09e667f3bcdp+0) {  // sqrt(2)
    m *= 0.5;
    ++exponent;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 0x1.642c8590b2164p-5;  // 1/23
  series = series * s2 + 0x1.8618618618618p-5;  // 1/21
  series = series * s2 + 0x1.af286bca1af28p-5;  // 1/19
  series = series * s2 + 0x1.e1e1e1e1e1e1ep-5;  // 1/17
  series = series * s2 + 0x1.1111111111111p-4;  // 1/15
  series = series * s2 + 0x1.3b13b13b13b14p-4;  // 1/13
  series = series * s2 + 0x1.745d1745d1746p-4;  // 1/11
  series = series * s2 + 0x1.c71c71c71c71cp-4;  // 1/9
  series = series * s2 + 0x1.2492492492492p-3;  // 1/7
  series = series * s2 + 0x1.999999999999ap-3;  // 1/5
  series = series * s2 + 0x1.5555555555555p-2;  // 1/3
  series = series * s2 + 1.0;
  return static_cast<double>(exponent) * 0x1.62e42fefa39efp-1 + 2.0 * s * series;  // e ln 2 + ln m
}

// sin(t) and cos(t) for t in [0, pi/2]: Taylor series, Horner in t^2; the
// first omitted terms are below 1e-18.
HIERA_HD inline double sin_quarter(double t) {
  const double t2 = t * t;
  double p = -0x1.761b41316381ap-75;  // -1/23!
  p = p * t2 + 0x1.71b8ef6dcf572p-66;   // 1/21!
  p = p * t2 - 0x1.2f49b46814157p-57;   // 1/19!
  p = p * t2 + 0x1.952c77030ad4ap-49;   // 1/17!
  p = p * t2 - 0x1.ae7f3e733b81fp-41;   // 1/15!
  p = p * t2 + 0x1.6124613a86d09p-33;   // 1/13!
  p = p * t2 - 0x1.ae64567f544e4p-26;   // 1/11!
  p = p * t2 + 0x1.71de3a556c734p-19;   // 1/9!
  p = p * t2 - 0x1.a01a01a01a01ap-13;   // 1/7!
  p = p * t2 + 0x1.1111111111111p-7;    // 1/5!
  p = p * t2 - 0x1.5555555555555p-3;    // 1/3!
  p = p * t2 + 1.0;
  return t * p;
}

HIERA_HD inline double cos_quarter(double t) {
  const double t2 = t * t;
  double p = 0x1.f2cf01972f578p-80;   // 1/24!
  p = p * t2 - 0x1.0ce396db7f853p-70;  // 1/22!
  p = p * t2 + 0x1.e542ba4020225p-62;  // 1/20!
  p = p * t2 - 0x1.6827863b97d97p-53;  // 1/18!
  p = p * t2 + 0x1.ae7f3e733b81fp-45;  // 1/16!
  p = p * t2 - 0x1.93974a8c07c9dp-37;  // 1/14!
  p = p * t2 + 0x1.1eed8eff8d898p-29;  // 1/12!
  p = p * t2 - 0x1.27e4fb7789f5cp-22;  // 1/10!
  p = p * t2 + 0x1.a01a01a01a01ap-16;  // 1/8!
  p = p * t2 - 0x1.6c16c16c16c17p-10;  // 1/6!
  p = p * t2 + 0x1.5555555555555p-5;   // 1/4!
  p = p * t2 - 0.5;                    // 1/2!
  p = p * t2 + 1.0;
  return p;
}

// cos(2 pi u), or sin(2 pi u) = cos(2 pi (u - 1/4)), for u in [0, 1): the
// quadrant from 4u (exact), the angle within it in [0, pi/2).
HIERA_HD inline double turn(double u, bool sine) {
  const double four = u * 4.0;
  const int whole = static_cast<int>(four);
  const double t = (four - static_cast<double>(whole)) * 0x1.921fb54442d18p+0;  // x pi/2
  switch ((whole + (sine ? 3 : 0)) & 3) {
    case 0: return cos_quarter(t);
    case 1: return -sin_quarter(t);
    case 2: return -cos_quarter(t);
    default: return sin_quarter(t);
  }
}

// Standard normal by Box-Muller: elements 2p and 2p + 1 are the cosine and
// sine of one pair of uniforms drawn at counters 2p and 2p + 1.
HIERA_HD inline double normal(unsigned long long key, unsigned long long index) {
  const unsigned long long pair = index >> 1;
  const double u1 = static_cast<double>((hash(key, 2ull * pair) >> 11) + 1ull) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(hash(key, 2ull * pair + 1ull) >> 11) * 0x1p-53;
  const double radius = sqrt_of(-2.0 * log_unit(u1));
  return radius * turn(u2, (index & 1ull) != 0ull);
}

// Element `index` of a trial input: floating types follow the distribution
// (uniform [0,1), normal, normal x 1e3); integer types (usually indices or
// counts, which negative or huge values would send out of bounds) are
// non-negative and small: [0, 64), |normal| x 16, [0, 1000). A range [lo, hi)
// overrides both with a uniform draw (integers rounded down).
HIERA_HD inline double draw(int type, int distribution, unsigned long long key, unsigned long long index, bool has_range,
                            double lo, double hi) {
  if (has_range) {
    const double value = lo + uniform(key, index) * (hi - lo);
    return is_floating(type) ? value : floor_of(value);
  }
  if (is_floating(type)) {
    switch (distribution) {
      case kNormal: return normal(key, index);
      case kLarge: return normal(key, index) * 1e3;
      default: return uniform(key, index);
    }
  }
  switch (distribution) {
    case kNormal: return floor_of(fabs_of(normal(key, index)) * 16.0);
    case kLarge: return floor_of(uniform(key, index) * 1000.0);
    default: return floor_of(uniform(key, index) * 64.0);
  }
}

HIERA_HD inline unsigned long long generate_bits(int type, int distribution, unsigned long long key,
                                                 unsigned long long index, bool has_range, double lo, double hi) {
  return store_bits(type, draw(type, distribution, key, index, has_range, lo, hi));
}

// ---------------------------------------------------------------- comparison

inline constexpr unsigned kUnwritten = 1u;         // written by the reference, never by the candidate
inline constexpr unsigned kCompared = 2u;          // written by both
inline constexpr unsigned kNondeterministic = 4u;  // run 1 and run 2 differ in their bits
inline constexpr unsigned kNanInf = 8u;            // NaN/Inf where the reference has none, or the reverse
inline constexpr unsigned kMismatch = 16u;         // finite, beyond atol + rtol |reference|

struct ElementVerdict {
  unsigned flags;
  double abs_error;  // |run1 - reference| for finite pairs, else 0
  double rel_error;  // abs_error / |reference| when the reference is not 0, else 0
};

// One output element: the reference's bits, the candidate's after run 1
// (poison A before it) and after run 2 (poison B before it). `poisoned` is
// false for inout arguments, which start from real data. Values are judged on
// run 1; an element at A after run 1 and at B after run 2 was never written,
// and one the reference left at A is skipped.
HIERA_HD inline ElementVerdict classify(int type, unsigned long long reference, unsigned long long run1,
                                        unsigned long long run2, double atol, double rtol, bool poisoned) {
  ElementVerdict verdict{0u, 0.0, 0.0};
  const bool reference_wrote = !poisoned || reference != poison_bits(type, false);
  if (poisoned && run1 == poison_bits(type, false) && run2 == poison_bits(type, true)) {
    if (reference_wrote) verdict.flags = kUnwritten;
    return verdict;
  }
  if (!reference_wrote) return verdict;  // the reference leaves it alone, so may the candidate
  verdict.flags = kCompared;
  if (run1 != run2) verdict.flags |= kNondeterministic;
  const double expected = load_double(type, reference);
  const double got = load_double(type, run1);
  if (is_nan(expected) || is_inf(expected) || !is_finite(got)) {
    // NaN only where the reference has NaN, Inf only where it has the same Inf.
    const bool same = (is_nan(expected) && is_nan(got)) || (is_inf(expected) && got == expected);
    if (!same) verdict.flags |= kNanInf;
    return verdict;
  }
  verdict.abs_error = fabs_of(got - expected);
  if (expected != 0.0) verdict.rel_error = verdict.abs_error / fabs_of(expected);
  if (verdict.abs_error > atol + rtol * fabs_of(expected)) verdict.flags |= kMismatch;
  return verdict;
}

inline constexpr unsigned long long kNoIndex = ~0ull;

// What a comparison accumulates over a buffer. The device kernel and the host
// loop fill the same struct (its layout is shared with the GPU). The maxima
// are kept as the bits of non-negative doubles, which order like the values,
// so the device can take them with an integer atomicMax.
struct CompareStats {
  unsigned long long compared;
  unsigned long long unwritten;
  unsigned long long mismatches;
  unsigned long long nan_inf;
  unsigned long long nondeterministic;
  unsigned long long max_abs_error_bits;
  unsigned long long max_rel_error_bits;
  unsigned long long first_unwritten;  // kNoIndex when there is none
  unsigned long long first_mismatch;
  unsigned long long first_nan_inf;
  unsigned long long first_nondeterministic;
};

HIERA_HD inline CompareStats empty_compare_stats() {
  return CompareStats{0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull, kNoIndex, kNoIndex, kNoIndex, kNoIndex};
}

HIERA_HD inline void note_first(unsigned long long& first, unsigned long long index) {
  if (index < first) first = index;
}

HIERA_HD inline void note_max(unsigned long long& max_bits, double value) {
  const unsigned long long bits = bits_of(value);
  if (bits > max_bits) max_bits = bits;
}

// Adds element `index`'s verdict.
HIERA_HD inline void note(CompareStats& stats, const ElementVerdict& verdict, unsigned long long index) {
  if (verdict.flags & kUnwritten) {
    ++stats.unwritten;
    note_first(stats.first_unwritten, index);
  }
  if (verdict.flags & kCompared) ++stats.compared;
  if (verdict.flags & kNondeterministic) {
    ++stats.nondeterministic;
    note_first(stats.first_nondeterministic, index);
  }
  if (verdict.flags & kNanInf) {
    ++stats.nan_inf;
    note_first(stats.first_nan_inf, index);
  }
  if (verdict.flags & kMismatch) {
    ++stats.mismatches;
    note_first(stats.first_mismatch, index);
  }
  note_max(stats.max_abs_error_bits, verdict.abs_error);
  note_max(stats.max_rel_error_bits, verdict.rel_error);
}

// Input mutation: elements whose bits changed, and the first of them.
struct ChangeStats {
  unsigned long long changed;
  unsigned long long first_changed;  // kNoIndex when there is none
};

HIERA_HD inline ChangeStats empty_change_stats() { return ChangeStats{0ull, kNoIndex}; }

HIERA_HD inline void note_change(ChangeStats& stats, unsigned long long original, unsigned long long after,
                                 unsigned long long index) {
  if (original == after) return;
  ++stats.changed;
  note_first(stats.first_changed, index);
}

}  // namespace hiera::engine::worker::check
