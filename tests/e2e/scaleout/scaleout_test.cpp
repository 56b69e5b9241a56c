// Scale-out end to end, driven by ssh.sh and slurm.sh (which start a
// throwaway sshd or one-node Slurm on loopback and say so through the
// environment; each test skips when its service is not there):
//  - ssh: the real `hiera worker` through ssh://127.0.0.1:PORT evaluates a
//    PyTorch task on the CPU; a worker whose connection drops mid-job has its
//    job finished by the other one.
//  - Slurm: workers as job steps in an allocation hiera submits; a step
//    cancelled mid-job has its job finished on the other step; shutdown
//    cancels the allocation.
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/common/child_process.h"
#include "engine/eval/evaluation_client.h"
#include "engine/eval/slurm_allocation.h"
#include "engine/eval/worker_pool.h"
#include "engine/eval/worker_spec.h"
#include "temp_directory.h"

namespace hiera::engine::eval {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr auto kLong = 45s;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text) {
    if (c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// `hiera` as the launchers call it (`PATH worker ...`), running the fake worker.
fs::path fake_hiera(const fs::path& dir) {
  const fs::path script = dir / "fake-hiera";
  std::ofstream(script) << "#!/bin/sh\n[ \"$1\" = worker ] && shift\nexec " << HIERA_FAKE_WORKER << " \"$@\"\n";
  ::chmod(script.c_str(), 0755);
  return script;
}

Job slow_job(int ms) {
  Job job;
  job.method = "evaluate";
  job.params = json{{"behave", "slow:" + std::to_string(ms)}};
  job.timeout = kLong;
  return job;
}

// Which workers took a job, in order, and an event for the first.
struct Starts {
  std::mutex mutex;
  std::vector<std::size_t> workers;
  std::promise<std::size_t> first;
  void attach(Job& job) {
    job.on_started = [this](std::size_t worker) {
      std::lock_guard lock(mutex);
      workers.push_back(worker);
      if (workers.size() == 1) first.set_value(worker);
    };
  }
};

JobOutcome get(std::future<JobOutcome>& future) {
  if (future.wait_for(kLong) != std::future_status::ready) {
    ADD_FAILURE() << "no outcome within " << kLong.count() << " s";
    return {};
  }
  return future.get();
}

// ---- ssh -------------------------------------------------------------------

class Ssh : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("HIERA_SCALEOUT_SSH_PORT").empty()) GTEST_SKIP() << "no sshd: run tests/e2e/scaleout/ssh.sh";
    ssh_ = words(env("HIERA_SCALEOUT_SSH"));
    port_ = env("HIERA_SCALEOUT_SSH_PORT");
  }
  std::vector<std::vector<std::string>> commands(const std::string& spec) {
    return ssh_worker_commands(parse_ssh_worker(spec), ssh_);
  }
  std::vector<std::string> ssh_;
  std::string port_;
};

TEST_F(Ssh, TheRealWorkerEvaluatesAPyTorchTaskOverSsh) {
  WorkerPoolOptions options;
  options.commands = commands("ssh://127.0.0.1:" + port_ + std::string(HIERA_BIN));
  options.handshake_timeout = kLong;
  WorkerPool pool(options);
  const auto status = pool.wait_started(kLong);
  ASSERT_EQ(status[0].state, WorkerState::Ready) << (status[0].start_failure ? status[0].start_failure->message : "");
  EXPECT_EQ(status[0].hello->worker_version, HIERA_VERSION);
  if (!status[0].hello->pytorch) GTEST_SKIP() << "the worker found no python3 that imports torch";

  const char* reference = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2.0\n"
                          "def get_inputs():\n    return [torch.rand(16, 16)]\ndef get_init_inputs():\n    return []\n";
  const char* candidate = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x + x\n";
  EvaluationClient client(pool);
  EvaluateOptions evaluate;
  evaluate.timeout = 2min;
  evaluate.timing_trials = 3;
  const Evaluation result = client.evaluate(json{{"kind", "pytorch"}, {"device", "cpu"},
                                                 {"reference", {{"source", reference}}},
                                                 {"candidate", {{"source", candidate}}}},
                                            evaluate);
  ASSERT_TRUE(result.passed()) << (result.failures.empty() ? "" : result.failures[0].message);
  EXPECT_EQ(result.record.worker, 0);
  EXPECT_EQ(result.record.worker_command, options.commands[0]);
}

