// Parsing the worker's profile result (worker_profile.h).
#include "engine/plan/worker_profile.h"

#include <cmath>

namespace hiera::engine::plan {
namespace {

using nlohmann::json;

std::int64_t count_field(const json& kernel, const std::string& where, const char* key, bool required) {
  const auto it = kernel.find(key);
  const std::string field = where + "." + key;
  if (it == kernel.end() || it->is_null()) {
    if (required) throw MalformedProfile(field + " is missing");
    return 0;
  }
  if (it->is_number_integer() || it->is_number_unsigned()) {
    const auto value = it->get<std::int64_t>();
    if (value >= 0) return value;
  } else if (it->is_number_float()) {
    const double value = it->get<double>();
    if (value >= 0.0 && value < 9e18 && std::floor(value) == value) return static_cast<std::int64_t>(value);
  }
  throw MalformedProfile(field + " must be a non-negative integer");
}

std::optional<std::array<std::int64_t, 3>> dims(const json& kernel, const std::string& where, const char* key) {
  const auto it = kernel.find(key);
  if (it == kernel.end() || it->is_null()) return std::nullopt;
  if (!it->is_array() || it->size() != 3) throw MalformedProfile(where + "." + key + " must be [x, y, z] or null");
  std::array<std::int64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(*it)[i].is_number_integer() && !(*it)[i].is_number_unsigned()) {
      throw MalformedProfile(where + "." + key + " must be [x, y, z] or null");
    }
    out[i] = (*it)[i].get<std::int64_t>();
  }
  return out;
}

}  // namespace

Profile parse_profile(const json& result) {
  if (!result.is_object()) throw MalformedProfile("profile must be an object");
  const auto kernels = result.find("kernels");
  if (kernels == result.end()) throw MalformedProfile("profile.kernels is missing");
  if (!kernels->is_array()) throw MalformedProfile("profile.kernels must be an array");
  Profile profile;
  for (std::size_t i = 0; i < kernels->size(); ++i) {
    const json& entry = (*kernels)[i];
    const std::string where = "profile.kernels[" + std::to_string(i) + "]";
    if (!entry.is_object()) throw MalformedProfile(where + " must be an object");
    ProfiledKernel kernel;
    const auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      throw MalformedProfile(where + ".name must be a non-empty string");
    }
    kernel.name = name->get<std::string>();
    kernel.grid = dims(entry, where, "grid");
    kernel.block = dims(entry, where, "block");
    kernel.calls = count_field(entry, where, "calls", true);
    kernel.total_ns = count_field(entry, where, "total_ns", true);
    kernel.mean_ns = count_field(entry, where, "mean_ns", false);
    profile.kernels.push_back(std::move(kernel));
  }
  if (const auto metrics = result.find("metrics"); metrics != result.end() && metrics->is_object()) {
    profile.metrics = *metrics;
  }
  return profile;
}

}  // namespace hiera::engine::plan
