// The whole server in-process: frames in through a MemoryTransport, frames
// out, with the test-only features of tests/e2e/test_server.
#include "server/lsp_server.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "memory_transport.h"
#include "server/features/job_commands.h"
#include "test_feature.h"

namespace hiera::server {
namespace {

using nlohmann::json;
using hiera::testing::full_capabilities;
using hiera::testing::notification;
using hiera::testing::request;

class LspServerTest : public ::testing::Test {
 protected:
  hiera::testing::MemoryTransport transport;
  std::unique_ptr<LspServer> server;
  std::future<int> exit_code;

  void start(ServerOptions options = {}) {
    options.client_request_timeout = std::chrono::milliseconds(2000);
    server = std::make_unique<LspServer>(transport, options);
    server->add_feature(std::make_unique<JobCommands>());
    server->add_feature(std::make_unique<hiera::testing::TestFeature>());
    exit_code = std::async(std::launch::async, [this] { return server->run(); });
  }
  json call(json id, const std::string& method, json params = json::object()) {
    transport.push_message(request(id, method, std::move(params)));
    auto response = transport.wait_for_response(id);
    if (!response) ADD_FAILURE() << "no response to " << method;
    return response.value_or(json());
  }
  json initialize(json capabilities = full_capabilities(), json options = nullptr) {
    json params = {{"processId", nullptr}, {"capabilities", std::move(capabilities)}};
    if (!options.is_null()) params["initializationOptions"] = options;
    auto reply = call(0, "initialize", params);
    transport.push_message(notification("initialized"));
    return reply;
  }
  void open(const std::string& uri, const std::string& text, int version = 1) {
    transport.push_message(notification("textDocument/didOpen",
                                        {{"textDocument", {{"uri", uri}, {"languageId", "cuda-cpp"}, {"version", version}, {"text", text}}}}));
  }
  int finish() {
    transport.end_input();
    return exit_code.get();
  }
  void TearDown() override {
    if (exit_code.valid()) finish();
  }
  static std::function<bool(const json&)> method_is(const std::string& method) {
    return [method](const json& m) { return m.value("method", "") == method; };
  }
};

TEST_F(LspServerTest, InitializeAnswersCapabilitiesAndShutdownExitIsZero) {
  start();
  auto reply = initialize();
  const json& caps = reply["result"]["capabilities"];
  EXPECT_EQ(caps["positionEncoding"], "utf-16");
  EXPECT_EQ(caps["textDocumentSync"]["change"], 2);
  EXPECT_EQ(caps["hoverProvider"], true);
  EXPECT_EQ(caps["codeActionProvider"]["resolveProvider"], true);
  EXPECT_EQ(caps["executeCommandProvider"]["commands"],
            (json{"hiera.cancelJob", "hiera.jobs", "hiera.test.slowJob", "hiera.test.block"}));
  EXPECT_EQ(reply["result"]["serverInfo"]["name"], "hiera");
  EXPECT_EQ(call(1, "shutdown")["result"], nullptr);
  EXPECT_EQ(call(2, "textDocument/hover", json::object())["error"]["code"], -32600);  // after shutdown
  transport.push_message(notification("exit"));
  EXPECT_EQ(exit_code.get(), 0);
}

TEST_F(LspServerTest, ExitWithoutShutdownIsOne) {
  start();
  initialize();
  transport.push_message(notification("exit"));
  EXPECT_EQ(exit_code.get(), 1);
}

TEST_F(LspServerTest, AbruptEofInsideABodyEndsCleanlyWithExitOne) {
  start();
  initialize();
  transport.push("Content-Length: 100\r\n\r\n{\"jsonrpc\":");
  EXPECT_EQ(finish(), 1);
  auto error = transport.wait_for([](const json& m) { return m.contains("error"); }, std::chrono::milliseconds(100));
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["error"]["code"], -32700);
}

TEST_F(LspServerTest, RequestsBeforeInitializeAreRefused) {
  start();
  auto reply = call(1, "textDocument/hover", {{"textDocument", {{"uri", "file:///x"}}}, {"position", {{"line", 0}, {"character", 0}}}});
  EXPECT_EQ(reply["error"]["code"], -32002);
  initialize();
  EXPECT_EQ(call(2, "initialize", {{"capabilities", json::object()}})["error"]["code"], -32600);
}

TEST_F(LspServerTest, UtfEightIsNegotiatedWhenOffered) {
  start();
  json caps = full_capabilities();
  caps["general"]["positionEncodings"] = {"utf-8", "utf-16"};
  EXPECT_EQ(initialize(caps)["result"]["capabilities"]["positionEncoding"], "utf-8");
  open("file:///u.cu", "// 😀 x\nint value;\n");
  auto hover = call(1, "textDocument/hover", {{"textDocument", {{"uri", "file:///u.cu"}}}, {"position", {{"line", 0}, {"character", 8}}}});
  EXPECT_EQ(hover["result"]["contents"]["value"], "`x` at line 0, column 8 (utf-8)");
}

TEST_F(LspServerTest, MalformedInputGetsErrorsAndTheServerGoesOn) {
  start();
  initialize();
  transport.push("Content-Length: 5\r\n\r\n{oops");                        // bad JSON
  transport.push("Content-Length: 2\r\n\r\n[]");                           // a batch: not LSP
  transport.push("Content-Type: x\r\n\r\n");                               // no length
  transport.push_message({{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "x"}});  // fractional id
  auto errors = std::vector<int>{};
  for (int i = 0; i < 4; ++i) {
    auto e = transport.wait_for([](const json& m) { return m.contains("error") && m["id"].is_null(); });
    ASSERT_TRUE(e) << "error " << i;
    errors.push_back((*e)["error"]["code"]);
  }
  EXPECT_EQ(errors, (std::vector<int>{-32700, -32600, -32700, -32600}));
  EXPECT_EQ(call(7, "no/such/method")["error"]["code"], -32601);
  EXPECT_EQ(call(8, "textDocument/hover", {{"textDocument", 5}})["error"]["code"], -32602);
  EXPECT_EQ(call(9, "workspace/executeCommand", {{"command", "hiera.jobs"}})["result"], json::array());
}

TEST_F(LspServerTest, AHundredMegabyteClaimIsRejectedWithoutWaitingForTheBody) {
  start();
  initialize();
  transport.push("Content-Length: 100000000\r\n\r\n{");
  auto error = transport.wait_for([](const json& m) { return m.contains("error"); });
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["error"]["code"], -32600);
  EXPECT_EQ(finish(), 1);
}

