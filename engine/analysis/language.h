#pragma once
// The languages analysis reads: CUDA C++ (.cu, .cuh) and Python (.py).
#include <optional>
#include <string_view>

namespace hiera::engine::analysis {

enum class Language { Cuda, Python };

const char* to_string(Language language);  // "cuda" / "python"
// By file extension; nullopt for anything else (.cpp is not taken: a host-only
// file has no kernels and its `<<<` would be a shift).
std::optional<Language> language_for_path(std::string_view path);
// By LSP languageId ("cuda", "cuda-cpp", "python"); nullopt for anything else.
std::optional<Language> language_for_id(std::string_view language_id);

}  // namespace hiera::engine::analysis
