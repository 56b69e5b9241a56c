#pragma once
// The numerics allowances a contract grants (numerics.allow: "tf32", "bf16",
// "fp16", "inplace", ...) spelled one way, as the worker's static checks spell
// them (aliases folded: "bfloat16" -> "bf16", "float16"/"half" -> "fp16"), and
// what they mean for the roofline: which lower-precision peak a region may be
// measured against, and whether a recipe's requires_allow is met.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::plan {

// Lower-cased, aliases folded: "BFloat16" -> "bf16", "half" -> "fp16", "TF32" -> "tf32".
std::string normalise_allowance(std::string_view allowance);

// The ceiling (dtype) a precision allowance unlocks: "tf32" -> "tf32",
// "bf16" -> "bfloat16", "fp16" -> "float16"; nullopt for others ("inplace").
std::optional<std::string> ceiling_of_allowance(std::string_view allowance);

// The allowance a dtype carries by itself (a float16 task is already in
// float16): "float16" -> "fp16", "bfloat16" -> "bf16"; nullopt otherwise.
std::optional<std::string> native_allowance(std::string_view dtype);

// The allowances of `granted` (normalised) plus the dtype's native one.
std::vector<std::string> effective_allowances(const std::vector<std::string>& granted, std::string_view dtype);

// The first of `required` that `granted` (already effective) lacks; nullopt when all are granted.
std::optional<std::string> missing_allowance(const std::vector<std::string>& required,
                                             const std::vector<std::string>& granted);

}  // namespace hiera::engine::plan
