#include "server/dispatch/dispatcher.h"

#include <exception>

namespace hiera::server {

using protocol::ErrorCode;

void Dispatcher::on_request(const std::string& method, RequestHandler handler) {
  requests_[method] = std::move(handler);
}

void Dispatcher::on_notification(const std::string& method, NotificationHandler handler) {
  notifications_[method] = std::move(handler);
}

engine::CancellationToken Dispatcher::token_for(const protocol::RequestId& id) {
  std::lock_guard lock(tokens_mutex_);
  return tokens_.try_emplace(id.to_string()).first->second;
}

void Dispatcher::forget(const protocol::RequestId& id) {
  std::lock_guard lock(tokens_mutex_);
  tokens_.erase(id.to_string());
}

void Dispatcher::cancel(const protocol::RequestId& id) {
  // Creating the token here covers a cancel that overtakes its request in the queue.
  token_for(id).cancel();
}

void Dispatcher::dispatch(protocol::Request request) {
  engine::CancellationToken token = token_for(request.id);
  // The token entry lives until the reply is sent, so late cancels find it.
  Reply reply(request.id, request.method, [this, send = send_, id = request.id](nlohmann::json message) {
    forget(id);
    send(std::move(message));
  });
  if (token.cancelled()) {
    reply.error(ErrorCode::RequestCancelled, "request cancelled before it started");
    return;
  }
  if (gate_) {
    if (auto refused = gate_(request.method)) {
      reply.error(refused->code, refused->message);
      return;
    }
  }
  auto it = requests_.find(request.method);
  if (it == requests_.end()) {
    reply.error(ErrorCode::MethodNotFound, "unknown method: " + request.method);
    return;
  }
  // A handler that throws before replying (or before moving the reply into
  // async work) gets its exception turned into the error reply here.
  guard(reply, [&] { it->second(request.params, reply, token); });
}

void Dispatcher::guard(Reply& reply, const std::function<void()>& handler) {
  const std::string method = reply.method();  // the reply may be moved into async work
  auto fail = [&](ErrorCode code, std::string message) {
    if (!reply.replied()) reply.error(code, std::move(message));
  };
  try {
    handler();
  } catch (const protocol::RpcError& e) {
    fail(e.code(), e.what());
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidParams, std::string("invalid params for ") + method + ": " + e.what());
  } catch (const engine::Cancelled&) {
    fail(ErrorCode::RequestCancelled, "request cancelled");
  } catch (const std::exception& e) {
    fail(ErrorCode::InternalError, std::string("internal error in ") + method + ": " + e.what());
  } catch (...) {
    fail(ErrorCode::InternalError, "internal error in " + method);
  }
}

void Dispatcher::dispatch(const protocol::Notification& notification) {
  auto it = notifications_.find(notification.method);
  // Unknown notifications are ignored, as the spec requires ("$/" ones included).
  if (it == notifications_.end()) return;
  it->second(notification.params);
}

}  // namespace hiera::server
