#include "engine/spec/clause_registry.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "engine/common/size_expression.h"
#include "engine/spec/kernel_contract.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& expected, const json& value) {
  throw SpecError("must be " + expected + ", got " + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool is_finite_number(const json& value) { return value.is_number() && std::isfinite(value.get<double>()); }
bool is_count(const json& value, std::int64_t minimum) {
  return value.is_number_integer() && value.get<std::int64_t>() >= minimum;
}

void positive_number(const json& value) {
  if (!is_finite_number(value) || value.get<double>() <= 0.0) bad("a positive number", value);
}

void boolean(const json& value) {
  if (!value.is_boolean()) bad("true or false", value);
}

void strings_from(const json& value, std::initializer_list<std::string_view> allowed, const std::string& expected,
                  bool allow_empty) {
  if (!value.is_array() || (!allow_empty && value.empty())) bad(expected, value);
  std::set<std::string> seen;
  for (const auto& item : value) {
    if (!item.is_string() || item.get<std::string>().empty()) bad(expected, value);
    const auto text = item.get<std::string>();
    if (allowed.size() && std::find(allowed.begin(), allowed.end(), text) == allowed.end()) bad(expected, value);
    if (!seen.insert(text).second) throw SpecError("lists '" + text + "' twice");
  }
}

void tolerance(const json& value) {
  const std::string expected = "a non-negative number or an object of dtype (float64, float32, float16, bfloat16, *) to non-negative number";
  if (is_finite_number(value)) {
    if (value.get<double>() < 0.0) bad(expected, value);
    return;
  }
  if (!value.is_object() || value.empty()) bad(expected, value);
  for (const auto& [dtype, number] : value.items()) {
    if (dtype != "float64" && dtype != "float32" && dtype != "float16" && dtype != "bfloat16" && dtype != "*") {
      bad(expected, value);
    }
    if (!is_finite_number(number) || number.get<double>() < 0.0) bad(expected, value);
  }
}

void allow(const json& value) {
  strings_from(value, {"tf32", "bf16", "fp16", "fp8"}, "a list of tf32, bf16, fp16, fp8", true);
}

void nan_inf(const json& value) {
  if (!value.is_string() || (value.get<std::string>() != "propagate" && value.get<std::string>() != "forbid")) {
    bad("\"propagate\" or \"forbid\"", value);
  }
}

bool is_shape(const json& value) {
  return value.is_array() && std::all_of(value.begin(), value.end(), [](const json& d) { return is_count(d, 0); });
}

void tensors(const json& value) {
  const std::string expected = "a list of {\"shape\": [dims], \"dtype\": name}";
  if (!value.is_array()) bad(expected, value);
  for (const auto& tensor : value) {
    if (!tensor.is_object()) bad(expected, value);
    for (const auto& [key, field] : tensor.items()) {
      if (key == "shape" ? !is_shape(field)
          : key == "dtype" || key == "name" ? !field.is_string() || field.get<std::string>().empty()
          : true) {
        bad(expected, value);
      }
    }
    if (!tensor.contains("shape") || !tensor.contains("dtype")) bad(expected, value);
  }
}

void output_count(const json& value) {
  if (!is_count(value, 1)) bad("a positive integer", value);
}

void shapes(const json& value) {
  if (!value.is_array() || !std::all_of(value.begin(), value.end(), is_shape)) bad("a list of shapes (lists of dims)", value);
}

void dtypes(const json& value) {
  if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](const json& d) {
        return d.is_string() && !d.get<std::string>().empty();
      })) {
    bad("a list of dtype names", value);
  }
}

void size_map(const json& value) {
  const std::string expected = "a non-empty object of size names to positive integers";
  if (!value.is_object() || value.empty()) bad(expected, value);
  for (const auto& [name, size] : value.items()) {
    if (!is_identifier(name) || !is_count(size, 1)) bad(expected, value);
  }
}

void args(const json& value) {
  if (!value.is_array() || value.empty()) bad("a non-empty list of arguments", value);
  std::set<std::string> seen;
  for (const auto& item : value) {
    const KernelArg arg = KernelArg::from_json(item);
    if (!seen.insert(arg.name).second) throw SpecError("argument '" + arg.name + "' is listed twice");
  }
}

