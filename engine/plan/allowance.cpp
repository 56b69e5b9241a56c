// Numerics allowances, normalised (allowance.h).
#include "engine/plan/allowance.h"

#include <algorithm>
#include <cctype>

namespace hiera::engine::plan {

std::string normalise_allowance(std::string_view allowance) {
  std::string out;
  for (const char c : allowance) {
    const auto byte = static_cast<unsigned char>(c);
    if (!std::isspace(byte)) out += static_cast<char>(std::tolower(byte));
  }
  if (out == "float16" || out == "half") return "fp16";
  if (out == "bfloat16") return "bf16";
  return out;
}

std::optional<std::string> ceiling_of_allowance(std::string_view allowance) {
  const std::string name = normalise_allowance(allowance);
  if (name == "tf32") return "tf32";
  if (name == "bf16") return "bfloat16";
  if (name == "fp16") return "float16";
  return std::nullopt;
}

std::optional<std::string> native_allowance(std::string_view dtype) {
  if (dtype == "float16") return "fp16";
  if (dtype == "bfloat16") return "bf16";
  return std::nullopt;
}

std::vector<std::string> effective_allowances(const std::vector<std::string>& granted, std::string_view dtype) {
  std::vector<std::string> out;
  for (const std::string& allowance : granted) {
    std::string name = normalise_allowance(allowance);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  if (const auto native = native_allowance(dtype); native && std::find(out.begin(), out.end(), *native) == out.end()) {
    out.push_back(*native);
  }
  return out;
}

std::optional<std::string> missing_allowance(const std::vector<std::string>& required,
                                             const std::vector<std::string>& granted) {
  for (const std::string& allowance : required) {
    if (std::find(granted.begin(), granted.end(), normalise_allowance(allowance)) == granted.end()) {
      return normalise_allowance(allowance);
    }
  }
  return std::nullopt;
}

}  // namespace hiera::engine::plan
