#include "engine/knowledge/knowledge_dir.h"

#include <cstdlib>

#ifndef HIERA_KNOWLEDGE_SOURCE_DIR
#error "HIERA_KNOWLEDGE_SOURCE_DIR must name the source tree's knowledge/ (engine/knowledge/CMakeLists.txt sets it)"
#endif

#ifndef HIERA_INSTALL_KNOWLEDGEDIR
#define HIERA_INSTALL_KNOWLEDGEDIR "share/hiera/knowledge"  // GNUInstallDirs' default (CMakeLists.txt sets it)
#endif

namespace hiera::engine::knowledge {

std::filesystem::path default_knowledge_dir(const std::filesystem::path& executable) {
  if (const char* env = std::getenv("HIERA_KNOWLEDGE_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const auto installed = (executable.parent_path() / ".." / HIERA_INSTALL_KNOWLEDGEDIR).lexically_normal();
  if (!executable.empty() && std::filesystem::is_directory(installed, error)) return installed;
  return HIERA_KNOWLEDGE_SOURCE_DIR;
}

}  // namespace hiera::engine::knowledge
