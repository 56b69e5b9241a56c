// Reading the worker's profile result (profile_result.h).
#include "engine/eval/profile_result.h"

#include <cmath>

#include "engine/eval/job_results.h"

namespace hiera::engine::eval {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const std::string& what) { throw MalformedResult(what); }

std::int64_t count_field(const json& kernel, const std::string& where, const char* key, bool required) {
  const auto it = kernel.find(key);
  const std::string field = where + "." + key;
  if (it == kernel.end() || it->is_null()) {
    if (required) malformed(field + " is missing");
    return 0;
  }
  if (it->is_number_integer() || it->is_number_unsigned()) {
    const auto value = it->get<std::int64_t>();
    if (value >= 0) return value;
  } else if (it->is_number_float()) {
    const double value = it->get<double>();
    if (value >= 0.0 && value < 9e18 && std::floor(value) == value) return static_cast<std::int64_t>(value);
  }
  malformed(field + " must be a non-negative integer");
}

std::optional<std::array<std::int64_t, 3>> dims(const json& kernel, const std::string& where, const char* key) {
  const auto it = kernel.find(key);
  if (it == kernel.end() || it->is_null()) return std::nullopt;
  if (!it->is_array() || it->size() != 3) malformed(where + "." + key + " must be [x, y, z] or null");
  std::array<std::int64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(*it)[i].is_number_integer() && !(*it)[i].is_number_unsigned()) {
      malformed(where + "." + key + " must be [x, y, z] or null");
    }
    out[i] = (*it)[i].get<std::int64_t>();
  }
  return out;
}

// A counter of "metrics": a number, or 0 when it is missing or null.
double counter(const json& metrics, const char* key) {
  const auto it = metrics.find(key);
  if (it == metrics.end() || it->is_null()) return 0.0;
  if (!it->is_number()) malformed(std::string("profile.metrics.") + key + " must be a number");
  return it->get<double>();
}

// "metrics": the counters when the worker measured them ("dram_throughput_pct"
// is there), else its "unavailable" reason; anything but an object is neither.
void read_metrics(const json& result, KernelProfile& profile) {
  const auto metrics = result.find("metrics");
  if (metrics == result.end() || !metrics->is_object()) return;
  if (const auto dram = metrics->find("dram_throughput_pct"); dram != metrics->end() && !dram->is_null()) {
    profile.counters = ProfileCounters{counter(*metrics, "dram_throughput_pct"), counter(*metrics, "sm_throughput_pct"),
                                       counter(*metrics, "achieved_occupancy_pct")};
  }
  if (const auto reason = metrics->find("unavailable"); reason != metrics->end() && reason->is_string()) {
    profile.metrics_unavailable = reason->get<std::string>();
  }
}

}  // namespace

KernelProfile read_kernel_profile(const json& result) {
  if (!result.is_object()) malformed("profile must be an object");
  const auto kernels = result.find("kernels");
  if (kernels == result.end()) malformed("profile.kernels is missing");
  if (!kernels->is_array()) malformed("profile.kernels must be an array");
  KernelProfile profile;
  for (std::size_t i = 0; i < kernels->size(); ++i) {
    const json& entry = (*kernels)[i];
    const std::string where = "profile.kernels[" + std::to_string(i) + "]";
    if (!entry.is_object()) malformed(where + " must be an object");
    ProfiledKernel kernel;
    const auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      malformed(where + ".name must be a non-empty string");
    }
    kernel.name = name->get<std::string>();
    kernel.grid = dims(entry, where, "grid");
    kernel.block = dims(entry, where, "block");
    kernel.calls = count_field(entry, where, "calls", true);
    kernel.total_ns = count_field(entry, where, "total_ns", true);
    kernel.mean_ns = count_field(entry, where, "mean_ns", false);
    profile.kernels.push_back(std::move(kernel));
  }
  read_metrics(result, profile);
  return profile;
}

}  // namespace hiera::engine::eval
