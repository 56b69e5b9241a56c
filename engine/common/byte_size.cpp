#include "engine/common/byte_size.h"

#include <cstdio>

namespace hiera::engine {

std::string describe_bytes(std::uintmax_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB (%ju bytes)", static_cast<double>(bytes) / (1u << 20), bytes);
  return text;
}

}  // namespace hiera::engine
