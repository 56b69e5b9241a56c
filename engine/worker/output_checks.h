#pragma once
// Verification rules 2 to 5 on the host: poison patterns, and the
// element-by-element comparison of the reference's output with the
// candidate's two runs, in double precision. The per-element rules live in
// check_math.h, shared with the GPU's check kernels (check_kernels.h), and
// both paths turn their counts into the same messages here (describe_*).
//
// Outputs are poisoned before each run: pattern A before the reference and
// the candidate's first run, pattern B before its second. An element still at
// A after run 1 and at B after run 2 was never written; one at A in the
// reference output was left unwritten by the reference too, and is skipped.
// Two patterns keep a legitimately written value that happens to equal one of
// them (a uint8 127) from being mistaken for an unwritten element.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/default_tolerance.h"
#include "engine/worker/check_math.h"
#include "engine/worker/scalar_types.h"

namespace hiera::engine::worker {

enum class Poison { A, B };

// The bytes of one poisoned element: NaN for floating types (0x7fff... for A,
// 0xffff... for B), 0x7f... and 0x80... for integers.
std::vector<std::byte> poison_element(ScalarType type, Poison which);
// A whole buffer's worth (for hosts that fill before copying).
void fill_poison(ScalarType type, Poison which, std::byte* out, std::size_t count);
// The 16-bit word (floats) or byte (integers) that repeats through a poisoned buffer.
std::uint16_t poison_word16(Poison which);
unsigned char poison_byte(Poison which);

struct Tolerance {
  double atol = engine::kDefaultTolerance;
  double rtol = engine::kDefaultTolerance;
};

struct OutputComparison {
  std::uint64_t elements = 0;
  std::uint64_t compared = 0;      // written by the reference and by the candidate
  std::uint64_t unwritten = 0;     // written by the reference, never by the candidate
  std::uint64_t mismatches = 0;    // finite values beyond tolerance
  std::uint64_t nan_inf = 0;       // NaN/Inf where the reference has none, or the reverse
  std::uint64_t nondeterministic = 0;  // run 1 and run 2 differ in their bits
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  // The first instance of each problem, as "[index]: expected x, got y".
  std::string first_unwritten;
  std::string first_mismatch;
  std::string first_nan_inf;
  std::string first_nondeterministic;
};

// `reference`, `run1` and `run2` each hold `count` elements of `type`.
// `poisoned` is false for inout arguments, which start from real data.
OutputComparison compare_output(ScalarType type, std::size_t count, const std::byte* reference, const std::byte* run1,
                                const std::byte* run2, const Tolerance& tolerance, bool poisoned);

struct InputComparison {
  std::uint64_t changed = 0;
  std::string first_changed;
};

// Bit-for-bit comparison of an input after a run with its original.
InputComparison compare_input(ScalarType type, std::size_t count, const std::byte* original, const std::byte* after);

// The bits of one element (in the low bytes) of each compared buffer.
struct OutputSample {
  std::uint64_t reference = 0;
  std::uint64_t run1 = 0;
  std::uint64_t run2 = 0;
};
struct InputSample {
  std::uint64_t original = 0;
  std::uint64_t after = 0;
};

// A comparison's result from what was accumulated over its `count` elements
// (by the host loop or a device kernel): `sample` is called only at the
// stats' first indices, for the elements the messages quote.
OutputComparison describe_output(ScalarType type, std::uint64_t count, const check::CompareStats& stats,
                                 const std::function<OutputSample(std::uint64_t index)>& sample);
InputComparison describe_input(ScalarType type, const check::ChangeStats& stats,
                               const std::function<InputSample(std::uint64_t index)>& sample);

// A number as the messages print it (shortest round-trip form).
std::string format_value(double value);

}  // namespace hiera::engine::worker