TEST_F(LspServerTest, InvalidUtf8InADocumentIsReplacedNotFatal) {
  start();
  initialize();
  const std::string bad = "int \xff\xfe x;";
  // nlohmann refuses to emit invalid UTF-8; build the frame by hand.
  const std::string body = std::string(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///b.cu","languageId":"cuda-cpp","version":1,"text":")") + bad + "\"}}}";
  transport.push("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  auto hover = call(1, "textDocument/hover", {{"textDocument", {{"uri", "file:///b.cu"}}}, {"position", {{"line", 0}, {"character", 7}}}});
  EXPECT_EQ(hover["result"]["contents"]["value"], "`x` at line 0, column 7 (utf-16)");
}

TEST_F(LspServerTest, DiagnosticsCarryTheDocumentVersion) {
  start();
  initialize();
  open("file:///d.cu", "// TODO\n", 4);
  auto diags = transport.wait_for(method_is("textDocument/publishDiagnostics"));
  ASSERT_TRUE(diags);
  EXPECT_EQ((*diags)["params"]["version"], 4);
  EXPECT_EQ((*diags)["params"]["diagnostics"][0]["range"], (json{{"start", {{"line", 0}, {"character", 3}}}, {"end", {{"line", 0}, {"character", 7}}}}));
  transport.push_message(notification("textDocument/didChange",
                                      {{"textDocument", {{"uri", "file:///d.cu"}, {"version", 5}}},
                                       {"contentChanges", {{{"range", {{"start", {{"line", 0}, {"character", 3}}}, {"end", {{"line", 0}, {"character", 7}}}}}, {"text", "done"}}}}}));
  diags = transport.wait_for(method_is("textDocument/publishDiagnostics"));
  ASSERT_TRUE(diags);
  EXPECT_EQ((*diags)["params"]["version"], 5);
  EXPECT_EQ((*diags)["params"]["diagnostics"], json::array());
}

TEST_F(LspServerTest, CancelRequestCancelsARunningRequestAndTheLoopGoesOn) {
  start();
  initialize();
  open("file:///c.cu", "int a;\n");
  transport.push_message(request(1, "workspace/executeCommand", {{"command", "hiera.test.block"}, {"arguments", {{{"ms", 10000}}}}}));
  transport.push_message(request(2, "textDocument/hover", {{"textDocument", {{"uri", "file:///c.cu"}}}, {"position", {{"line", 0}, {"character", 4}}}}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  transport.push_message(notification("$/cancelRequest", {{"id", 1}}));
  auto first = transport.wait_for_response(1, std::chrono::seconds(5));
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["error"]["code"], -32800);
  auto second = transport.wait_for_response(2);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)["result"]["contents"]["value"], "`a` at line 0, column 4 (utf-16)");
}

TEST_F(LspServerTest, HoverStaysResponsiveWhileAJobRunsAndTheJobEditsTheDocument) {
  start();
  initialize();
  open("file:///j.cu", "int a;\n", 1);
  auto started = call(1, "workspace/executeCommand",
                      {{"command", "hiera.test.slowJob"}, {"arguments", {{{"uri", "file:///j.cu"}, {"version", 1}, {"steps", 3}, {"stepMs", 50}}}}});
  const std::string job = started["result"]["jobId"];
  auto create = transport.wait_for(method_is("window/workDoneProgress/create"));
  ASSERT_TRUE(create);
  EXPECT_EQ((*create)["params"]["token"], job);
  transport.push_message({{"jsonrpc", "2.0"}, {"id", (*create)["id"]}, {"result", nullptr}});
  // The loop answers while the job sleeps.
  auto hover = call(2, "textDocument/hover", {{"textDocument", {{"uri", "file:///j.cu"}}}, {"position", {{"line", 0}, {"character", 0}}}});
  EXPECT_EQ(hover["result"]["contents"]["value"], "`int` at line 0, column 0 (utf-16)");
  auto apply = transport.wait_for(method_is("workspace/applyEdit"));
  ASSERT_TRUE(apply);
  EXPECT_EQ((*apply)["params"]["edit"]["documentChanges"][0]["textDocument"], (json{{"uri", "file:///j.cu"}, {"version", 1}}));
  transport.push_message({{"jsonrpc", "2.0"}, {"id", (*apply)["id"]}, {"result", {{"applied", true}}}});
  auto end = transport.wait_for([](const json& m) {
    return m.value("method", "") == "$/progress" && m["params"]["value"]["kind"] == "end";
  });
  ASSERT_TRUE(end);
  EXPECT_EQ((*end)["params"]["value"]["message"], "done");
}

TEST_F(LspServerTest, AClientThatNeverAnswersTimesOutInsteadOfHanging) {
  start();
  initialize();
  open("file:///t.cu", "int a;\n", 1);
  auto started = call(1, "workspace/executeCommand",
                      {{"command", "hiera.test.slowJob"}, {"arguments", {{{"uri", "file:///t.cu"}, {"steps", 1}, {"stepMs", 5}}}}});
  // Neither the progress token nor the edit is answered: both time out (2 s each here).
  auto end = transport.wait_for([](const json& m) {
    return m.value("method", "") == "window/showMessage" && m["params"]["message"].get<std::string>().find("not applied") != std::string::npos;
  }, std::chrono::seconds(10));
  ASSERT_TRUE(end);
  EXPECT_EQ((*end)["params"]["message"], "hiera: hiera test job: not applied: client did not answer workspace/applyEdit in time");
}

TEST_F(LspServerTest, SettingsComeFromInitializationOptionsThenConfiguration) {
  start();
  initialize(full_capabilities(), {{"gpu", "H100"}, {"budget", 5}});
  auto pull = transport.wait_for(method_is("workspace/configuration"));
  ASSERT_TRUE(pull);
  EXPECT_EQ((*pull)["params"]["items"][0]["section"], "hiera");
  transport.push_message({{"jsonrpc", "2.0"}, {"id", (*pull)["id"]}, {"result", {{{"gpu", "H200"}}}}});
  for (int i = 0; i < 200 && server->settings().get("/gpu") != "H200"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server->settings().get("/gpu"), "H200");
  EXPECT_EQ(server->settings().get("/budget"), 5);
}

TEST_F(LspServerTest, CodeActionsCarryRoutingDataAndResolveToAnEdit) {
  start();
  initialize();
  open("file:///r.cu", "int a;\n", 2);
  auto actions = call(1, "textDocument/codeAction",
                      {{"textDocument", {{"uri", "file:///r.cu"}}}, {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}}, {"context", {{"diagnostics", json::array()}}}});
  ASSERT_EQ(actions["result"].size(), 2u);
  json header = actions["result"][1];
  EXPECT_EQ(header["title"], "hiera-test: insert header comment");
  EXPECT_FALSE(header.contains("edit"));
  auto resolved = call(2, "codeAction/resolve", header);
  EXPECT_EQ(resolved["result"]["edit"]["documentChanges"][0]["edits"][0]["newText"], "// hiera-test: header\n");
  EXPECT_EQ(call(3, "codeAction/resolve", {{"title", "x"}, {"data", 5}})["error"]["code"], -32602);
}

