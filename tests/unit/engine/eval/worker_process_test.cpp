// WorkerProcess against hiera-fake-worker: real processes, the real protocol.
#include "engine/eval/worker_process.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "build_paths.h"

namespace hiera::engine::eval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

// This build's version, as the engine sends it (the fake reports it by default).
std::string engine_version() { return WorkerProcess(WorkerConfig{}).config().engine_version; }

// Generous: the tests run on two loaded cores.
constexpr auto kLong = 20s;

WorkerConfig fake(std::vector<std::string> args = {}) {
  WorkerConfig config;
  config.command = {::hiera::testing::fake_worker_bin()};
  config.command.insert(config.command.end(), args.begin(), args.end());
  config.handshake_timeout = kLong;
  config.kill_grace = 2s;
  return config;
}

json behave(const std::string& how) { return json{{"behave", how}}; }

// The bytes of the first request's body (id 2 after the handshake's 1) as WorkerProcess frames it.
std::size_t protocol_body_size(const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", method}, {"params", params}}.dump().size();
}

// Reaped: not running, not a zombie, no longer our child.
bool reaped(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

TEST(WorkerProcessTest, HandshakeReportsTheWorker) {
  WorkerProcess worker(fake({"--device", "3"}));
  ASSERT_FALSE(worker.start()) << worker.stderr_tail();
  EXPECT_TRUE(worker.running());
  EXPECT_GT(worker.pid(), 0);
  EXPECT_EQ(worker.hello().worker_version, engine_version());
  EXPECT_FALSE(worker.hello().cuda);
  ASSERT_TRUE(worker.hello().device);
  EXPECT_EQ(worker.hello().device->index, 3);
  EXPECT_EQ(worker.hello().device->name, "Fake GPU");
  EXPECT_FALSE(worker.hello().pytorch);
}

TEST(WorkerProcessTest, AnswersACall) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("echo", json{{"x", 42}}, kLong);
  ASSERT_TRUE(reply.ok()) << reply.failure->message;
  EXPECT_EQ(reply.result["params"]["x"], 42);
  EXPECT_EQ(reply.result["pid"], worker.pid());
  // And again: one process serves request after request.
  const CallResult again = worker.call("evaluate", json::object(), kLong);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.result["verdict"], "passed");
}

TEST(WorkerProcessTest, ShutdownExitsCleanlyAndReaps) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const pid_t pid = worker.pid();
  worker.shutdown(kLong);
  EXPECT_FALSE(worker.running());
  ASSERT_TRUE(worker.exit_status());
  EXPECT_EQ(worker.exit_status()->code, 0);
  EXPECT_TRUE(reaped(pid));
}

TEST(WorkerProcessTest, ShutdownClosesStdinForAWorkerThatIgnoresTheRequest) {
  WorkerProcess worker(fake({"--ignore-shutdown"}));
  ASSERT_FALSE(worker.start());
  worker.shutdown(kLong);
  ASSERT_TRUE(worker.exit_status());
  EXPECT_EQ(worker.exit_status()->code, 0);
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, ShutdownKillsAWorkerThatIgnoresIt) {
  WorkerProcess worker(fake({"--ignore-shutdown", "--ignore-eof", "--ignore-sigterm"}));
  ASSERT_FALSE(worker.start());
  const pid_t pid = worker.pid();
  worker.shutdown(200ms);
  ASSERT_TRUE(worker.exit_status());
  EXPECT_EQ(worker.exit_status()->signal, SIGKILL);
  EXPECT_TRUE(reaped(pid));
}

TEST(WorkerProcessTest, RefusesAWorkerOfAnotherMinorVersion) {
  // The fake accepts any engine, so the refusal is the engine's own.
  WorkerProcess worker(fake({"--version", "9.8.1", "--no-version-check"}));
  const auto failure = worker.start();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, WorkerFailureKind::Refused);
  EXPECT_THAT(failure->message, HasSubstr("9.8.1"));
  EXPECT_THAT(failure->message, HasSubstr(engine_version()));
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, ReportsTheWorkersOwnRefusal) {
  WorkerProcess worker(fake({"--version", "9.8.1"}));
  const auto failure = worker.start();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, WorkerFailureKind::Refused);
  EXPECT_THAT(failure->message, HasSubstr("refused"));
  EXPECT_THAT(failure->message, HasSubstr("9.8.1"));
  EXPECT_THAT(failure->message, HasSubstr(engine_version()));
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, AcceptsAnotherPatchVersion) {
  const std::string version = engine_version();
  const std::string other_patch = version.substr(0, version.rfind('.')) + ".99";
  WorkerProcess worker(fake({"--version", other_patch, "--no-version-check"}));
  EXPECT_FALSE(worker.start());
  EXPECT_EQ(worker.hello().worker_version, other_patch);
}

