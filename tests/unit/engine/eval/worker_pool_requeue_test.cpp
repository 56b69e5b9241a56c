// WorkerPool's requeue of jobs whose worker was lost under them, and workers
// that run inside an allocation; against hiera-fake-worker (real processes).
#include "engine/eval/worker_pool.h"

#include <csignal>
#include <mutex>
#include <numeric>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "build_paths.h"

namespace hiera::engine::eval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr auto kLong = 30s;

WorkerPoolOptions pool_of(std::size_t workers) {
  WorkerPoolOptions options;
  for (std::size_t i = 0; i < workers; ++i) options.commands.push_back({::hiera::testing::fake_worker_bin()});
  options.handshake_timeout = kLong;
  return options;
}

Job job(const std::string& behave) {
  Job j;
  j.method = "evaluate";
  j.params = json{{"behave", behave}};
  j.timeout = kLong;
  return j;
}

JobOutcome get(std::future<JobOutcome>& future) {
  if (future.wait_for(kLong) != std::future_status::ready) {
    ADD_FAILURE() << "no outcome within " << kLong.count() << " s";
    return {};
  }
  return future.get();
}

// Every worker that took the job, in order, and an event for the first one.
struct Starts {
  std::mutex mutex;
  std::vector<std::size_t> workers;
  std::promise<std::size_t> first;
  void attach(Job& j) {
    j.on_started = [this](std::size_t worker) {
      std::lock_guard lock(mutex);
      workers.push_back(worker);
      if (workers.size() == 1) first.set_value(worker);
    };
  }
  std::vector<std::size_t> all() {
    std::lock_guard lock(mutex);
    return workers;
  }
};

std::size_t total_jobs(WorkerPool& pool) {
  std::size_t jobs = 0;
  for (const auto& worker : pool.status()) jobs += worker.jobs;
  return jobs;
}

TEST(WorkerLostTest, DeathsWithoutACrashSignalAreLosses) {
  WorkerFailure failure;
  failure.kind = WorkerFailureKind::Died;
  failure.signal = SIGKILL;
  EXPECT_TRUE(worker_lost(failure));  // killed from outside
  failure.signal = SIGTERM;
  EXPECT_TRUE(worker_lost(failure));
  failure.signal = SIGSEGV;
  EXPECT_FALSE(worker_lost(failure));  // its own crash
  failure.signal = SIGABRT;
  EXPECT_FALSE(worker_lost(failure));
  failure.signal.reset();
  failure.exit_code = 255;  // ssh: the connection dropped
  EXPECT_TRUE(worker_lost(failure));
  failure.exit_code = 137;  // srun: the step was cancelled (SIGKILL)
  EXPECT_TRUE(worker_lost(failure));
  failure.exit_code = 139;  // srun or a shell: the task crashed (SIGSEGV)
  EXPECT_FALSE(worker_lost(failure));
  failure.exit_code.reset();  // stdout closed, status unknown
  EXPECT_TRUE(worker_lost(failure));
  for (auto kind : {WorkerFailureKind::Timeout, WorkerFailureKind::Protocol, WorkerFailureKind::RpcError,
                    WorkerFailureKind::Cancelled, WorkerFailureKind::Refused}) {
    failure.kind = kind;
    EXPECT_FALSE(worker_lost(failure)) << to_string(kind);
  }
}

TEST(WorkerPoolRequeueTest, AJobWhoseWorkerIsKilledMidJobCompletesOnAnother) {
  WorkerPool pool(pool_of(2));
  for (const auto& worker : pool.wait_started(kLong)) ASSERT_EQ(worker.state, WorkerState::Ready);
  Job slow = job("slow:1500");
  Starts starts;
  starts.attach(slow);
  auto future = pool.submit(slow);
  auto first = starts.first.get_future();
  ASSERT_EQ(first.wait_for(kLong), std::future_status::ready);
  const std::size_t lost = first.get();
  const pid_t lost_pid = pool.status()[lost].pid;
  ASSERT_EQ(::kill(lost_pid, SIGKILL), 0);

  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.result["verdict"], "passed");
  EXPECT_EQ(outcome.worker, static_cast<int>(1 - lost));
  EXPECT_THAT(starts.all(), ElementsAre(lost, 1 - lost));
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  const LostAttempt& attempt = outcome.lost_attempts[0];
  EXPECT_EQ(attempt.worker, static_cast<int>(lost));
  EXPECT_EQ(attempt.worker_pid, lost_pid);
  EXPECT_EQ(attempt.worker_command, std::vector<std::string>{::hiera::testing::fake_worker_bin()});
  EXPECT_EQ(attempt.failure.kind, WorkerFailureKind::Died);
  EXPECT_EQ(attempt.failure.signal, SIGKILL);
  EXPECT_THAT(attempt.failure.message, HasSubstr("worker died (signal 9 SIGKILL) during evaluate"));

  // The lost worker is replaced and takes jobs again.
  Job pinned = job("ok");
  pinned.worker = lost;
  auto again = pool.submit(pinned);
  const JobOutcome next = get(again);
  ASSERT_TRUE(next.ok()) << next.failure->message;
  EXPECT_NE(next.worker_pid, lost_pid);
  EXPECT_TRUE(next.lost_attempts.empty());
}

