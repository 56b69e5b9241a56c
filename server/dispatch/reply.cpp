#include "server/dispatch/reply.h"

namespace hiera::server {

Reply::Reply(protocol::RequestId id, std::string method, Send send)
    : id_(std::move(id)), method_(std::move(method)), send_(std::move(send)) {}

Reply::Reply(Reply&& other) noexcept
    : id_(std::move(other.id_)), method_(std::move(other.method_)), send_(std::exchange(other.send_, nullptr)) {}

Reply& Reply::operator=(Reply&& other) noexcept {
  if (this != &other) {
    if (send_) error(protocol::ErrorCode::InternalError, "reply replaced before it was sent");
    id_ = std::move(other.id_);
    method_ = std::move(other.method_);
    send_ = std::exchange(other.send_, nullptr);
  }
  return *this;
}

Reply::~Reply() {
  if (send_) {
    try {
      error(protocol::ErrorCode::InternalError, "server bug: handler for '" + method_ + "' returned without replying");
    } catch (...) {
      // Destructors must not throw; the transport is gone if sending failed.
    }
  }
}

void Reply::result(nlohmann::json value) {
  if (!send_) return;
  auto send = std::exchange(send_, nullptr);
  send(protocol::make_result(id_, std::move(value)));
}

void Reply::error(protocol::ErrorCode code, std::string message) {
  if (!send_) return;
  auto send = std::exchange(send_, nullptr);
  send(protocol::make_error(id_, code, std::move(message)));
}

}  // namespace hiera::server
