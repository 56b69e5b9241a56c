// WorkerPool against hiera-fake-worker: real processes, the real protocol.
#include "engine/eval/worker_pool.h"

#include <algorithm>
#include <cerrno>
#include <set>
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

// Generous: the tests run on two loaded cores. Waits are on futures, not sleeps.
constexpr auto kLong = 30s;

std::vector<std::string> fake(std::vector<std::string> args = {}) {
  std::vector<std::string> command{::hiera::testing::fake_worker_bin()};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

WorkerPoolOptions pool_of(std::size_t workers, std::vector<std::string> args = {}) {
  WorkerPoolOptions options;
  for (std::size_t i = 0; i < workers; ++i) options.commands.push_back(fake(args));
  options.handshake_timeout = kLong;
  options.kill_grace = 2s;
  options.shutdown_grace = 2s;
  return options;
}

Job job(const std::string& behave, std::chrono::milliseconds timeout = kLong) {
  Job j;
  j.method = "evaluate";
  j.params = json{{"behave", behave}};
  j.timeout = timeout;
  return j;
}

JobOutcome get(std::future<JobOutcome>& future) {
  if (future.wait_for(kLong) != std::future_status::ready) {
    ADD_FAILURE() << "no outcome within " << kLong.count() << " s";
    return {};
  }
  return future.get();
}

JobOutcome run(WorkerPool& pool, Job j) {
  auto future = pool.submit(std::move(j));
  return get(future);
}

// A job that says when a worker has taken it: tests wait on that event, not on time.
struct Started {
  std::promise<std::size_t> promise;
  std::future<std::size_t> future = promise.get_future();
  void attach(Job& j) {
    j.on_started = [this](std::size_t worker) { promise.set_value(worker); };
  }
  bool wait() { return future.wait_for(kLong) == std::future_status::ready; }
};

bool reaped(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

TEST(WorkerPoolTest, RunsAJobAndRecordsTheWorker) {
  WorkerPool pool(pool_of(1));
  const JobOutcome outcome = run(pool, job("ok"));
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.result["verdict"], "passed");
  EXPECT_EQ(outcome.worker, 0);
  EXPECT_EQ(outcome.worker_command, fake());
  EXPECT_EQ(outcome.result["pid"], outcome.worker_pid);
  EXPECT_FALSE(outcome.worker_restarted);
  const auto status = pool.status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].jobs, 1u);
  EXPECT_EQ(status[0].starts, 1u);
  ASSERT_TRUE(status[0].hello);
  EXPECT_EQ(status[0].hello->device->name, "Fake GPU");
}

TEST(WorkerPoolTest, HangingWorkerTimesOutAndIsReplaced) {
  WorkerPool pool(pool_of(1));
  const JobOutcome hung = run(pool, job("hang", 300ms));
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.failure->kind, WorkerFailureKind::Timeout);
  EXPECT_EQ(hung.failure->message, "worker timed out after 300 ms during evaluate");
  EXPECT_TRUE(hung.worker_restarted);
  EXPECT_TRUE(reaped(hung.worker_pid));

  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok()) << next.failure->message;
  EXPECT_NE(next.worker_pid, hung.worker_pid);
  EXPECT_EQ(pool.status()[0].starts, 2u);
}

TEST(WorkerPoolTest, ExitingWorkerIsReportedAndReplaced) {
  WorkerPool pool(pool_of(1));
  const JobOutcome died = run(pool, job("die"));
  ASSERT_FALSE(died.ok());
  EXPECT_EQ(died.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(died.failure->message, HasSubstr("worker died (exit status 1) during evaluate: "));
  EXPECT_THAT(died.failure->message, HasSubstr("dying on request"));
  EXPECT_TRUE(died.worker_restarted);

  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next.worker_pid, died.worker_pid);
}

TEST(WorkerPoolTest, CrashingWorkerIsReportedAndReplaced) {
  WorkerPool pool(pool_of(1));
  const JobOutcome crashed = run(pool, job("segv"));
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(crashed.failure->message, HasSubstr("worker died (signal 11 SIGSEGV) during evaluate: "));
  EXPECT_THAT(crashed.failure->message, HasSubstr("segfault on request"));

  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next.worker_pid, crashed.worker_pid);
}

