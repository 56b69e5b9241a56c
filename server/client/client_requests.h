#pragma once
// Requests the server sends to the client (applyEdit, workDoneProgress/create,
// configuration, showMessageRequest): ids, the table of pending replies, and a
// timeout after which the callback gets an error instead of waiting forever.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocol/message.h"

namespace hiera::server {

class ClientRequests {
 public:
  using Outcome = std::variant<nlohmann::json, protocol::ResponseError>;
  using Callback = std::function<void(Outcome)>;
  using Send = std::function<void(nlohmann::json)>;

  // Callbacks run on `loop`.
  ClientRequests(boost::asio::io_context& loop, Send send);
  ~ClientRequests();

  // Thread-safe.
  void request(const std::string& method, nlohmann::json params, Callback callback,
               std::chrono::milliseconds timeout);
  // Routes a client response to its callback; false when no request has this id.
  bool on_response(const protocol::Response& response);
  // Fails every pending request, and every later one at once (the connection is closing).
  void fail_all(const std::string& reason);
  std::size_t pending() const;

 private:
  struct Pending {
    Callback callback;
    std::shared_ptr<boost::asio::steady_timer> timer;
  };
  void complete(std::int64_t id, Outcome outcome);

  boost::asio::io_context& loop_;
  Send send_;
  mutable std::mutex mutex_;
  std::int64_t next_id_ = 1;
  std::optional<std::string> closed_;  // why new requests fail at once
  std::map<std::int64_t, Pending> pending_;
};

}  // namespace hiera::server
