#pragma once
// Where the knowledge directory is: chosen by the environment, by an
// installed layout next to the executable, or the source tree it was built from.
#include <filesystem>

namespace hiera::engine::knowledge {

// $HIERA_KNOWLEDGE_DIR when set and non-empty; else <directory of executable>/
// ../share/hiera/knowledge when that directory exists; else the source tree's
// knowledge/ compiled in as HIERA_KNOWLEDGE_SOURCE_DIR.
std::filesystem::path default_knowledge_dir(const std::filesystem::path& executable);

}  // namespace hiera::engine::knowledge
