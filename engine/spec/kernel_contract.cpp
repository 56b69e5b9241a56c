#include "engine/spec/kernel_contract.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "engine/common/size_expression.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {

using nlohmann::json;

namespace {

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE && std::isfinite(value);
}

std::string expression(const json& value, const std::string& what) {
  std::string text;
  if (value.is_string()) text = value.get<std::string>();
  else if (value.is_number_integer()) text = value.dump();
  else throw SpecError(what + " must be a size expression, got " + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  try {
    size_expression_names(text);
  } catch (const SizeExpressionError& error) {
    throw SpecError(what + ": " + error.what());
  }
  return text;
}

}  // namespace

json KernelArg::to_json() const {
  json out = {{"name", name}, {"role", engine::to_string(role)}, {"type", type}};
  if (is_array()) {
    out["extent"] = extent;
    if (range) out["range"] = {range->first, range->second};
  } else {
    out["value"] = value;
  }
  return out;
}

KernelArg KernelArg::from_json(const json& value) {
  if (!value.is_object()) throw SpecError("an argument must be an object, got " + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  KernelArg arg;
  const auto name = value.find("name");
  if (name == value.end() || !name->is_string() || !is_identifier(name->get<std::string>())) {
    throw SpecError("an argument's name must be an identifier");
  }
  arg.name = name->get<std::string>();
  const std::string at = "argument '" + arg.name + "'";
  for (const auto& [key, unused] : value.items()) {
    if (key != "name" && key != "role" && key != "type" && key != "extent" && key != "value" && key != "range") {
      throw SpecError(at + ": unknown field '" + key + "'");
    }
  }
  const auto role = value.find("role");
  const auto parsed_role = role != value.end() && role->is_string() ? parse_arg_role(role->get<std::string>()) : std::nullopt;
  if (!parsed_role) throw SpecError(at + ": role must be " + kArgRoleList);
  arg.role = *parsed_role;
  const auto type = value.find("type");
  if (type == value.end() || !type->is_string() || !is_element_type(type->get<std::string>())) {
    throw SpecError(at + ": type must be one of " + kElementTypeList);
  }
  arg.type = type->get<std::string>();
  if (arg.is_array()) {
    const auto extent = value.find("extent");
    if (extent == value.end()) throw SpecError(at + ": an array argument needs an extent");
    if (value.contains("value")) throw SpecError(at + ": an array argument has no value");
    arg.extent = expression(*extent, at + ": extent");
    if (const auto range = value.find("range"); range != value.end() && !range->is_null()) {
      arg.range = parse_value_range(*range);
      if (!arg.range) throw SpecError(at + ": range must be [lo, hi] with lo < hi");
    }
  } else {
    if (value.contains("extent") || value.contains("range")) throw SpecError(at + ": a scalar has a value, not an extent or range");
    const auto scalar = value.find("value");
    if (scalar == value.end()) throw SpecError(at + ": a scalar argument needs a value");
    if (scalar->is_number()) {
      arg.value = scalar->dump();
    } else if (scalar->is_string() && is_number(scalar->get<std::string>())) {
      arg.value = scalar->get<std::string>();
    } else {
      arg.value = expression(*scalar, at + ": value");
    }
  }
  return arg;
}

json Launch::to_json() const {
  return {{"grid", grid}, {"block", block}, {"shared_bytes", shared_bytes}};
}

Launch Launch::from_json(const json& value) {
  if (!value.is_object()) throw SpecError("a launch must be an object with grid, block and shared_bytes");
  for (const auto& [key, unused] : value.items()) {
    if (key != "grid" && key != "block" && key != "shared_bytes") throw SpecError("launch: unknown field '" + key + "'");
  }
  return {parse_launch_geometry<SpecError>(value, "launch: ", expression)};
}

}  // namespace hiera::engine::spec
