#pragma once
// A CUDA launch contract's kernel arguments as both of its sides name them
// (engine/eval/JOB_PROTOCOL.md): the roles, the element types an argument may
// have, and an input's optional value range. engine/spec writes contracts from
// annotations and engine/worker reads them from jobs; each keeps its own
// error type and messages around these.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json_fwd.hpp>

namespace hiera::engine {

enum class ArgRole { Input, Output, InOut, Scalar };
const char* to_string(ArgRole role);  // "input", "output", "inout", "scalar"
std::optional<ArgRole> parse_arg_role(std::string_view text);
extern const char* const kArgRoleList;  // "input, output, inout or scalar"

// The element types the worker knows, in the order of its ScalarType.
inline constexpr std::array<const char*, 7> kElementTypeNames{"float32", "float16", "bfloat16", "float64",
                                                               "int32",   "int64",   "uint8"};
extern const char* const kElementTypeList;  // "float32, float16, bfloat16, float64, int32, int64, uint8"
// The index of the name in kElementTypeNames.
std::optional<std::size_t> element_type_index(std::string_view name);
inline bool is_element_type(std::string_view name) { return element_type_index(name).has_value(); }

// An input's "range": [lo, hi] with lo < hi, or nullopt for anything else.
std::optional<std::pair<double, double>> parse_value_range(const nlohmann::json& value);

}  // namespace hiera::engine
