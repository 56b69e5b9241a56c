#include "engine/worker/launch_contract.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

using nlohmann::json;

using engine::evaluate_size_expression;
using engine::is_identifier;
using engine::SizeExpressionError;

namespace {

// An expression field may be written as a JSON string or a JSON integer.
std::string expression_field(const json& value, const std::string& what) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();
  throw ContractError(what + " must be a size expression (a string or an integer), got " + value.dump());
}

SizeMap parse_sizes(const json& value, const std::string& what) {
  if (!value.is_object()) throw ContractError("contract." + what + " must be an object of size names to integers");
  SizeMap sizes;
  for (const auto& [name, size] : value.items()) {
    if (!is_identifier(name)) throw ContractError("contract." + what + ": '" + name + "' is not a valid size name");
    if (!size.is_number_integer()) throw ContractError("contract." + what + "." + name + " must be an integer, got " + size.dump());
    if (size.is_number_unsigned() && size.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw ContractError("contract." + what + "." + name + " is too large");
    }
    sizes[name] = size.get<std::int64_t>();
  }
  return sizes;
}

LaunchGeometry parse_launch(const json& value, const std::string& what) {
  if (!value.is_object()) throw ContractError("contract." + what + " must be an object with grid, block and shared_bytes");
  return engine::parse_launch_geometry<ContractError>(value, "contract." + what + ".", expression_field);
}

std::string scalar_value_field(const json& value, const std::string& what) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  throw ContractError(what + " must be a number or a size expression, got " + value.dump());
}

ContractArg parse_arg(const json& value, std::size_t index) {
  const std::string where = "contract.args[" + std::to_string(index) + "]";
  if (!value.is_object()) throw ContractError(where + " must be an object");
  ContractArg arg;
  auto name = value.find("name");
  if (name == value.end() || !name->is_string() || name->get<std::string>().empty()) {
    throw ContractError(where + ".name must be a non-empty string");
  }
  arg.name = name->get<std::string>();
  const std::string at = where + " ('" + arg.name + "')";
  auto role = value.find("role");
  if (role == value.end() || !role->is_string()) throw ContractError(at + ": role must be " + engine::kArgRoleList);
  const auto role_name = role->get<std::string>();
  const auto parsed_role = engine::parse_arg_role(role_name);
  if (!parsed_role) throw ContractError(at + ": unknown role '" + role_name + "' (" + engine::kArgRoleList + ")");
  arg.role = *parsed_role;
  auto type = value.find("type");
  if (type == value.end() || !type->is_string()) throw ContractError(at + ": type is missing");
  auto parsed_type = parse_scalar_type(type->get<std::string>());
  if (!parsed_type) {
    throw ContractError(at + ": unknown type '" + type->get<std::string>() + "' (" + engine::kElementTypeList + ")");
  }
  arg.type = *parsed_type;
  if (arg.is_array()) {
    auto extent = value.find("extent");
    if (extent == value.end()) throw ContractError(at + ": an array argument needs an extent");
    arg.extent = expression_field(*extent, at + ".extent");
    if (auto range = value.find("range"); range != value.end() && !range->is_null()) {
      arg.range = engine::parse_value_range(*range);
      if (!arg.range) throw ContractError(at + ".range must be [lo, hi] with lo < hi");
    }
  } else {
    auto scalar = value.find("value");
    if (scalar == value.end()) throw ContractError(at + ": a scalar argument needs a value");
    arg.value = scalar_value_field(*scalar, at + ".value");
  }
  return arg;
}

// A floating-point literal, when the whole text is one.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (end == text.c_str() || (end && *end) || errno == ERANGE) return std::nullopt;
  return value;
}

unsigned to_unsigned(std::int64_t value, std::int64_t min, std::int64_t max, const std::string& what) {
  if (value < min || value > max) {
    throw ContractError(what + " is " + std::to_string(value) + ", outside [" + std::to_string(min) + ", " +
                        std::to_string(max) + "]");
  }
  return static_cast<unsigned>(value);
}

std::int64_t eval(const std::string& expression, const SizeMap& sizes) {
  try {
    return evaluate_size_expression(expression, sizes);
  } catch (const SizeExpressionError& e) {
    throw ContractError(e.what());
  }
}

void check_against(const LaunchContract& contract, const SizeMap& sizes) {
  for (const auto& arg : contract.args) {
    if (arg.is_array()) byte_count(arg, sizes);
    else scalar_argument(arg, sizes);
  }
  resolve_launch(contract.reference_launch, sizes);
  resolve_launch(contract.candidate_launch, sizes);
  work_count(contract.flops, sizes);
  work_count(contract.bytes, sizes);
}

}  // namespace

