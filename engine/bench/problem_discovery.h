#pragma once
// Finds the problems of a suite directory: every .py file, at any depth, that
// defines an nn.Module class named Model (KernelBench's entry point). Other
// files (helpers, __init__.py, notes) are not problems and are skipped, as are
// hidden folders and __pycache__. A file with a Model that lacks
// get_inputs() is still a problem: running it reports what is missing.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/bench/problem.h"

namespace hiera::engine::bench {

// The directory cannot be read, or the filter is not a regular expression.
class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when the Python source defines `class Model(...Module...):`.
bool defines_model(std::string_view source);

// Orders names as people count: digit runs compare by value, so "2_x" comes
// before "10_x" (KernelBench numbers its problems); otherwise byte order.
bool natural_less(std::string_view a, std::string_view b);

// The problems under `dir`, ordered by group then name (natural_less), kept
// when `filter` (an ECMAScript regular expression, searched in Problem::id())
// matches; an empty filter keeps all. Throws DiscoveryError.
std::vector<Problem> discover_problems(const std::filesystem::path& dir, const std::string& filter = "");

}  // namespace hiera::engine::bench
