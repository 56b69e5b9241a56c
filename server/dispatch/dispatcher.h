#pragma once
// The method table. Requests and notifications run on the message loop in
// arrival order; a handler may reply later from another thread through its
// Reply. Exceptions become JSON-RPC errors: RpcError keeps its code,
// nlohmann parse/type errors become InvalidParams, anything else InternalError.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/common/cancellation.h"
#include "protocol/message.h"
#include "server/dispatch/reply.h"

namespace hiera::server {

class Dispatcher {
 public:
  // The handler replies through `reply` now, or moves it into work that replies later.
  using RequestHandler = std::function<void(const nlohmann::json& params, Reply& reply, engine::CancellationToken cancel)>;
  using NotificationHandler = std::function<void(const nlohmann::json& params)>;
  // Decides whether a request may run now; returns an error to answer instead.
  using Gate = std::function<std::optional<protocol::ResponseError>(const std::string& method)>;

  explicit Dispatcher(Reply::Send send) : send_(std::move(send)) {}

  void on_request(const std::string& method, RequestHandler handler);
  void on_notification(const std::string& method, NotificationHandler handler);
  void set_gate(Gate gate) { gate_ = std::move(gate); }

  // Called by the reader thread for $/cancelRequest, ahead of the queue: marks
  // the request cancelled; a queued one is answered RequestCancelled when its
  // turn comes, a running one sees its token cancelled.
  void cancel(const protocol::RequestId& id);

  void dispatch(protocol::Request request);
  void dispatch(const protocol::Notification& notification);

  // Runs `handler` and turns what it throws into the error reply, as dispatch
  // does: for handlers that answer later, off the dispatch call (a request
  // waiting for its document's analysis).
  static void guard(Reply& reply, const std::function<void()>& handler);

 private:
  engine::CancellationToken token_for(const protocol::RequestId& id);
  void forget(const protocol::RequestId& id);

  Reply::Send send_;
  Gate gate_;
  std::unordered_map<std::string, RequestHandler> requests_;
  std::unordered_map<std::string, NotificationHandler> notifications_;
  std::mutex tokens_mutex_;
  std::unordered_map<std::string, engine::CancellationToken> tokens_;  // by RequestId::to_string()
};

}  // namespace hiera::server
