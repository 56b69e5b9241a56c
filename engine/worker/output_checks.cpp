#include "engine/worker/output_checks.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

namespace hiera::engine::worker {

std::uint16_t poison_word16(Poison which) { return which == Poison::A ? 0x7fff : 0xffff; }
unsigned char poison_byte(Poison which) { return which == Poison::A ? 0x7f : 0x80; }

std::vector<std::byte> poison_element(ScalarType type, Poison which) {
  std::vector<std::byte> bytes(size_of(type));
  fill_poison(type, which, bytes.data(), 1);
  return bytes;
}

void fill_poison(ScalarType type, Poison which, std::byte* out, std::size_t count) {
  const std::size_t total = count * size_of(type);
  if (is_floating(type)) {
    // 0x7fff repeated is a NaN in every floating type (exponent all ones, a
    // non-zero mantissa); 0xffff repeated is another, negative one.
    const std::uint16_t word = poison_word16(which);
    for (std::size_t i = 0; i + 1 < total; i += 2) std::memcpy(out + i, &word, 2);
  } else {
    std::memset(out, poison_byte(which), total);
  }
}

std::string format_value(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest text that reads back as the same value, at float precision
  // when the value is a float (most outputs are): 2.00000024, not 2.0000002384185791.
  const bool is_float = static_cast<double>(static_cast<float>(value)) == value;
  for (int precision = 1; precision <= 17; ++precision) {
    std::ostringstream out;
    out.precision(precision);
    out << value;
    const double back = std::stod(out.str());
    if (is_float ? static_cast<float>(back) == static_cast<float>(value) : back == value) return out.str();
  }
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

namespace {

static_assert(std::endian::native == std::endian::little,
              "elements travel as the low bytes of a 64-bit word, as on the GPU");

std::string at(std::uint64_t index, const std::string& what) { return "[" + std::to_string(index) + "]: " + what; }

int code(ScalarType type) { return static_cast<int>(type); }

// Element `index` of a buffer of `width`-byte elements, as bits.
std::uint64_t bits_at(const std::byte* data, std::size_t width, std::size_t index) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, data + index * width, width);
  return bits;
}

// The host's pass over every element; the type is a template argument so the
// per-element rules compile to straight-line code for it.
template <int Type>
check::CompareStats accumulate(std::size_t count, const std::byte* reference, const std::byte* run1, const std::byte* run2,
                               const Tolerance& tolerance, bool poisoned) {
  constexpr std::size_t width = static_cast<std::size_t>(check::width_of(Type));
  check::CompareStats stats = check::empty_compare_stats();
  for (std::size_t i = 0; i < count; ++i) {
    check::note(stats,
                check::classify(Type, bits_at(reference, width, i), bits_at(run1, width, i), bits_at(run2, width, i),
                                tolerance.atol, tolerance.rtol, poisoned),
                i);
  }
  return stats;
}

}  // namespace

OutputComparison compare_output(ScalarType type, std::size_t count, const std::byte* reference, const std::byte* run1,
                                const std::byte* run2, const Tolerance& tolerance, bool poisoned) {
  check::CompareStats stats{};
  switch (type) {
    case ScalarType::Float32: stats = accumulate<check::kFloat32>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::Float16: stats = accumulate<check::kFloat16>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::BFloat16: stats = accumulate<check::kBFloat16>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::Float64: stats = accumulate<check::kFloat64>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::Int32: stats = accumulate<check::kInt32>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::Int64: stats = accumulate<check::kInt64>(count, reference, run1, run2, tolerance, poisoned); break;
    case ScalarType::UInt8: stats = accumulate<check::kUInt8>(count, reference, run1, run2, tolerance, poisoned); break;
  }
  const std::size_t width = size_of(type);
  return describe_output(type, count, stats, [&](std::uint64_t i) {
    return OutputSample{bits_at(reference, width, i), bits_at(run1, width, i), bits_at(run2, width, i)};
  });
}

OutputComparison describe_output(ScalarType type, std::uint64_t count, const check::CompareStats& stats,
                                 const std::function<OutputSample(std::uint64_t index)>& sample) {
  OutputComparison result;
  result.elements = count;
  result.compared = stats.compared;
  result.unwritten = stats.unwritten;
  result.mismatches = stats.mismatches;
  result.nan_inf = stats.nan_inf;
  result.nondeterministic = stats.nondeterministic;
  result.max_abs_error = check::double_from_bits(stats.max_abs_error_bits);
  result.max_rel_error = check::double_from_bits(stats.max_rel_error_bits);
  auto text = [&](std::uint64_t bits) { return format_value(check::load_double(code(type), bits)); };
  if (stats.unwritten > 0) {
    const OutputSample s = sample(stats.first_unwritten);
    result.first_unwritten = at(stats.first_unwritten, "expected " + text(s.reference) + ", never written");
  }
  if (stats.nondeterministic > 0) {
    const OutputSample s = sample(stats.first_nondeterministic);
    result.first_nondeterministic =
        at(stats.first_nondeterministic, "first run " + text(s.run1) + ", second run " + text(s.run2));
  }
  if (stats.nan_inf > 0) {
    const OutputSample s = sample(stats.first_nan_inf);
    result.first_nan_inf = at(stats.first_nan_inf, "expected " + text(s.reference) + ", got " + text(s.run1));
  }
  if (stats.mismatches > 0) {
    const OutputSample s = sample(stats.first_mismatch);
    result.first_mismatch = at(stats.first_mismatch, "expected " + text(s.reference) + ", got " + text(s.run1));
  }
  return result;
}

InputComparison compare_input(ScalarType type, std::size_t count, const std::byte* original, const std::byte* after) {
  const std::size_t width = size_of(type);
  if (count == 0 || std::memcmp(original, after, count * width) == 0) return {};  // the common case, fast
  check::ChangeStats stats = check::empty_change_stats();
  for (std::size_t i = 0; i < count; ++i) check::note_change(stats, bits_at(original, width, i), bits_at(after, width, i), i);
  return describe_input(type, stats, [&](std::uint64_t i) {
    return InputSample{bits_at(original, width, i), bits_at(after, width, i)};
  });
}

InputComparison describe_input(ScalarType type, const check::ChangeStats& stats,
                               const std::function<InputSample(std::uint64_t index)>& sample) {
  InputComparison result;
  result.changed = stats.changed;
  if (stats.changed > 0) {
    const InputSample s = sample(stats.first_changed);
    result.first_changed = at(stats.first_changed, "was " + format_value(check::load_double(code(type), s.original)) +
                                                       ", now " + format_value(check::load_double(code(type), s.after)));
  }
  return result;
}

}  // namespace hiera::engine::worker