void launch(const json& value) { Launch::from_json(value); }

void shape_range(const json& value) {
  const std::string expected = "a non-empty object of size names to [lo, hi] with 1 <= lo <= hi";
  if (!value.is_object() || value.empty()) bad(expected, value);
  for (const auto& [name, range] : value.items()) {
    if (!is_identifier(name) || !range.is_array() || range.size() != 2 || !is_count(range[0], 1) ||
        !is_count(range[1], 1) || range[0].get<std::int64_t>() > range[1].get<std::int64_t>()) {
      bad(expected, value);
    }
  }
}

void names(const json& value) { strings_from(value, {}, "a list of names", true); }

void outputs_compared(const json& value) {
  const std::string expected = "a non-empty list of output indices or output argument names";
  if (!value.is_array() || value.empty()) bad(expected, value);
  std::set<std::string> seen;
  for (const auto& item : value) {
    if (!is_count(item, 0) && !(item.is_string() && is_identifier(item.get<std::string>()))) bad(expected, value);
    if (!seen.insert(item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).second) throw SpecError("lists " + item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " twice");
  }
}

void anything(const json&) {}

void regions(const json& value) {
  const std::string expected = "a list of regions, each an object with a \"name\"";
  if (!value.is_array()) bad(expected, value);
  for (const auto& region : value) {
    if (!region.is_object() || !region.contains("name") || !region["name"].is_string()) bad(expected, value);
  }
}

void work_count(const json& value) {
  if (is_count(value, 0)) return;
  if (is_finite_number(value) && value.get<double>() >= 0.0) return;
  if (!value.is_string()) bad("a size expression or a non-negative number", value);
  try {
    size_expression_names(value.get<std::string>());
  } catch (const SizeExpressionError& e) {
    throw SpecError(e.what());
  }
}

void target_speedup(const json& value) {
  if (!is_finite_number(value) || value.get<double>() < 1.0) bad("a number >= 1 (a speedup over the reference)", value);
}

void spaces(const json& value) { strings_from(value, {"S1", "S2", "S3"}, "a non-empty list of S1, S2, S3", false); }

void libraries(const json& value) { strings_from(value, {}, "a list of library names", true); }

void candidate_count(const json& value) {
  if (!is_count(value, 1)) bad("a positive integer", value);
}

constexpr auto I = Family::Interface;
constexpr auto N = Family::Numerics;
constexpr auto V = Family::Invariants;
constexpr auto P = Family::Performance;
constexpr auto E = Family::Environment;
constexpr std::optional<TargetKind> kAny = std::nullopt;

}  // namespace

