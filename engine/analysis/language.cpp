#include "engine/analysis/language.h"

namespace hiera::engine::analysis {

const char* to_string(Language language) { return language == Language::Cuda ? "cuda" : "python"; }

std::optional<Language> language_for_path(std::string_view path) {
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return std::nullopt;
  const std::string_view extension = path.substr(dot);
  if (extension == ".cu" || extension == ".cuh") return Language::Cuda;
  if (extension == ".py") return Language::Python;
  return std::nullopt;
}

std::optional<Language> language_for_id(std::string_view language_id) {
  if (language_id == "cuda" || language_id == "cuda-cpp") return Language::Cuda;
  if (language_id == "python") return Language::Python;
  return std::nullopt;
}

}  // namespace hiera::engine::analysis
