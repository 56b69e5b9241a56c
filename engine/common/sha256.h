#pragma once
// SHA-256 (OpenSSL's EVP), for content-addressed caches.
#include <string>
#include <string_view>

namespace hiera::engine {

// Lower-case hex digest of the bytes.
std::string sha256_hex(std::string_view bytes);

}  // namespace hiera::engine
