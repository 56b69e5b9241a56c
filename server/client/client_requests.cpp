#include "server/client/client_requests.h"

#include <boost/asio/post.hpp>

namespace hiera::server {

ClientRequests::ClientRequests(boost::asio::io_context& loop, Send send) : loop_(loop), send_(std::move(send)) {}

ClientRequests::~ClientRequests() {
  std::lock_guard lock(mutex_);
  for (auto& [id, pending] : pending_) pending.timer->cancel();
}

void ClientRequests::request(const std::string& method, nlohmann::json params, Callback callback,
                             std::chrono::milliseconds timeout) {
  std::int64_t id = 0;
  auto timer = std::make_shared<boost::asio::steady_timer>(loop_, timeout);
  std::optional<std::string> refused;
  {
    std::lock_guard lock(mutex_);
    refused = closed_;
    if (!refused) {
      id = next_id_++;
      pending_.emplace(id, Pending{callback, timer});
    }
  }
  if (refused) {
    // Answered on the caller's thread: the loop may already have stopped.
    callback(protocol::ResponseError{protocol::ErrorCode::RequestFailed, *refused, std::nullopt});
    return;
  }
  timer->async_wait([this, id, method](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the reply came first
    complete(id, protocol::ResponseError{protocol::ErrorCode::RequestFailed,
                                         "client did not answer " + method + " in time", std::nullopt});
  });
  send_(protocol::to_json(protocol::Request{protocol::RequestId(id), method, std::move(params)}));
}

void ClientRequests::complete(std::int64_t id, Outcome outcome) {
  Pending pending;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    pending = std::move(it->second);
    pending_.erase(it);
  }
  pending.timer->cancel();
  pending.callback(std::move(outcome));
}

bool ClientRequests::on_response(const protocol::Response& response) {
  const auto& id = response.id.to_json();
  if (!id.is_number_integer()) return false;
  const auto key = id.get<std::int64_t>();
  {
    std::lock_guard lock(mutex_);
    if (!pending_.contains(key)) return false;
  }
  boost::asio::post(loop_, [this, key, result = response.result]() mutable { complete(key, std::move(result)); });
  return true;
}

void ClientRequests::fail_all(const std::string& reason) {
  std::map<std::int64_t, Pending> failed;
  {
    std::lock_guard lock(mutex_);
    closed_ = reason;
    failed.swap(pending_);
  }
  for (auto& [id, pending] : failed) {
    pending.timer->cancel();
    pending.callback(protocol::ResponseError{protocol::ErrorCode::RequestFailed, reason, std::nullopt});
  }
}

std::size_t ClientRequests::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

}  // namespace hiera::server