TEST(WorkerProcessTest, ComparesMajorAndMinorOnly) {
  EXPECT_TRUE(same_major_minor("0.1.0", "0.1.7"));
  EXPECT_TRUE(same_major_minor("1.2", "1.2.3-dev"));
  EXPECT_FALSE(same_major_minor("0.2.0", "0.1.0"));
  EXPECT_FALSE(same_major_minor("1.1.0", "0.1.0"));
  EXPECT_FALSE(same_major_minor("", "0.1.0"));
  EXPECT_FALSE(same_major_minor("x.y", "x.y"));
}

TEST(WorkerProcessTest, ReportsAProgramThatCannotStart) {
  WorkerConfig config;
  config.command = {"/nonexistent/hiera-worker", "worker"};
  WorkerProcess worker(config);
  const auto failure = worker.start();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(failure->message, HasSubstr("cannot start /nonexistent/hiera-worker"));
  EXPECT_FALSE(worker.running());
}

TEST(WorkerProcessTest, HandshakeTimesOut) {
  WorkerConfig config = fake({"--hello", "hang"});
  config.handshake_timeout = 300ms;
  WorkerProcess worker(config);
  const auto failure = worker.start();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, WorkerFailureKind::Timeout);
  EXPECT_EQ(failure->message, "worker timed out after 300 ms during hello");
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, WorkerDyingInTheHandshakeIsReported) {
  WorkerProcess worker(fake({"--hello", "die"}));
  const auto failure = worker.start();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(failure->message, HasSubstr("exit status 2"));
  EXPECT_THAT(failure->message, HasSubstr("cannot initialise"));
}

TEST(WorkerProcessTest, TimeoutKillsAHangingWorker) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("hang"), 300ms);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Timeout);
  EXPECT_EQ(reply.failure->message, "worker timed out after 300 ms during evaluate");
  EXPECT_FALSE(worker.running());
  ASSERT_TRUE(worker.exit_status());
  EXPECT_EQ(worker.exit_status()->signal, SIGTERM);
  EXPECT_TRUE(reaped(worker.pid()));
  // A failed worker takes no more calls.
  const CallResult after = worker.call("echo", json::object(), kLong);
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.failure->kind, WorkerFailureKind::Died);
}

TEST(WorkerProcessTest, TimeoutEscalatesToSigkill) {
  WorkerConfig config = fake({"--ignore-sigterm"});
  config.kill_grace = 200ms;
  WorkerProcess worker(config);
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("hang"), 200ms);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Timeout);
  ASSERT_TRUE(worker.exit_status());
  EXPECT_EQ(worker.exit_status()->signal, SIGKILL);
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, ExitIsReportedWithStatusAndStderr) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("die"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Died);
  EXPECT_EQ(reply.failure->exit_code, 1);
  EXPECT_THAT(reply.failure->message, HasSubstr("worker died (exit status 1) during evaluate: "));
  EXPECT_THAT(reply.failure->message, HasSubstr("dying on request during evaluate"));
  EXPECT_THAT(reply.failure->stderr_tail, HasSubstr("dying on request"));
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, SegfaultIsReportedWithTheSignal) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("segv"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Died);
  EXPECT_EQ(reply.failure->signal, SIGSEGV);
  EXPECT_THAT(reply.failure->message, HasSubstr("worker died (signal 11 SIGSEGV) during evaluate: "));
  EXPECT_THAT(reply.failure->message, HasSubstr("segfault on request"));
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, GarbageOnStdoutIsAProtocolFailure) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("garbage"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Protocol);
  EXPECT_THAT(reply.failure->message, HasSubstr("during evaluate"));
  EXPECT_THAT(reply.failure->message, HasSubstr("this is not a frame"));
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, AResponseToAnotherIdIsAProtocolFailure) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("echo", behave("wrong-id"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Protocol);
  EXPECT_THAT(reply.failure->message, HasSubstr("1000000"));
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, AnErrorReplyLeavesTheWorkerRunning) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  const CallResult reply = worker.call("evaluate", behave("error"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::RpcError);
  EXPECT_EQ(reply.failure->rpc_code, -32602);
  EXPECT_THAT(reply.failure->message, HasSubstr("bad parameters on request"));
  EXPECT_TRUE(worker.running());
  EXPECT_TRUE(worker.call("echo", json::object(), kLong).ok());
}

