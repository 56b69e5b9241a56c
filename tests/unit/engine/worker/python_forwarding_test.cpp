// `kind: "pytorch"` jobs go to a persistent Python runner over the same
// framing. A stand-in runner (a few lines of Python, placed on
// HIERA_PYTHONPATH) shows the worker relaying results and errors, reporting
// a runner that dies as the job's runtime failure, and starting a fresh
// runner after a death or a "restart": true answer.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "protocol/framing.h"
#include "subprocess.h"
#include "build_paths.h"

namespace {

using hiera::testing::run_process;
using nlohmann::json;

// Answers per task["mode"]: pass (its pid in the result), crash (exits 7),
// error (a JSON-RPC error with data), restart (a failed result asking for a
// restart, then exit 3), error_restart (an error whose data asks for one, then exit 3).
const char* kFakeRunner = R"PY(
import json, os, sys

def read():
    headers = {}
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    while line not in (b"\r\n", b"\n"):
        name, value = line.decode().split(":", 1)
        headers[name.strip().lower()] = value.strip()
        line = sys.stdin.buffer.readline()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))

def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()

while True:
    message = read()
    if message is None:
        break
    if message["method"] == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        break
    mode = message["params"]["task"].get("mode", "pass")
    if mode == "crash":
        sys.exit(7)
    if mode == "error":
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "bad module", "data": {"line": 3}}})
        continue
    if mode == "error_restart":
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "CUDA broke", "data": {"restart": True}}})
        sys.exit(3)
    result = {"verdict": "passed", "failures": [], "trials": [], "pid": os.getpid(), "method": message["method"]}
    if mode == "restart":
        result = {"verdict": "failed", "failures": [{"check": "runtime", "message": "CUDA error"}], "trials": [],
                  "restart": True, "pid": os.getpid()}
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    if mode == "restart":
        sys.exit(3)  # as the real runner does after asking for a restart
)PY";

class PythonForwarding : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device entropy;
    root_ = std::filesystem::temp_directory_path() / ("hiera-fake-runner-" + std::to_string(entropy()));
    std::filesystem::create_directories(root_ / "hiera_runner");
    std::ofstream(root_ / "hiera_runner" / "__init__.py") << "";
    std::ofstream(root_ / "hiera_runner" / "__main__.py") << kFakeRunner;
    ::setenv("HIERA_PYTHONPATH", root_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("HIERA_PYTHONPATH");
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  std::filesystem::path root_;
};

json job(int id, const std::string& method, const std::string& mode) {
  json params = {{"task", {{"kind", "pytorch"}, {"mode", mode}, {"reference", {{"source", "r"}}}, {"candidate", {{"source", "c"}}}}}};
  if (method == "profile") params["which"] = "candidate";
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

TEST_F(PythonForwarding, RelaysAnswersAndRestartsTheRunnerAfterADeathOrARequest) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3 on this machine";
  std::string input;
  int id = 0;
  for (const auto& [method, mode] : std::vector<std::pair<std::string, std::string>>{
           {"evaluate", "pass"}, {"profile", "pass"}, {"evaluate", "crash"}, {"evaluate", "pass"},
           {"evaluate", "restart"}, {"evaluate", "pass"}, {"profile", "error"}, {"profile", "crash"},
           {"profile", "error_restart"}, {"evaluate", "pass"}}) {
    input += hiera::protocol::FrameWriter::encode(job(++id, method, mode).dump());
  }
  input += hiera::protocol::FrameWriter::encode(json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "shutdown"}}.dump());
  auto r =
      run_process({::hiera::testing::worker_bin(), "--python", "python3", "--cache-dir", (root_ / "cache").string()},
                  input, std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  hiera::protocol::FrameReader reader;
  reader.feed(r.out);
  std::vector<json> replies;
  while (auto event = reader.next()) replies.push_back(json::parse(std::get<hiera::protocol::Frame>(*event).body));
  ASSERT_EQ(replies.size(), 11u) << r.out << r.err;
  for (std::size_t i = 0; i < replies.size(); ++i) EXPECT_EQ(replies[i]["id"], i + 1);  // ids are the engine's own

  const json& first = replies[0]["result"];
  EXPECT_EQ(first["verdict"], "passed");
  EXPECT_EQ(first["method"], "evaluate");
  EXPECT_EQ(replies[1]["result"]["method"], "profile");
  EXPECT_EQ(replies[1]["result"]["pid"], first["pid"]);  // one persistent runner

  const json& crashed = replies[2]["result"];
  EXPECT_EQ(crashed["verdict"], "failed");
  EXPECT_EQ(crashed["failures"][0]["check"], "runtime");
  EXPECT_NE(crashed["failures"][0]["message"].get<std::string>().find("died (exit status 7)"), std::string::npos) << crashed;

  const json& after_crash = replies[3]["result"];
  EXPECT_EQ(after_crash["verdict"], "passed");
  EXPECT_NE(after_crash["pid"], first["pid"]);  // a fresh runner

  const json& restart = replies[4]["result"];
  EXPECT_EQ(restart["verdict"], "failed");
  EXPECT_FALSE(restart.contains("restart")) << "the worker itself is not restarting";
  EXPECT_NE(replies[5]["result"]["pid"], restart["pid"]);  // restarted on request

  EXPECT_EQ(replies[6]["error"]["code"], -32602);
  EXPECT_EQ(replies[6]["error"]["message"], "bad module");
  EXPECT_EQ(replies[6]["error"]["data"]["line"], 3);

  EXPECT_EQ(replies[7]["error"]["code"], -32603);  // a profile whose runner died
  EXPECT_NE(replies[7]["error"]["message"].get<std::string>().find("died (exit status 7)"), std::string::npos);
  EXPECT_EQ(replies[8]["error"]["code"], -32603);
  EXPECT_EQ(replies[8]["error"]["message"], "CUDA broke");
  EXPECT_FALSE(replies[8]["error"].contains("data")) << "the runner's restart is not the worker's";
  EXPECT_EQ(replies[9]["result"]["verdict"], "passed") << replies[9];  // a fresh runner, not a spurious failure
  EXPECT_TRUE(replies[10]["result"].is_null());
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