TEST_F(Ssh, AJobWhoseConnectionDropsMidJobFinishesOnTheOtherWorker) {
  hiera::testing::TempDirectory dir("hiera-scaleout-");
  const std::string spec = "ssh://127.0.0.1:" + port_ + fake_hiera(dir.path()).string();
  WorkerPoolOptions options;
  for (auto& command : commands(spec + "?gpus=2")) options.commands.push_back(command);
  options.handshake_timeout = kLong;
  WorkerPool pool(options);
  for (const auto& worker : pool.wait_started(kLong)) ASSERT_EQ(worker.state, WorkerState::Ready);

  Job job = slow_job(3000);
  Starts starts;
  starts.attach(job);
  auto future = pool.submit(job);
  auto first = starts.first.get_future();
  ASSERT_EQ(first.wait_for(kLong), std::future_status::ready);
  const std::size_t lost = first.get();
  std::this_thread::sleep_for(300ms);  // the request is on the remote side by now
  ASSERT_EQ(::kill(pool.status()[lost].pid, SIGTERM), 0);  // the local end of the connection goes

  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.worker, static_cast<int>(1 - lost));
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  EXPECT_EQ(outcome.lost_attempts[0].worker, static_cast<int>(lost));
  EXPECT_EQ(outcome.lost_attempts[0].failure.kind, WorkerFailureKind::Died);
  // The --device each remote worker got travels through ssh: the hello says it.
  for (const auto& worker : pool.wait_started(kLong)) {
    ASSERT_EQ(worker.state, WorkerState::Ready);
    EXPECT_EQ(worker.hello->device->index, static_cast<int>(worker.index));
  }
}

TEST_F(Ssh, AnUnreachableHostIsAClearStartFailure) {
  WorkerPoolOptions options;
  options.commands = commands("ssh://127.0.0.1:1/nowhere/hiera");  // nothing listens on port 1
  WorkerPool pool(options);
  Job job = slow_job(0);
  auto future = pool.submit(job);
  const JobOutcome outcome = get(future);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, WorkerFailureKind::Died);
  EXPECT_THAT(outcome.failure->message, HasSubstr("no worker could be started"));
  EXPECT_THAT(outcome.failure->message, HasSubstr("exit status 255"));
  EXPECT_THAT(outcome.failure->message, HasSubstr("Connection refused"));
}

// ---- Slurm -----------------------------------------------------------------

class Slurm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("HIERA_SCALEOUT_SLURM").empty()) GTEST_SKIP() << "no Slurm: run tests/e2e/scaleout/slurm.sh";
    tools_.poll = 200ms;
  }
  // "JOB.STEP" of the step called `name`, or "".
  static std::string step_named(const std::string& job, const std::string& name) {
    const auto run = run_to_completion({"squeue", "--noheader", "--steps", "--jobs=" + job, "--format=%i %j"}, "", 20s);
    std::istringstream lines(run.out);
    std::string id, step_name;
    while (lines >> id >> step_name) {
      if (step_name == name) return id;
    }
    return "";
  }
  static std::string job_state(const std::string& job) {
    const auto run = run_to_completion({"squeue", "--noheader", "--jobs=" + job, "--format=%T"}, "", 20s);
    std::string out = run.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  // A job that takes the node's CPUs (slurm.sh gives it 2) until cancelled,
  // once it runs: "" when it did not start.
  static std::string occupy_node() {
    const auto run = run_to_completion({"sbatch", "--parsable", "--job-name=hiera-blocker", "--output=/dev/null",
                                        "--cpus-per-task=2", "--wrap", "exec sleep 300"}, "", 20s);
    std::string job = run.out.substr(0, run.out.find_first_of(";\n"));
    for (int i = 0; i < 100 && job_state(job) != "RUNNING"; ++i) std::this_thread::sleep_for(100ms);
    return job_state(job) == "RUNNING" ? job : "";
  }
  SlurmTools tools_;
};

