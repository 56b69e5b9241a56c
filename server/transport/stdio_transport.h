#pragma once
// stdio transport. At construction the real stdout is moved to a private
// descriptor and fd 1 is pointed at stderr, so stray prints from any library
// can never corrupt the protocol stream.
#include <atomic>

#include "server/transport/transport.h"

namespace hiera::server {

class StdioTransport final : public Transport {
 public:
  StdioTransport();
  ~StdioTransport() override;
  void read_loop(const std::function<void(std::string_view)>& on_bytes) override;
  void write(std::string_view bytes) override;
  void close() override;

 private:
  int in_fd_ = 0;
  int out_fd_ = -1;
  std::atomic<bool> closed_{false};
};

}  // namespace hiera::server
