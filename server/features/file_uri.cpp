#include "server/features/file_uri.h"

#include <cctype>
#include <cstdio>

namespace hiera::server {

std::string file_uri(const std::filesystem::path& absolute_path) {
  std::string out = "file://";
  for (const unsigned char c : absolute_path.generic_string()) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    }
  }
  return out;
}

}  // namespace hiera::server
