#pragma once
// Starts an LSP server on stdio or a loopback TCP port with hiera's built-in
// features plus any the caller adds; shared by `hiera lsp` and test servers.
#include <functional>
#include <optional>
#include <string>

#include "server/lsp_server.h"

namespace hiera::server {

struct ServeOptions {
  std::optional<std::string> listen;  // "127.0.0.1:PORT"; stdio when absent
  ServerOptions server;
};

// Returns the process exit code. Errors (bad address, port in use) are
// reported on stderr with exit code 2.
int serve_lsp(const ServeOptions& options, const std::function<void(LspServer&)>& add_features = {});

}  // namespace hiera::server
