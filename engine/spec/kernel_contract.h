#pragma once
// The launch contract of a CUDA target in typed form: its arguments (role,
// element type, extent or value) and its launch geometry, as the `hiera: arg`
// and `hiera: launch` annotations give them and the job protocol's
// "contract" carries them (engine/eval/JOB_PROTOCOL.md). A bare kernel cannot
// be probed for its interface, so this is the only place it comes from.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace hiera::engine::spec {

enum class ArgRole { Input, Output, InOut, Scalar };
const char* to_string(ArgRole role);  // "input", "output", "inout", "scalar"
std::optional<ArgRole> parse_arg_role(std::string_view text);

// The element types the worker knows: float32, float16, bfloat16, float64, int32, int64, uint8.
bool is_kernel_type(std::string_view text);
extern const char* const kKernelTypeList;  // "float32, float16, bfloat16, float64, int32, int64, uint8"

struct KernelArg {
  std::string name;
  ArgRole role = ArgRole::Input;
  std::string type;    // float32, ...
  std::string extent;  // arrays: element count, a size expression
  std::string value;   // scalars: a number or a size expression
  // Arrays only: inputs drawn from [lo, hi) instead of the trial's distribution
  // (index arguments); the protocol's optional "range".
  std::optional<std::pair<double, double>> range;

  bool is_array() const { return role != ArgRole::Scalar; }
  bool is_compared() const { return role == ArgRole::Output || role == ArgRole::InOut; }
  // The protocol's arg object: {"name","role","type","extent"[,"range"]} or {"name","role","type","value"}.
  nlohmann::json to_json() const;
  // Throws SpecError naming the field.
  static KernelArg from_json(const nlohmann::json& value);
  bool operator==(const KernelArg&) const = default;
};

struct Launch {
  std::array<std::string, 3> grid{"1", "1", "1"};
  std::array<std::string, 3> block{"1", "1", "1"};
  std::string shared_bytes = "0";

  // {"grid": [x, y, z], "block": [x, y, z], "shared_bytes": "0"}, each a size expression.
  nlohmann::json to_json() const;
  // Accepts 1 to 3 dimensions (the rest are "1"); throws SpecError.
  static Launch from_json(const nlohmann::json& value);
  bool operator==(const Launch&) const = default;
};

}  // namespace hiera::engine::spec
