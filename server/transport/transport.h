#pragma once
// A byte stream carrying LSP frames. The server reads on one thread (run) and
// sends from any thread (send); framing lives in protocol/.
#include <functional>
#include <string_view>

namespace hiera::server {

class Transport {
 public:
  virtual ~Transport() = default;
  // Reads until end of stream, handing each chunk of bytes to on_bytes.
  // Returns normally at EOF; throws std::runtime_error on a read failure.
  virtual void read_loop(const std::function<void(std::string_view)>& on_bytes) = 0;
  // Writes bytes completely (one call per frame; the caller serialises calls).
  virtual void write(std::string_view bytes) = 0;
  // Unblocks read_loop from another thread (shutdown).
  virtual void close() = 0;
};

}  // namespace hiera::server
