#include "server/client/client.h"

namespace hiera::server {

void Client::show_message(protocol::lsp::MessageType type, const std::string& message) {
  notify("window/showMessage", protocol::lsp::ShowMessageParams{type, message});
}

void Client::log(protocol::lsp::MessageType type, const std::string& message) {
  notify("window/logMessage", protocol::lsp::LogMessageParams{type, message});
}

}  // namespace hiera::server
