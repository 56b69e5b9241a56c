#pragma once
// The launch contract of a CUDA target in typed form: its arguments (role,
// element type, extent or value) and its launch geometry, as the `hiera: arg`
// and `hiera: launch` annotations give them and the job protocol's
// "contract" carries them (engine/eval/JOB_PROTOCOL.md). A bare kernel cannot
// be probed for its interface, so this is the only place it comes from.
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/common/kernel_args.h"
#include "engine/common/launch_geometry.h"

namespace hiera::engine::spec {

// The roles, element types and launch geometry are the worker's too
// (engine/common).
using engine::ArgRole;
using engine::LaunchGeometry;

struct KernelArg {
  std::string name;
  ArgRole role = ArgRole::Input;
  std::string type;    // one of kElementTypeNames
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

struct Launch : LaunchGeometry {
  // {"grid": [x, y, z], "block": [x, y, z], "shared_bytes": "0"}, each a size expression.
  nlohmann::json to_json() const;
  // Accepts 1 to 3 dimensions (the rest are "1"); throws SpecError.
  static Launch from_json(const nlohmann::json& value);
  bool operator==(const Launch&) const = default;
};

}  // namespace hiera::engine::spec