TEST(WorkerPoolRequeueTest, ACrashSignalIsTheJobsFaultAndIsNotRequeued) {
  WorkerPool pool(pool_of(2));
  auto future = pool.submit(job("segv"));
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(outcome.failure->message, HasSubstr("signal 11 SIGSEGV"));
  EXPECT_THAT(outcome.failure->message, ::testing::Not(HasSubstr("lost")));
  EXPECT_TRUE(outcome.lost_attempts.empty());
  EXPECT_EQ(total_jobs(pool), 1u);
}

TEST(WorkerPoolRequeueTest, AJobThatKillsEveryWorkerIsRequeuedOnlyOnce) {
  WorkerPool pool(pool_of(3));
  Job dying = job("die");
  Starts starts;
  starts.attach(dying);
  auto future = pool.submit(dying);
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  const auto workers = starts.all();
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_NE(workers[0], workers[1]);
  EXPECT_EQ(outcome.worker, static_cast<int>(workers[1]));
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  EXPECT_EQ(outcome.lost_attempts[0].worker, static_cast<int>(workers[0]));
  EXPECT_EQ(outcome.lost_attempts[0].failure.exit_code, 1);
  // The message says both: this death, and the earlier one on the other worker.
  EXPECT_THAT(outcome.failure->message, HasSubstr("worker died (exit status 1) during evaluate: "));
  EXPECT_THAT(outcome.failure->message,
              HasSubstr("(after worker " + std::to_string(workers[0]) + " (" + ::hiera::testing::fake_worker_bin() +
                        ") was lost under it: worker died (exit status 1) during evaluate"));
  EXPECT_EQ(total_jobs(pool), 2u);
}

// The default without a GPU: one worker. Killed mid-job, it is restarted and
// the job runs again on its successor, listed as lost there, never failed.
TEST(WorkerPoolRequeueTest, WithOneWorkerAJobWhoseWorkerIsKilledRunsAgainAfterTheRestart) {
  WorkerPool pool(pool_of(1));
  ASSERT_EQ(pool.wait_started(kLong)[0].state, WorkerState::Ready);
  Job slow = job("slow:1500");
  Starts starts;
  starts.attach(slow);
  auto future = pool.submit(slow);
  auto first = starts.first.get_future();
  ASSERT_EQ(first.wait_for(kLong), std::future_status::ready);
  const pid_t lost_pid = pool.status()[0].pid;
  ASSERT_EQ(::kill(lost_pid, SIGKILL), 0);

  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.result["verdict"], "passed");
  EXPECT_EQ(outcome.worker, 0);
  EXPECT_NE(outcome.worker_pid, lost_pid);
  EXPECT_EQ(outcome.result["pid"], outcome.worker_pid);  // the restarted process answered
  EXPECT_THAT(starts.all(), ElementsAre(0u, 0u));
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  const LostAttempt& attempt = outcome.lost_attempts[0];
  EXPECT_EQ(attempt.worker, 0);
  EXPECT_EQ(attempt.worker_pid, lost_pid);
  EXPECT_EQ(attempt.failure.kind, WorkerFailureKind::Died);
  EXPECT_EQ(attempt.failure.signal, SIGKILL);
  EXPECT_THAT(attempt.failure.message, HasSubstr("worker died (signal 9 SIGKILL) during evaluate"));
  const auto status = pool.status();
  EXPECT_EQ(status[0].starts, 2u);
  EXPECT_EQ(status[0].jobs, 2u);
}

TEST(WorkerPoolRequeueTest, WithOneWorkerAJobThatKillsItIsRunOnlyTwice) {
  WorkerPool pool(pool_of(1));
  auto future = pool.submit(job("die"));
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  EXPECT_EQ(outcome.lost_attempts[0].worker, 0);
  EXPECT_NE(outcome.lost_attempts[0].worker_pid, outcome.worker_pid);
  EXPECT_THAT(outcome.failure->message, HasSubstr("(after worker 0 (" + ::hiera::testing::fake_worker_bin() +
                                                  ") was lost under it: worker died (exit status 1) during evaluate"));
  EXPECT_EQ(total_jobs(pool), 2u);
}

