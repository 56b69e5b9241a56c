#pragma once
// A size in bytes as the messages about limits quote it (frame size, file size).
#include <cstdint>
#include <string>

namespace hiera::engine {

// "100.0 MiB (104857600 bytes)"
std::string describe_bytes(std::uintmax_t bytes);

}  // namespace hiera::engine