TEST(WorkerPoolTest, GarbageIsAProtocolFailureAndTheWorkerIsReplaced) {
  WorkerPool pool(pool_of(1));
  const JobOutcome garbled = run(pool, job("garbage"));
  ASSERT_FALSE(garbled.ok());
  EXPECT_EQ(garbled.failure->kind, WorkerFailureKind::Protocol);
  EXPECT_TRUE(garbled.worker_restarted);

  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next.worker_pid, garbled.worker_pid);
}

TEST(WorkerPoolTest, ErrorReplyKeepsTheWorker) {
  WorkerPool pool(pool_of(1));
  const JobOutcome refused = run(pool, job("error"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure->kind, WorkerFailureKind::RpcError);
  EXPECT_FALSE(refused.worker_restarted);
  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.worker_pid, refused.worker_pid);
}

TEST(WorkerPoolTest, RestartRequestIsHonouredAfterTheResult) {
  WorkerPool pool(pool_of(1));
  const JobOutcome first = run(pool, job("restart"));
  ASSERT_TRUE(first.ok()) << first.failure->message;
  EXPECT_EQ(first.result["restart"], true);
  EXPECT_EQ(first.result["verdict"], "passed");
  EXPECT_TRUE(first.worker_restarted);

  const JobOutcome second = run(pool, job("ok"));
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second.worker_pid, first.worker_pid);
  EXPECT_TRUE(reaped(first.worker_pid));
  EXPECT_EQ(pool.status()[0].starts, 2u);
}

TEST(WorkerPoolTest, QueuedJobsRunInParallelOnAllWorkers) {
  constexpr auto kUnit = 400ms;
  WorkerPool pool(pool_of(2));
  for (const auto& worker : pool.wait_started(kLong)) ASSERT_EQ(worker.state, WorkerState::Ready);

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::future<JobOutcome>> futures;
  for (int i = 0; i < 4; ++i) futures.push_back(pool.submit(job("slow:" + std::to_string(kUnit.count()))));
  std::vector<JobOutcome> outcomes;
  for (auto& future : futures) outcomes.push_back(get(future));
  const auto elapsed = std::chrono::steady_clock::now() - start;

  std::set<int> workers;
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok());
    workers.insert(outcome.worker);
  }
  EXPECT_EQ(workers, (std::set<int>{0, 1}));
  // Two jobs ran at the same time: their [started, finished] intervals (the
  // fakes' monotonic clock, shared across processes) overlap.
  int most_at_once = 0;
  for (const auto& a : outcomes) {
    int at_once = 0;
    const auto t = a.result["started_ns"].get<std::int64_t>();
    for (const auto& b : outcomes) {
      if (b.result["started_ns"].get<std::int64_t>() <= t && t < b.result["finished_ns"].get<std::int64_t>()) ++at_once;
    }
    most_at_once = std::max(most_at_once, at_once);
  }
  EXPECT_EQ(most_at_once, 2);  // never more than the two workers
  // Two slow units, not four (3.5 leaves room for a loaded machine).
  EXPECT_LT(elapsed, 3.5 * kUnit);
}

