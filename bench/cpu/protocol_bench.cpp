// Message parse throughput: framing + JSON-RPC validation + LSP params, the
// work the reader thread does for every keystroke a client sends.
#include <benchmark/benchmark.h>

#include "protocol/framing.h"
#include "protocol/json_text.h"
#include "protocol/lsp_types.h"
#include "protocol/message.h"

namespace {

using nlohmann::json;

std::string did_change_frame() {
  json change = {{"jsonrpc", "2.0"}, {"method", "textDocument/didChange"},
                 {"params", {{"textDocument", {{"uri", "file:///work/kernels/attention.cu"}, {"version", 42}}},
                             {"contentChanges", {{{"range", {{"start", {{"line", 120}, {"character", 8}}}, {"end", {{"line", 120}, {"character", 8}}}}}, {"text", "x"}}}}}}};
  return hiera::protocol::FrameWriter::encode(change.dump());
}

void BM_FrameAndParseDidChange(benchmark::State& state) {
  const std::string one = did_change_frame();
  std::string stream;
  for (int i = 0; i < 64; ++i) stream += one;
  for (auto _ : state) {
    hiera::protocol::FrameReader reader;
    reader.feed(stream);
    int parsed = 0;
    while (auto event = reader.next()) {
      auto message = hiera::protocol::parse_message(std::get<hiera::protocol::Frame>(*event).body);
      auto& notification = std::get<hiera::protocol::Notification>(std::get<hiera::protocol::Message>(message));
      auto params = hiera::protocol::lsp::parse_params<hiera::protocol::lsp::DidChangeTextDocumentParams>(notification.params);
      benchmark::DoNotOptimize(params);
      ++parsed;
    }
    benchmark::DoNotOptimize(parsed);
  }
  state.SetItemsProcessed(state.iterations() * 64);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(stream.size()));
}
BENCHMARK(BM_FrameAndParseDidChange);

void BM_SerializeHoverReply(benchmark::State& state) {
  const json reply = hiera::protocol::make_result(hiera::protocol::RequestId(7),
      {{"contents", {{"kind", "markdown"}, {"value", std::string(400, 'x')}}}, {"range", {{"start", {{"line", 1}, {"character", 2}}}, {"end", {{"line", 1}, {"character", 9}}}}}});
  for (auto _ : state) {
    auto text = hiera::protocol::FrameWriter::encode(hiera::protocol::dump_json(reply));
    benchmark::DoNotOptimize(text);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SerializeHoverReply);

}  // namespace

BENCHMARK_MAIN();
