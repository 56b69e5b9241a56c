#pragma once
// What the rest of the server may do to the client, from any thread.
#include <chrono>
#include <string>

#include "protocol/lsp_types.h"
#include "server/client/client_requests.h"
#include "server/documents/position_encoding.h"

namespace hiera::server {

class Client {
 public:
  virtual ~Client() = default;
  virtual void notify(const std::string& method, nlohmann::json params) = 0;
  virtual void request(const std::string& method, nlohmann::json params, ClientRequests::Callback callback) = 0;
  virtual const protocol::lsp::ClientCapabilities& capabilities() const = 0;
  virtual PositionEncoding encoding() const = 0;

  void show_message(protocol::lsp::MessageType type, const std::string& message);
  void log(protocol::lsp::MessageType type, const std::string& message);  // window/logMessage
};

}  // namespace hiera::server