// A storm of edits: every didChange arrives before the debounce ends, so the
// server builds the diagnostics a few times, not once per edit, and what it
// publishes last (and only) is the final version's.
TEST_F(LspServerTest, AStormOfEditsIsCoalescedAndTheLastDiagnosticsAreTheFinalVersions) {
  ServerOptions options;
  options.analysis_debounce = std::chrono::milliseconds(100);
  start(options);
  initialize();
  open("file:///s.cu", "// TODO\n", 1);
  auto first = transport.wait_for(method_is("textDocument/publishDiagnostics"));
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["params"]["version"], 1);

  constexpr int kEdits = 300;
  for (int i = 0; i < kEdits; ++i) {  // each edit puts one more 'x' before the TODO
    transport.push_message(notification("textDocument/didChange",
                                        {{"textDocument", {{"uri", "file:///s.cu"}, {"version", 2 + i}}},
                                         {"contentChanges", {{{"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}}, {"text", "x"}}}}}));
  }
  constexpr int kFinal = 1 + kEdits;
  auto last = transport.wait_for([](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["version"] == kFinal;
  });
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)["params"]["diagnostics"][0]["range"],
            (json{{"start", {{"line", 0}, {"character", kEdits + 3}}}, {"end", {{"line", 0}, {"character", kEdits + 7}}}}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // nothing is published after it
  std::vector<json> others;
  for (auto& m : transport.drain()) {
    if (m.value("method", "") == "textDocument/publishDiagnostics") others.push_back(m);
  }
  EXPECT_TRUE(others.empty()) << others.size() << " more, the last of version " << others.back()["params"]["version"];
  const auto stats = server->build_stats();
  EXPECT_EQ(stats.updates, static_cast<std::uint64_t>(kEdits + 1));
  EXPECT_LT(stats.builds, static_cast<std::uint64_t>(kEdits));
  EXPECT_EQ(stats.commits, 2u);  // the opened version, then the final one
}

// A code lens is of its own version: it does not wait out the debounce but
// starts that version's build and answers once it is done.
TEST_F(LspServerTest, ACodeLensStartsItsVersionsBuildAndAnswersFromIt) {
  ServerOptions options;
  options.analysis_debounce = std::chrono::seconds(10);  // only a reader starts the build
  start(options);
  initialize();
  open("file:///l.cu", "a\n", 1);
  ASSERT_TRUE(transport.wait_for(method_is("textDocument/publishDiagnostics")));
  transport.push_message(notification("textDocument/didChange",
                                      {{"textDocument", {{"uri", "file:///l.cu"}, {"version", 2}}},
                                       {"contentChanges", {{{"text", "a\nb\n"}}}}}));
  // The lens of version 2 starts its build at once and waits for it.
  auto lens = call(1, "textDocument/codeLens", {{"textDocument", {{"uri", "file:///l.cu"}}}});
  EXPECT_EQ(lens["result"][0]["command"]["title"], "hiera-test: 3 lines");
  auto diags = transport.wait_for([](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["version"] == 2;
  });
  EXPECT_TRUE(diags);
}

}  // namespace
}  // namespace hiera::server
