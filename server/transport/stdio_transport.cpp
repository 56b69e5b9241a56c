#include "server/transport/stdio_transport.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace hiera::server {

namespace {
std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }
}  // namespace

StdioTransport::StdioTransport() {
  std::fflush(stdout);
  out_fd_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (out_fd_ < 0) throw sys_error("cannot duplicate stdout");
  // From here on fd 1 is stderr: a stray printf lands in the log, not in the protocol.
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) throw sys_error("cannot redirect stdout to stderr");
}

StdioTransport::~StdioTransport() {
  if (out_fd_ >= 0) ::close(out_fd_);
}

void StdioTransport::read_loop(const std::function<void(std::string_view)>& on_bytes) {
  char buffer[64 * 1024];
  while (!closed_) {
    const ssize_t n = ::read(in_fd_, buffer, sizeof buffer);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw sys_error("cannot read stdin");
    }
    on_bytes(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

void StdioTransport::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(out_fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw sys_error("cannot write to the client");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// read() cannot be interrupted portably; the loop stops after the current
// chunk, which is how `exit` (handled inside on_bytes) ends the session.
void StdioTransport::close() { closed_ = true; }

}  // namespace hiera::server
