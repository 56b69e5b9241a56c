#pragma once
// Fresh random inputs for each verification trial (rule 1): the trial's seed
// picks the values, the trial number the distribution, cycling uniform [0,1),
// normal (with negatives) and large magnitudes (normal x 1e3). The generator
// is counter-based (check_math.h): element i is a function of (seed, i)
// alone, so the GPU's check kernels produce these very values in parallel,
// and a seed gives the same inputs on every machine and compiler.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "engine/worker/scalar_types.h"

namespace hiera::engine::worker {

enum class Distribution { Uniform, Normal, Large };

const char* to_string(Distribution distribution);
Distribution distribution_for_trial(int trial);

// Fills `count` elements of `type` at `out`. Floating types follow the
// distribution; integer types (usually indices or counts, which negative or
// huge values would send out of bounds) are drawn non-negative and small:
// [0, 64) uniform, |normal| x 16, or [0, 1000) for large. `range` [lo, hi)
// overrides both with a uniform draw. Element i is
// check::generate_bits(type, distribution, seed, i, ...), as on the GPU.
void fill_random(ScalarType type, std::byte* out, std::size_t count, Distribution distribution, std::uint64_t seed,
                 const std::optional<std::pair<double, double>>& range = std::nullopt);
// The bits of element `index` of that fill (in the low bytes), computed alone.
std::uint64_t random_element(ScalarType type, std::uint64_t index, Distribution distribution, std::uint64_t seed,
                             const std::optional<std::pair<double, double>>& range = std::nullopt);

// A seed per (trial seed, argument), so arguments of one trial differ.
std::uint64_t argument_seed(std::uint64_t trial_seed, std::size_t argument_index);

}  // namespace hiera::engine::worker