TEST(WorkerPoolRequeueTest, NothingIsRequeuedWhenPinnedOrWhenDisabled) {
  {
    WorkerPool pool(pool_of(2));
    Job pinned = job("die");
    pinned.worker = 1;
    auto future = pool.submit(pinned);
    const JobOutcome outcome = get(future);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.worker, 1);
    EXPECT_TRUE(outcome.lost_attempts.empty());
    EXPECT_EQ(total_jobs(pool), 1u);
  }
  {
    WorkerPoolOptions options = pool_of(2);
    options.max_requeues = 0;
    WorkerPool pool(options);
    auto future = pool.submit(job("die"));
    const JobOutcome outcome = get(future);
    ASSERT_FALSE(outcome.ok());
    EXPECT_TRUE(outcome.lost_attempts.empty());
    EXPECT_EQ(total_jobs(pool), 1u);
  }
}

// An allocation the test grants or ends by hand.
class ManualAllocation : public WorkerAllocation {
 public:
  std::optional<std::string> wait_ready(const CancellationToken& stop) override {
    std::unique_lock lock(mutex_);
    ++waits_;
    changed_.notify_all();
    while (!decided_ && !stop.cancelled()) changed_.wait_for(lock, 10ms);
    if (!decided_) return "stopped";
    return verdict_;
  }
  void release() override {
    std::lock_guard lock(mutex_);
    ++releases_;
  }
  std::string describe() const override { return "manual allocation"; }

  void decide(std::optional<std::string> verdict) {
    std::lock_guard lock(mutex_);
    decided_ = true;
    verdict_ = std::move(verdict);
    changed_.notify_all();
  }
  bool wait_for_waits(int n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kLong, [&] { return waits_ >= n; });
  }
  int releases() {
    std::lock_guard lock(mutex_);
    return releases_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool decided_ = false;
  std::optional<std::string> verdict_;
  int waits_ = 0;
  int releases_ = 0;
};

TEST(WorkerPoolAllocationTest, WorkersStartOnlyOnceTheAllocationIsReadyAndItIsReleasedOnce) {
  auto allocation = std::make_shared<ManualAllocation>();
  WorkerPoolOptions options = pool_of(2);
  options.allocations = {allocation, allocation};
  auto pool = std::make_unique<WorkerPool>(options);
  ASSERT_TRUE(allocation->wait_for_waits(2));
  auto future = pool->submit(job("ok"));
  EXPECT_EQ(future.wait_for(200ms), std::future_status::timeout);  // pending: queued, not failed
  for (const auto& worker : pool->status()) {
    EXPECT_EQ(worker.state, WorkerState::Starting);
    EXPECT_EQ(worker.pid, -1);  // no process yet
  }
  allocation->decide(std::nullopt);
  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(allocation->releases(), 0);
  pool->shutdown();
  EXPECT_EQ(allocation->releases(), 1);
  pool.reset();
  EXPECT_EQ(allocation->releases(), 1);
}

TEST(WorkerPoolAllocationTest, AnEndedAllocationFailsJobsWithItsReason) {
  auto allocation = std::make_shared<ManualAllocation>();
  WorkerPoolOptions options = pool_of(1);
  options.allocations = {allocation};
  WorkerPool pool(options);
  allocation->decide("Slurm job 7 has ended (CANCELLED)");
  auto future = pool.submit(job("ok"));
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  EXPECT_EQ(outcome.failure->message, "no worker could be started: worker 0 (" + ::hiera::testing::fake_worker_bin() +
                                          "): cannot start " + ::hiera::testing::fake_worker_bin() +
                                          ": Slurm job 7 has ended (CANCELLED)");
}

TEST(WorkerPoolAllocationTest, ShutdownEndsAPendingWait) {
  auto allocation = std::make_shared<ManualAllocation>();
  WorkerPoolOptions options = pool_of(1);
  options.allocations = {allocation};
  WorkerPool pool(options);
  ASSERT_TRUE(allocation->wait_for_waits(1));
  auto future = pool.submit(job("ok"));
  pool.shutdown();  // returns: the wait saw the pool stop
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Cancelled);
  EXPECT_EQ(allocation->releases(), 1);
}

TEST(WorkerPoolAllocationTest, AllocationsMustMatchTheCommands) {
  WorkerPoolOptions options = pool_of(2);
  options.allocations = {nullptr};
  EXPECT_THROW(WorkerPool pool(options), std::invalid_argument);
}

}  // namespace
}  // namespace hiera::engine::eval
