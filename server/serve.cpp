#include "server/serve.h"

#include <csignal>
#include <iostream>

#include "server/features/job_commands.h"
#include "server/transport/stdio_transport.h"
#include "server/transport/tcp_transport.h"

namespace hiera::server {

namespace {

int serve_on(Transport& transport, const ServeOptions& options, const std::function<void(LspServer&)>& add_features) {
  LspServer server(transport, options.server);
  server.add_feature(std::make_unique<JobCommands>());
  if (add_features) add_features(server);
  return server.run();
}

}  // namespace

int serve_lsp(const ServeOptions& options, const std::function<void(LspServer&)>& add_features) {
  // A client that hangs up must not kill us mid-write; the write reports EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    if (!options.listen) {
      StdioTransport transport;
      return serve_on(transport, options, add_features);
    }
    const auto& listen = *options.listen;
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("--listen wants ADDRESS:PORT, got '" + listen + "'");
    std::string host = listen.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    unsigned long port = 0;
    try {
      std::size_t used = 0;
      port = std::stoul(listen.substr(colon + 1), &used);
      if (used != listen.size() - colon - 1 || port > 65535) throw std::out_of_range("port");
    } catch (const std::exception&) {
      throw std::runtime_error("--listen: '" + listen.substr(colon + 1) + "' is not a port number");
    }
    TcpTransport transport(host, static_cast<std::uint16_t>(port));
    // Tools that start us with port 0 read the chosen port from this line.
    std::cerr << "hiera: listening on " << host << ":" << transport.port() << std::endl;
    transport.accept();
    return serve_on(transport, options, add_features);
  } catch (const std::exception& e) {
    std::cerr << "hiera lsp: " << e.what() << std::endl;
    return 2;
  }
}

}  // namespace hiera::server