TEST(WorkerPoolTest, CancelledQueuedJobIsDroppedAndRunningJobKilled) {
  WorkerPool pool(pool_of(1));
  Job running = job("hang");
  Started started;
  started.attach(running);
  Job queued = job("ok");
  auto running_future = pool.submit(running);
  auto queued_future = pool.submit(queued);
  ASSERT_TRUE(started.wait());

  queued.cancel.cancel();
  const JobOutcome dropped = get(queued_future);
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(dropped.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(dropped.worker, -1);  // it never ran
  EXPECT_EQ(running_future.wait_for(0s), std::future_status::timeout);  // the other one still runs

  running.cancel.cancel();
  const JobOutcome killed = get(running_future);
  ASSERT_FALSE(killed.ok());
  EXPECT_EQ(killed.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(killed.worker, 0);
  EXPECT_TRUE(killed.worker_restarted);
  EXPECT_TRUE(reaped(killed.worker_pid));

  const JobOutcome next = run(pool, job("ok"));
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next.worker_pid, killed.worker_pid);
}

TEST(WorkerPoolTest, AlreadyCancelledJobNeverRuns) {
  WorkerPool pool(pool_of(1));
  Job j = job("ok");
  j.cancel.cancel();
  const JobOutcome outcome = run(pool, j);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(outcome.worker, -1);
}

TEST(WorkerPoolTest, PinnedJobsRunOnTheirWorker) {
  WorkerPoolOptions options;
  options.commands = {fake({"--device", "0"}), fake({"--device", "1"})};
  WorkerPool pool(options);
  for (std::size_t i : {1u, 0u, 1u}) {
    Job j = job("ok");
    j.worker = i;
    const JobOutcome outcome = run(pool, j);
    ASSERT_TRUE(outcome.ok());
    EXPECT_EQ(outcome.worker, static_cast<int>(i));
  }
  Job nowhere = job("ok");
  nowhere.worker = 2;
  EXPECT_THROW(pool.submit(nowhere), std::invalid_argument);
}

TEST(WorkerPoolTest, UnstartableWorkersFailJobsInsteadOfHanging) {
  WorkerPoolOptions options;
  options.commands = {{"/nonexistent/hiera-worker"}};
  WorkerPool pool(options);
  const JobOutcome outcome = run(pool, job("ok"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(outcome.failure->message, HasSubstr("no worker could be started"));
  EXPECT_THAT(outcome.failure->message, HasSubstr("cannot start /nonexistent/hiera-worker"));
  EXPECT_EQ(pool.status()[0].state, WorkerState::Broken);
}

TEST(WorkerPoolTest, RefusedWorkersFailJobsWithBothVersions) {
  WorkerPool pool(pool_of(1, {"--version", "7.7.0", "--no-version-check"}));
  const JobOutcome outcome = run(pool, job("ok"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Refused);
  EXPECT_THAT(outcome.failure->message, HasSubstr("7.7.0"));
}

TEST(WorkerPoolTest, CallbacksAreCalledOncePerJob) {
  WorkerPool pool(pool_of(2));
  std::mutex mutex;
  std::condition_variable done;
  int count = 0;
  for (int i = 0; i < 12; ++i) {
    pool.submit(job(i % 4 == 3 ? "error" : "ok"), [&](JobOutcome) {
      std::lock_guard lock(mutex);
      ++count;
      done.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, kLong, [&] { return count == 12; }));
}

TEST(WorkerPoolTest, ShutdownCancelsEverythingAndLeavesNoChildren) {
  auto pool = std::make_unique<WorkerPool>(pool_of(2));
  std::vector<pid_t> pids;
  // A restart, so a replaced process is checked too.
  const JobOutcome crashed = run(*pool, job("die"));
  pids.push_back(crashed.worker_pid);

  for (const auto& worker : pool->wait_started(kLong)) pids.push_back(worker.pid);
  // Two jobs that never end, each holding a worker when the pool stops, and one queued behind them.
  Started first, second;
  Job hang1 = job("hang"), hang2 = job("hang");
  first.attach(hang1);
  second.attach(hang2);
  auto running = pool->submit(hang1);
  auto also_running = pool->submit(hang2);
  auto queued = pool->submit(job("ok"));
  ASSERT_TRUE(first.wait());
  ASSERT_TRUE(second.wait());

  pool->shutdown();
  for (auto* future : {&running, &also_running}) {
    const JobOutcome outcome = get(*future);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Cancelled);
    EXPECT_THAT(outcome.failure->message, HasSubstr("shutting down"));
    EXPECT_GE(outcome.worker, 0);  // it ran, and was killed with its worker
  }
  const JobOutcome never_ran = get(queued);
  ASSERT_FALSE(never_ran.ok());
  EXPECT_EQ(never_ran.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(never_ran.worker, -1);
  for (const auto& worker : pool->status()) EXPECT_EQ(worker.state, WorkerState::Stopped);
  const JobOutcome late = run(*pool, job("ok"));
  EXPECT_EQ(late.failure->kind, WorkerFailureKind::Cancelled);
  pool.reset();
  for (pid_t pid : pids) EXPECT_TRUE(reaped(pid)) << pid;
}

TEST(WorkerPoolTest, IdleWorkersShutDownCleanly) {
  std::vector<pid_t> pids;
  {
    WorkerPool pool(pool_of(2, {"--ignore-shutdown"}));
    for (const auto& worker : pool.wait_started(kLong)) pids.push_back(worker.pid);
  }
  for (pid_t pid : pids) EXPECT_TRUE(reaped(pid)) << pid;
}

}  // namespace
}  // namespace hiera::engine::eval