const std::vector<ClauseInfo>& clause_registry() {
  static const std::vector<ClauseInfo> registry = {
      {"interface.inputs", I, "runtime", "", "the inputs the reference takes (shape, dtype); the candidate is called with the same", TargetKind::Pytorch, tensors},
      {"interface.outputs", I, "count", "", "how many outputs forward returns", TargetKind::Pytorch, output_count},
      {"interface.shapes", I, "shape", "", "the shape of each output", TargetKind::Pytorch, shapes},
      {"interface.dtypes", I, "dtype", "", "the dtype of each output", TargetKind::Pytorch, dtypes},
      {"interface.sizes", I, "shape", "", "named sizes the shapes are made of (N, batch_size, ...)", kAny, size_map},
      {"interface.args", I, "values", "", "the kernel's arguments in order: role, type, extent or value", TargetKind::Cuda, args},
      {"interface.launch", I, "runtime", "", "the reference kernel's launch geometry", TargetKind::Cuda, launch},
      {"interface.shape_range", I, "values", "", "sizes the candidate must handle, [lo, hi] each; tried at a second size", kAny, shape_range},
      {"interface.layout", I, "", "the worker compares shapes and values, not strides", "memory layout of inputs and outputs", kAny, anything},
      {"interface.inplace", I, "input_mutation", "", "inputs the candidate may overwrite", kAny, names},
      {"interface.outputs_compared", I, "values", "", "the outputs that matter (the worker compares every output)", kAny, outputs_compared},
      {"numerics.atol", N, "values", "", "absolute tolerance, per dtype or for all", kAny, tolerance},
      {"numerics.rtol", N, "values", "", "relative tolerance, per dtype or for all", kAny, tolerance},
      {"numerics.allow", N, "static", "", "reduced precision the candidate may use (tf32, bf16, fp16, fp8)", kAny, allow},
      {"numerics.deterministic", N, "determinism", "", "whether two runs on the same inputs must agree bit for bit", kAny, boolean},
      {"numerics.nan_inf", N, "nan_inf", "", "NaN/Inf only where the reference has them (propagate), or none at all (forbid)", kAny, nan_inf},
      {"invariants.no_input_mutation", V, "input_mutation", "", "inputs are read-only (except interface.inplace)", kAny, boolean},
      {"invariants.stateless", V, "determinism", "", "no state carried between calls", kAny, boolean},
      {"invariants.shape_generality", V, "shape_generality", "", "second sizes for one more trial (without them, the leading dimension halved), so a candidate cannot hard-code the first", kAny, size_map},
      {"performance.reference_ms", P, "speedup", "", "the reference's median time on the target GPU", kAny, positive_number},
      {"performance.regions", P, "speedup", "", "the reference's profile: kernels or op groups with their times", kAny, regions},
      {"performance.speed_of_light_ms", P, "speed_of_light", "", "the roofline bound: no correct result can be faster", kAny, positive_number},
      {"performance.flops", P, "speed_of_light", "", "floating-point operations per call (a size expression)", kAny, work_count},
      {"performance.bytes", P, "speed_of_light", "", "bytes moved per call (a size expression)", kAny, work_count},
      {"performance.target_speedup", P, "speedup", "", "the speedup a result needs to be delivered", kAny, target_speedup},
      {"environment.spaces", E, "space", "", "implementation spaces the planner may use (S1 PyTorch ops, S2 CUDA libraries, S3 custom kernels)", kAny, spaces},
      {"environment.libraries", E, "static", "", "libraries a candidate may use", kAny, libraries},
      {"environment.compile_budget_s", E, "timeout", "", "seconds one compilation may take", kAny, positive_number},
      {"environment.memory_budget_bytes", E, "", "nothing measures a candidate's memory use yet", "device memory a candidate may use", kAny, anything},
      {"environment.candidate_budget", E, "budget", "", "most candidates one optimization evaluates", kAny, candidate_count},
      {"environment.time_budget_s", E, "budget", "", "wall-clock seconds one optimization may take", kAny, positive_number},
  };
  return registry;
}

const ClauseInfo* find_clause_info(std::string_view name) {
  for (const auto& info : clause_registry()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const std::vector<std::string_view>& enforcing_checks() {
  static const std::vector<std::string_view> checks = {
      "compile", "runtime",     "shape",       "dtype",          "count",   "values",  "nan_inf", "unwritten_output",
      "input_mutation", "determinism", "static", "speed_of_light", "timeout", "speedup", "budget",  "space",
      // The PyTorch runner's isolation: an output that is an input, a second shape, a clock that
      // does not hold across the process boundary, a candidate process that broke the exchange.
      "aliasing", "shape_generality", "timing", "protocol"};
  return checks;
}

const ClauseInfo& check_clause(std::string_view name, const json& value, TargetKind kind) {
  const std::string quoted = "clause '" + std::string(name) + "'";
  const ClauseInfo* info = find_clause_info(name);
  if (!info) throw SpecError(quoted + " is not a contract: no check enforces it");
  if (info->enforced_by.empty()) {
    throw SpecError(quoted + " is not a contract: no check enforces it (" + std::string(info->why_unenforced) + ")");
  }
  if (info->only_for && *info->only_for != kind) {
    throw SpecError(quoted + " applies to " + to_string(*info->only_for) + " targets only");
  }
  try {
    info->validate(value);
  } catch (const SpecError& error) {
    throw SpecError(quoted + ": " + error.what());
  }
  return *info;
}

}  // namespace hiera::engine::spec
