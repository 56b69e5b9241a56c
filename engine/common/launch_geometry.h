#pragma once
// The launch geometry of a CUDA launch contract (engine/eval/JOB_PROTOCOL.md):
// grid, block and dynamic shared memory as size expressions, and the reading
// of its JSON form, which engine/spec (annotations) and engine/worker (jobs)
// share. Each side keeps its own error type and field names: the parser
// throws the caller's Error and names fields with the caller's prefix.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hiera::engine {

// grid and block (x, y, z) and dynamic shared memory bytes, each a size expression.
struct LaunchGeometry {
  std::array<std::string, 3> grid{"1", "1", "1"};
  std::array<std::string, 3> block{"1", "1", "1"};
  std::string shared_bytes = "0";
  bool operator==(const LaunchGeometry&) const = default;
};

// Reads "grid" and "block" (arrays of 1 to 3 expressions; missing dimensions
// are "1") and the optional "shared_bytes" of a launch object; the caller has
// checked that it is one. A field is named prefix + key ("launch: grid",
// "contract.reference_launch.grid"); `expression(value, name)` turns one JSON
// value into its expression text or throws. Throws Error("<name> is missing")
// and Error("<name> must be an array of 1 to 3 size expressions").
template <class Error, class Expression>
LaunchGeometry parse_launch_geometry(const nlohmann::json& object, const std::string& prefix, Expression&& expression) {
  LaunchGeometry launch;
  for (const char* key : {"grid", "block"}) {
    const std::string name = prefix + key;
    const auto it = object.find(key);
    if (it == object.end()) throw Error(name + " is missing");
    if (!it->is_array() || it->empty() || it->size() > 3) {
      throw Error(name + " must be an array of 1 to 3 size expressions");
    }
    auto& dims = std::string_view(key) == "grid" ? launch.grid : launch.block;
    for (std::size_t i = 0; i < it->size(); ++i) dims[i] = expression((*it)[i], name + "[" + std::to_string(i) + "]");
  }
  if (const auto it = object.find("shared_bytes"); it != object.end() && !it->is_null()) {
    launch.shared_bytes = expression(*it, prefix + "shared_bytes");
  }
  return launch;
}

}  // namespace hiera::engine
