#pragma once
// The worker's `profile` result (JOB_PROTOCOL.md): the kernels one side ran,
// with grid, block, calls and GPU time, as typed values. Parsing is strict
// about what the planner cannot do without (a name, calls, total_ns) and
// lenient about the rest (grid and block may be null: CPU operators, memcpy).
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::plan {

// A profile result that does not have the shape JOB_PROTOCOL.md gives it; the message names the field.
class MalformedProfile : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProfiledKernel {
  std::string name;
  std::optional<std::array<std::int64_t, 3>> grid, block;
  std::int64_t calls = 0;     // launches over all profiled calls of the reference
  std::int64_t total_ns = 0;  // GPU time over all of them
  std::int64_t mean_ns = 0;
};

struct Profile {
  std::vector<ProfiledKernel> kernels;
  nlohmann::json metrics = nlohmann::json::object();  // as the worker sent it: counters or {"unavailable": reason}
};

// Throws MalformedProfile ("profile.kernels[2].total_ns must be a non-negative integer").
Profile parse_profile(const nlohmann::json& result);

}  // namespace hiera::engine::plan
