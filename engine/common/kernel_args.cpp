#include "engine/common/kernel_args.h"

#include <nlohmann/json.hpp>

namespace hiera::engine {

const char* const kArgRoleList = "input, output, inout or scalar";
const char* const kElementTypeList = "float32, float16, bfloat16, float64, int32, int64, uint8";

const char* to_string(ArgRole role) {
  switch (role) {
    case ArgRole::Input: return "input";
    case ArgRole::Output: return "output";
    case ArgRole::InOut: return "inout";
    case ArgRole::Scalar: return "scalar";
  }
  return "?";
}

std::optional<ArgRole> parse_arg_role(std::string_view text) {
  for (ArgRole role : {ArgRole::Input, ArgRole::Output, ArgRole::InOut, ArgRole::Scalar}) {
    if (text == to_string(role)) return role;
  }
  return std::nullopt;
}

std::optional<std::size_t> element_type_index(std::string_view name) {
  for (std::size_t i = 0; i < kElementTypeNames.size(); ++i) {
    if (name == kElementTypeNames[i]) return i;
  }
  return std::nullopt;
}

std::optional<std::pair<double, double>> parse_value_range(const nlohmann::json& value) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number()) return std::nullopt;
  const double lo = value[0].get<double>();
  const double hi = value[1].get<double>();
  if (!(lo < hi)) return std::nullopt;
  return std::make_pair(lo, hi);
}

}  // namespace hiera::engine
