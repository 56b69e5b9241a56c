#pragma once
// Something wrong in the knowledge directory, found at load time: the file (or
// directory), the field inside it ("" for the file as a whole) and why. The
// file is skipped; everything else still loads.
#include <filesystem>
#include <string>

namespace hiera::engine::knowledge {

struct KnowledgeProblem {
  std::filesystem::path path;
  std::string field;
  std::string message;

  // "path: field: message", or "path: message" without a field.
  std::string to_string() const {
    return path.string() + ": " + (field.empty() ? "" : field + ": ") + message;
  }
};

}  // namespace hiera::engine::knowledge
