// libFuzzer target: arbitrary bytes from a "client" through framing, JSON-RPC
// parsing, the lifecycle and dispatch into the features of a whole server.
// The server must answer or drop each input and exit cleanly at end of input:
// a crash, a sanitizer report, a hang (libFuzzer -timeout) or a leak fails.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memory_transport.h"
#include "protocol/framing.h"
#include "server/features/job_commands.h"
#include "server/lsp_server.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hiera;
  if (size == 0) return 0;
  testing::MemoryTransport transport;
  server::ServerOptions options;
  options.job_threads = 1;
  options.max_body_bytes = 1 << 16;
  options.client_request_timeout = std::chrono::milliseconds(1);  // the fuzzer never answers the server
  server::LspServer lsp(transport, options);
  // The features `hiera lsp` has; the test features block on purpose, which
  // would only slow the fuzzer down.
  lsp.add_feature(std::make_unique<server::JobCommands>());

  // Most inputs start after a valid initialize, so the fuzzer reaches the
  // handlers; the first byte picks that and the chunking of the rest.
  const std::uint8_t mode = data[0];
  if (mode & 1) {
    transport.push_message({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                            {"params", {{"capabilities", testing::full_capabilities()}}}});
  }
  const std::size_t chunk = 1 + (mode >> 1) * 8;  // 1 (byte by byte) to 1017 bytes a read
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  for (std::size_t at = 0; at < size - 1; at += chunk) transport.push(std::string(bytes + at, std::min(chunk, size - 1 - at)));
  transport.end_input();
  lsp.run();
  return 0;
}
