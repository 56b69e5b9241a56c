// hiera-test-lsp: `hiera lsp` plus the test-only features of test_feature.h.
#include <CLI/CLI.hpp>

#include "server/serve.h"
#include "test_feature.h"

int main(int argc, char** argv) {
  CLI::App app{"hiera test language server (test builds only)", "hiera-test-lsp"};
  hiera::server::ServeOptions serve;
  app.add_option("--listen", serve.listen, "Serve one client over TCP on a loopback ADDRESS:PORT");
  int timeout_ms = 30000;
  app.add_option("--client-timeout-ms", timeout_ms, "How long to wait for the client's replies");
  CLI11_PARSE(app, argc, argv);
  serve.server.client_request_timeout = std::chrono::milliseconds(timeout_ms);
  return hiera::server::serve_lsp(serve, [](hiera::server::LspServer& server) {
    server.add_feature(std::make_unique<hiera::testing::TestFeature>());
  });
}
