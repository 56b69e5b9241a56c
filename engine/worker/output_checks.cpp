#include "engine/worker/output_checks.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace hiera::worker {

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

std::string at(std::size_t index, const std::string& what) { return "[" + std::to_string(index) + "]: " + what; }

}  // namespace

OutputComparison compare_output(ScalarType type, std::size_t count, const std::byte* reference, const std::byte* run1,
                                const std::byte* run2, const Tolerance& tolerance, bool poisoned) {
  const std::size_t width = size_of(type);
  const auto poison_a = poison_element(type, Poison::A);
  const auto poison_b = poison_element(type, Poison::B);
  OutputComparison result;
  result.elements = count;
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* r = reference + i * width;
    const std::byte* c1 = run1 + i * width;
    const std::byte* c2 = run2 + i * width;
    const bool reference_wrote = !poisoned || std::memcmp(r, poison_a.data(), width) != 0;
    if (poisoned && std::memcmp(c1, poison_a.data(), width) == 0 && std::memcmp(c2, poison_b.data(), width) == 0) {
      if (reference_wrote) {
        if (result.unwritten++ == 0) result.first_unwritten = at(i, "expected " + format_value(load_as_double(type, r)) + ", never written");
      }
      continue;
    }
    if (!reference_wrote) continue;  // the reference leaves it alone, so may the candidate
    ++result.compared;
    if (std::memcmp(c1, c2, width) != 0 && result.nondeterministic++ == 0) {
      result.first_nondeterministic =
          at(i, "first run " + format_value(load_as_double(type, c1)) + ", second run " + format_value(load_as_double(type, c2)));
    }
    const double expected = load_as_double(type, r);
    const double got = load_as_double(type, c1);
    // Formatted only for the first of each problem: this loop runs over every element.
    auto described = [&] { return at(i, "expected " + format_value(expected) + ", got " + format_value(got)); };
    if (std::isnan(expected) || std::isinf(expected) || !std::isfinite(got)) {
      // NaN only where the reference has NaN, Inf only where it has the same Inf.
      const bool same = (std::isnan(expected) && std::isnan(got)) || (std::isinf(expected) && got == expected);
      if (!same && result.nan_inf++ == 0) result.first_nan_inf = described();
      continue;
    }
    const double diff = std::fabs(got - expected);
    if (diff > result.max_abs_error) result.max_abs_error = diff;
    if (expected != 0.0) {
      const double rel = diff / std::fabs(expected);
      if (rel > result.max_rel_error) result.max_rel_error = rel;
    }
    if (diff > tolerance.atol + tolerance.rtol * std::fabs(expected) && result.mismatches++ == 0) {
      result.first_mismatch = described();
    }
  }
  return result;
}

InputComparison compare_input(ScalarType type, std::size_t count, const std::byte* original, const std::byte* after) {
  InputComparison result;
  const std::size_t width = size_of(type);
  if (count == 0 || std::memcmp(original, after, count * width) == 0) return result;  // the common case, fast
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(original + i * width, after + i * width, width) != 0 && result.changed++ == 0) {
      result.first_changed = at(i, "was " + format_value(load_as_double(type, original + i * width)) + ", now " +
                                       format_value(load_as_double(type, after + i * width)));
    }
  }
  return result;
}

}  // namespace hiera::worker