LaunchContract parse_launch_contract(const json& value) {
  if (!value.is_object()) throw ContractError("contract must be an object");
  LaunchContract contract;
  auto sizes = value.find("sizes");
  contract.sizes = sizes == value.end() || sizes->is_null() ? SizeMap{} : parse_sizes(*sizes, "sizes");
  if (auto second = value.find("second_sizes"); second != value.end() && !second->is_null()) {
    SizeMap merged = contract.sizes;
    for (const auto& [name, size] : parse_sizes(*second, "second_sizes")) merged[name] = size;
    contract.second_sizes = std::move(merged);
  }
  auto args = value.find("args");
  if (args == value.end() || !args->is_array() || args->empty()) throw ContractError("contract.args must be a non-empty array");
  std::set<std::string> names;
  bool has_output = false;
  for (std::size_t i = 0; i < args->size(); ++i) {
    ContractArg arg = parse_arg((*args)[i], i);
    if (!names.insert(arg.name).second) throw ContractError("contract.args: '" + arg.name + "' appears twice");
    has_output = has_output || arg.is_compared();
    contract.args.push_back(std::move(arg));
  }
  if (!has_output) throw ContractError("contract.args has no output or inout argument: nothing could be compared");
  auto reference = value.find("reference_launch");
  if (reference == value.end()) throw ContractError("contract.reference_launch is missing");
  contract.reference_launch = parse_launch(*reference, "reference_launch");
  auto candidate = value.find("candidate_launch");
  contract.candidate_launch = candidate == value.end() || candidate->is_null()
                                  ? contract.reference_launch
                                  : parse_launch(*candidate, "candidate_launch");
  for (const char* key : {"flops", "bytes"}) {
    auto it = value.find(key);
    if (it == value.end() || it->is_null()) continue;
    (std::string(key) == "flops" ? contract.flops : contract.bytes) = expression_field(*it, std::string("contract.") + key);
  }
  if (auto inout = value.find("inout_allowed"); inout != value.end() && !inout->is_null()) {
    if (!inout->is_boolean()) throw ContractError("contract.inout_allowed must be true or false");
    contract.inout_allowed = inout->get<bool>();
  }
  check_against(contract, contract.sizes);
  if (contract.second_sizes) check_against(contract, *contract.second_sizes);
  return contract;
}

LaunchDims resolve_launch(const LaunchGeometry& launch, const SizeMap& sizes) {
  static constexpr std::array<const char*, 3> kAxis{"x", "y", "z"};
  static constexpr std::array<std::int64_t, 3> kGridMax{2147483647, 65535, 65535};
  LaunchDims dims;
  for (std::size_t i = 0; i < 3; ++i) {
    dims.grid[i] = to_unsigned(eval(launch.grid[i], sizes), 1, kGridMax[i],
                               std::string("grid.") + kAxis[i] + " ('" + launch.grid[i] + "')");
    dims.block[i] = to_unsigned(eval(launch.block[i], sizes), 1, 1024,
                                std::string("block.") + kAxis[i] + " ('" + launch.block[i] + "')");
  }
  dims.shared_bytes = to_unsigned(eval(launch.shared_bytes, sizes), 0, std::numeric_limits<std::int32_t>::max(),
                                  "shared_bytes ('" + launch.shared_bytes + "')");
  return dims;
}

std::uint64_t element_count(const ContractArg& arg, const SizeMap& sizes) {
  const std::int64_t count = eval(arg.extent, sizes);
  if (count < 0) throw ContractError("extent of '" + arg.name + "' ('" + arg.extent + "') is negative: " + std::to_string(count));
  return static_cast<std::uint64_t>(count);
}

std::uint64_t byte_count(const ContractArg& arg, const SizeMap& sizes) {
  const std::uint64_t count = element_count(arg, sizes);
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(size_of(arg.type)), &bytes)) {
    throw ContractError("'" + arg.name + "' is too large: " + std::to_string(count) + " elements");
  }
  return bytes;
}

std::vector<std::byte> scalar_argument(const ContractArg& arg, const SizeMap& sizes) {
  std::vector<std::byte> bytes(size_of(arg.type));
  if (is_floating(arg.type)) {
    // A literal ("2.5", "-1e-3") or, failing that, a size expression ("N").
    const auto literal = parse_number(arg.value);
    const double value = literal ? *literal : static_cast<double>(eval(arg.value, sizes));
    store_from_double(arg.type, value, bytes.data());
    return bytes;
  }
  const std::int64_t value = eval(arg.value, sizes);
  std::int64_t lo = 0, hi = 0;
  switch (arg.type) {
    case ScalarType::Int32: lo = std::numeric_limits<std::int32_t>::min(); hi = std::numeric_limits<std::int32_t>::max(); break;
    case ScalarType::UInt8: lo = 0; hi = 255; break;
    default: lo = std::numeric_limits<std::int64_t>::min(); hi = std::numeric_limits<std::int64_t>::max(); break;
  }
  if (value < lo || value > hi) {
    throw ContractError("scalar '" + arg.name + "' = " + std::to_string(value) + " does not fit in " + to_string(arg.type));
  }
  store_from_double(arg.type, static_cast<double>(value), bytes.data());
  if (arg.type == ScalarType::Int64) std::memcpy(bytes.data(), &value, sizeof value);  // exact beyond 2^53
  return bytes;
}

std::optional<double> work_count(const std::optional<std::string>& expression, const SizeMap& sizes) {
  if (!expression) return std::nullopt;
  const std::int64_t value = eval(*expression, sizes);
  if (value < 0) throw ContractError("work count '" + *expression + "' is negative: " + std::to_string(value));
  return static_cast<double>(value);
}

}  // namespace hiera::engine::worker
