#pragma once
// The one reply a request gets. Move-only; if it is destroyed without having
// replied (a handler forgot, or threw past it), it answers InternalError, so
// every request receives exactly one reply.
#include <functional>
#include <memory>
#include <string>

#include "protocol/message.h"

namespace hiera::server {

class Reply {
 public:
  using Send = std::function<void(nlohmann::json)>;  // sends one complete response message
  Reply(protocol::RequestId id, std::string method, Send send);
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&& other) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  void result(nlohmann::json value);
  void error(protocol::ErrorCode code, std::string message);
  bool replied() const { return !send_; }
  const protocol::RequestId& id() const { return id_; }
  const std::string& method() const { return method_; }

 private:
  protocol::RequestId id_;
  std::string method_;
  Send send_;  // empty once used
};

}  // namespace hiera::server
