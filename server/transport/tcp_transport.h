#pragma once
// TCP transport for debugging: listens on a loopback address, serves the first
// client that connects (Boost.Asio, blocking I/O on the calling thread).
#include <cstdint>
#include <memory>
#include <string>

#include "server/transport/transport.h"

namespace hiera::server {

class TcpTransport final : public Transport {
 public:
  // Binds and listens immediately; throws std::runtime_error with the reason
  // if the address is not loopback or cannot be bound. Port 0 picks a free one.
  TcpTransport(const std::string& address, std::uint16_t port);
  ~TcpTransport() override;
  std::uint16_t port() const;  // the bound port
  // Blocks until a client connects.
  void accept();
  void read_loop(const std::function<void(std::string_view)>& on_bytes) override;
  void write(std::string_view bytes) override;
  void close() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hiera::server