TEST(WorkerProcessTest, CancellationKillsTheWorker) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  CancellationToken cancel;
  std::thread canceller([cancel] {
    std::this_thread::sleep_for(100ms);
    cancel.cancel();
  });
  const CallResult reply = worker.call("evaluate", behave("hang"), kLong, cancel);
  canceller.join();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(reply.failure->message, "cancelled during evaluate");
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, AbortEndsTheCallAndEveryLaterOne) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  std::thread aborter([&worker] {
    std::this_thread::sleep_for(100ms);
    worker.abort("shutting down");
  });
  const CallResult reply = worker.call("evaluate", behave("hang"), kLong);
  aborter.join();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_THAT(reply.failure->message, HasSubstr("shutting down"));
  EXPECT_EQ(worker.call("echo", json::object(), kLong).failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, StderrTailIsBounded) {
  WorkerConfig config = fake();
  config.stderr_capacity = 4096;
  WorkerProcess worker(config);
  ASSERT_FALSE(worker.start());
  ASSERT_TRUE(worker.call("echo", behave("stderr:200000"), kLong).ok());
  const CallResult reply = worker.call("evaluate", behave("die"), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_LE(reply.failure->stderr_tail.size(), 4096u);
  EXPECT_THAT(reply.failure->stderr_tail, HasSubstr("END-OF-STDERR"));
  EXPECT_THAT(reply.failure->stderr_tail, HasSubstr("dying on request"));
  // The message carries only the end of it.
  EXPECT_LT(reply.failure->message.size(), 2200u);
  EXPECT_THAT(reply.failure->message, HasSubstr("dying on request"));
}

TEST(WorkerProcessTest, ChattyWorkerDoesNotBlockBetweenCalls) {
  // More than a pipe buffer of stderr, written while nobody waits on a call.
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  ASSERT_TRUE(worker.call("echo", behave("stderr:1000000"), kLong).ok());
  EXPECT_TRUE(worker.call("echo", json::object(), kLong).ok());
  EXPECT_THAT(worker.stderr_tail(), HasSubstr("END-OF-STDERR"));
  EXPECT_LE(worker.stderr_tail().size(), 64u << 10);
}

TEST(WorkerProcessTest, DeathWhileIdleIsNoticed) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  ::kill(worker.pid(), SIGKILL);
  // EOF reaches the I/O thread soon; a bounded look, asserting nothing about time.
  const auto deadline = std::chrono::steady_clock::now() + kLong;
  while (worker.running() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(worker.running());
  const CallResult reply = worker.call("echo", json::object(), kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(reply.failure->message, HasSubstr("signal 9 SIGKILL"));
  EXPECT_TRUE(reaped(worker.pid()));
}

TEST(WorkerProcessTest, DestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    WorkerProcess worker(fake());
    ASSERT_FALSE(worker.start());
    pid = worker.pid();
  }
  EXPECT_TRUE(reaped(pid));
}

TEST(WorkerProcessTest, DescribesDurations) {
  EXPECT_EQ(describe_duration(300ms), "300 ms");
  EXPECT_EQ(describe_duration(30s), "30 s");
  EXPECT_EQ(describe_duration(1500ms), "1.5 s");
}

TEST(WorkerProcessTest, DescribesCommands) {
  EXPECT_EQ(describe_command({"hiera", "worker", "--device", "0"}), "hiera worker --device 0");
  EXPECT_EQ(describe_command({"ssh", "my host", ""}), "ssh 'my host' ''");
}

}  // namespace
}  // namespace hiera::engine::eval

namespace hiera::engine::eval {
namespace {

TEST(WorkerProcessTest, ARequestOverTheFrameLimitIsNotSentAndNamesTheLimit) {
  WorkerProcess worker(fake());
  ASSERT_FALSE(worker.start());
  // A 65 MiB source: the request's body is this plus the JSON around it.
  const std::string source(65u << 20, 'x');
  const CallResult reply = worker.call("compile", json{{"source", source}}, kLong);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.failure->kind, WorkerFailureKind::RpcError);
  const std::size_t body = protocol_body_size("compile", json{{"source", source}});
  char size[64];
  std::snprintf(size, sizeof size, "%.1f MiB (%zu bytes)", static_cast<double>(body) / (1u << 20), body);
  EXPECT_EQ(reply.failure->message, "the compile request is " + std::string(size) +
                                        ", over the job protocol's frame limit of 64.0 MiB (67108864 bytes); it was "
                                        "not sent to the worker");
  // Nothing reached the worker: it serves the next request.
  EXPECT_TRUE(worker.running());
  const CallResult next = worker.call("evaluate", json::object(), kLong);
  ASSERT_TRUE(next.ok()) << next.failure->message;
  EXPECT_EQ(next.result["verdict"], "passed");
}

// `kill -9` of the engine: the worker goes with it, even one that would
// outlive the end of its stdin. The engine is this test forked.
TEST(WorkerProcessTest, TheWorkerDiesWithTheEngine) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t engine = ::fork();
  if (engine == 0) {
    ::close(report[0]);
    WorkerProcess worker(fake({"--ignore-eof", "--ignore-sigterm"}));
    if (worker.start()) ::_exit(1);
    const pid_t pid = worker.pid();
    if (::write(report[1], &pid, sizeof pid) != sizeof pid) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(report[1]);
  pid_t worker = -1;
  const ssize_t n = ::read(report[0], &worker, sizeof worker);
  ::close(report[0]);
  ::kill(engine, SIGKILL);
  int status = 0;
  ::waitpid(engine, &status, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof worker));
  const auto deadline = std::chrono::steady_clock::now() + kLong;
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    // Gone, or a zombie its new parent has not reaped yet.
    std::ifstream stat("/proc/" + std::to_string(worker) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos || line.find(") X") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "worker " << worker << " outlived its engine";
  if (!gone) ::kill(worker, SIGKILL);
}

}  // namespace
}  // namespace hiera::engine::eval