TEST_F(Slurm, AStepCancelledMidJobHasItsJobFinishedOnAnotherStepAndTheAllocationIsReleased) {
  hiera::testing::TempDirectory dir("hiera-scaleout-");
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm,workers=2");
  std::vector<std::string> notices;
  std::mutex mutex;
  auto allocation = SlurmAllocation::request(spec, [&](const AllocationNotice& notice) {
    std::lock_guard lock(mutex);
    notices.push_back(notice.line);
  }, tools_);
  const std::string job = allocation->job_id();
  WorkerPoolOptions options;
  for (int i = 0; i < spec.workers; ++i) {
    options.commands.push_back(allocation->step_command(i, {fake_hiera(dir.path()).string(), "worker"}));
    options.allocations.push_back(allocation);
  }
  options.handshake_timeout = kLong;
  auto pool = std::make_unique<WorkerPool>(options);
  for (const auto& worker : pool->wait_started(kLong)) {
    ASSERT_EQ(worker.state, WorkerState::Ready) << (worker.start_failure ? worker.start_failure->message : "");
  }
  EXPECT_EQ(job_state(job), "RUNNING");

  Job slow = slow_job(4000);
  Starts starts;
  starts.attach(slow);
  auto future = pool->submit(slow);
  auto first = starts.first.get_future();
  ASSERT_EQ(first.wait_for(kLong), std::future_status::ready);
  const std::size_t lost = first.get();
  const std::string step = step_named(job, "hiera-worker-" + std::to_string(lost));
  ASSERT_FALSE(step.empty()) << "no step hiera-worker-" << lost << " in job " << job;
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(run_to_completion({"scancel", step}, "", 20s).status.code, 0);  // as a preemption would

  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.worker, static_cast<int>(1 - lost));
  ASSERT_EQ(outcome.lost_attempts.size(), 1u);
  EXPECT_EQ(outcome.lost_attempts[0].worker, static_cast<int>(lost));
  EXPECT_THAT(outcome.lost_attempts[0].failure.message, HasSubstr("during evaluate"));
  // The cancelled step's worker comes back as a new step of the same job.
  Job pinned = slow_job(0);
  pinned.worker = lost;
  auto again = pool->submit(pinned);
  const JobOutcome next = get(again);
  ASSERT_TRUE(next.ok()) << next.failure->message;
  EXPECT_NE(step_named(job, "hiera-worker-" + std::to_string(lost)), step);

  pool->shutdown();
  pool.reset();
  allocation.reset();
  // Cancelled: gone from the queue, or on its way out.
  for (int i = 0; i < 100 && job_state(job) == "RUNNING"; ++i) std::this_thread::sleep_for(100ms);
  EXPECT_NE(job_state(job), "RUNNING");
  std::lock_guard lock(mutex);
  EXPECT_EQ(notices.front(), "submitted Slurm job " + job + " to hold 2 worker(s); it is cancelled when the run ends");
  EXPECT_EQ(notices.back(), "cancelled Slurm job " + job + ": its resources are released");
}

TEST_F(Slurm, APendingAllocationHoldsJobsUntilItRuns) {
  hiera::testing::TempDirectory dir("hiera-scaleout-");
  // Held while it pends (the node is busy, so it cannot start before the
  // hold), then pending until released, as a busy cluster would keep it.
  const std::string blocker = occupy_node();
  ASSERT_FALSE(blocker.empty()) << "the blocking job did not start";
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm,workers=1");
  std::vector<std::string> notices;
  std::mutex mutex;
  auto allocation = SlurmAllocation::request(spec, [&](const AllocationNotice& notice) {
    std::lock_guard lock(mutex);
    notices.push_back(notice.line);
  }, tools_);
  const std::string job = allocation->job_id();
  ASSERT_EQ(run_to_completion({"scontrol", "hold", job}, "", 20s).status.code, 0);
  ASSERT_EQ(run_to_completion({"scancel", blocker}, "", 20s).status.code, 0);
  WorkerPoolOptions options;
  options.commands.push_back(allocation->step_command(0, {fake_hiera(dir.path()).string(), "worker"}));
  options.allocations.push_back(allocation);
  options.handshake_timeout = kLong;
  WorkerPool pool(options);
  auto future = pool.submit(slow_job(0));
  EXPECT_EQ(future.wait_for(1500ms), std::future_status::timeout);
  EXPECT_EQ(pool.status()[0].state, WorkerState::Starting);
  ASSERT_EQ(run_to_completion({"scontrol", "release", job}, "", 20s).status.code, 0);
  const JobOutcome outcome = get(future);
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  pool.shutdown();
  std::lock_guard lock(mutex);
  EXPECT_THAT(notices, ::testing::Contains(::testing::StartsWith("Slurm job " + job + " is pending (")));
  EXPECT_THAT(notices, ::testing::Contains("Slurm job " + job + " is running"));
}

}  // namespace
}  // namespace hiera::engine::eval
