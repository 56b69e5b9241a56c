// SlurmAllocation against scripts standing in for sbatch, squeue and scancel:
// the exact commands hiera runs and what it makes of Slurm's answers. The
// real thing runs in tests/e2e/scaleout (a one-node Slurm on loopback).
#include "engine/eval/slurm_allocation.h"

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "temp_directory.h"
#include "thrown_message.h"

namespace hiera::engine::eval {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class SlurmAllocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Each tool logs its arguments, one call a line. squeue answers the first
    // line of `states` and drops it, the last one staying (a job stays running).
    script("sbatch", "echo \"$*\" >> " + log("sbatch") + "\n"
                     "if [ -f " + path("sbatch.fail") + " ]; then echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1; fi\n"
                     "echo '42;cluster'\n");
    script("squeue", "echo \"$*\" >> " + log("squeue") + "\n"
                     "if [ -f " + path("squeue.gone") + " ]; then echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1; fi\n"
                     "head -n 1 " + path("states") + "\n"
                     "if [ $(wc -l < " + path("states") + ") -gt 1 ]; then sed -i 1d " + path("states") + "; fi\n");
    script("scancel", "echo \"$*\" >> " + log("scancel") + "\n");
    tools_.sbatch = path("sbatch");
    tools_.squeue = path("squeue");
    tools_.scancel = path("scancel");
    tools_.poll = 10ms;
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  std::string log(const std::string& tool) const { return path(tool + ".log"); }
  void script(const std::string& name, const std::string& body) {
    std::ofstream(path(name)) << "#!/bin/sh\n" << body;
    ::chmod(path(name).c_str(), 0755);
  }
  void states(const std::string& lines) { std::ofstream(path("states")) << lines; }
  SlurmNotice recorder() {
    return [this](const AllocationNotice& notice) {
      std::lock_guard lock(mutex_);
      notices_.push_back(notice);
    };
  }
  std::vector<std::string> notices() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> lines;
    for (const auto& notice : notices_) lines.push_back(notice.line);
    return lines;
  }
  std::vector<AllocationNotice> full_notices() {
    std::lock_guard lock(mutex_);
    return notices_;
  }

  hiera::testing::TempDirectory dir_{"hiera-slurm-"};
  SlurmTools tools_;
  std::mutex mutex_;
  std::vector<AllocationNotice> notices_;
};

using Kind = AllocationNoticeKind;

TEST_F(SlurmAllocationTest, SubmitsAHoldingJobWaitsWhileItPendsAndCancelsItOnce) {
  states("PENDING|Resources\nPENDING|Resources\nRUNNING|None\n");
  const SlurmWorkerSpec spec = parse_slurm_worker("slurm:gpu,gres=gpu:2,time=30");
  auto allocation = SlurmAllocation::request(spec, recorder(), tools_);
  EXPECT_EQ(allocation->job_id(), "42");
  EXPECT_TRUE(allocation->owned());
  EXPECT_EQ(allocation->describe(), "Slurm job 42");
  EXPECT_EQ(read(log("sbatch")),
            "--parsable --job-name=hiera-workers --output=/dev/null --nodes=1 --ntasks=2 --cpus-per-task=1 "
            "--partition=gpu --gres=gpu:2 --time=30 --wrap exec sleep infinity\n");

  EXPECT_EQ(allocation->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_EQ(read(log("squeue")), "--noheader --jobs=42 --format=%T|%r\n--noheader --jobs=42 --format=%T|%r\n"
                                     "--noheader --jobs=42 --format=%T|%r\n");
  // Running already: one look, no notice.
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), std::nullopt);

  allocation->release();
  allocation->release();
  allocation.reset();
  EXPECT_EQ(read(log("scancel")), "42\n");
  EXPECT_THAT(full_notices(),
              ElementsAre(AllocationNotice{Kind::Info, "Slurm job 42",
                                           "submitted Slurm job 42 to hold 2 worker(s) in partition gpu; it is cancelled when the run ends"},
                          AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Resources); workers start when it runs"},
                          AllocationNotice{Kind::Running, "Slurm job 42", "Slurm job 42 is running"},
                          AllocationNotice{Kind::Info, "Slurm job 42", "cancelled Slurm job 42: its resources are released"}));
}

TEST_F(SlurmAllocationTest, MemoryIsTheHoldingJobsAndEachStepMayUseItWithoutReservingAny) {
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm:gpu,gres=gpu:2,mem=64G,time=30"), nullptr, tools_);
  EXPECT_EQ(read(log("sbatch")),
            "--parsable --job-name=hiera-workers --output=/dev/null --nodes=1 --ntasks=2 --cpus-per-task=1 "
            "--partition=gpu --gres=gpu:2 --time=30 --mem=64G --wrap exec sleep infinity\n");
  EXPECT_EQ(allocation->step_command(1, {"hiera", "worker"}),
            (std::vector<std::string>{"srun", "--jobid=42", "--job-name=hiera-worker-1", "--nodes=1", "--ntasks=1",
                                      "--cpus-per-task=1", "--gres=gpu:1", "--mem=0", "--exact", "--unbuffered", "--quiet",
                                      "--kill-on-bad-exit=1", "hiera", "worker"}));
  // An existing allocation: its steps share its memory the same way.
  auto attached = SlurmAllocation::attach(parse_slurm_worker("slurm:jobid=77,mem=8G,workers=2,cpus=2"), nullptr, tools_);
  EXPECT_EQ(attached->step_command(0, {"hiera", "worker"}),
            (std::vector<std::string>{"srun", "--jobid=77", "--job-name=hiera-worker-0", "--nodes=1", "--ntasks=1",
                                      "--cpus-per-task=2", "--mem=0", "--exact", "--unbuffered", "--quiet",
                                      "--kill-on-bad-exit=1", "hiera", "worker"}));
}

TEST_F(SlurmAllocationTest, ANewReasonForTheWaitIsToldOnceAsWell) {
  states("PENDING|Resources\nPENDING|Resources\nPENDING|Priority\nPENDING|Priority\nRUNNING|None\n");
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_THAT(full_notices(),
              ElementsAre(AllocationNotice{Kind::Info, "Slurm job 42", "submitted Slurm job 42 to hold 1 worker(s); it is cancelled when the run ends"},
                          AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Resources); workers start when it runs"},
                          AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Priority); workers start when it runs"},
                          AllocationNotice{Kind::Running, "Slurm job 42", "Slurm job 42 is running"}));
}

TEST_F(SlurmAllocationTest, AJobTheSchedulerHasNotLookedAtYetGetsASecondLookForItsReason) {
  states("PENDING|None\nPENDING|Resources\nRUNNING|None\n");
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_THAT(notices(), ElementsAre("submitted Slurm job 42 to hold 1 worker(s); it is cancelled when the run ends",
                                     "Slurm job 42 is pending (Resources); workers start when it runs", "Slurm job 42 is running"));
  // Still no reason on the second look: pending all the same.
  notices_.clear();
  states("PENDING|None\nPENDING|None\nRUNNING|None\n");
  auto other = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  EXPECT_EQ(other->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_THAT(notices(), ElementsAre(::testing::StartsWith("submitted"), "Slurm job 42 is pending; workers start when it runs",
                                     "Slurm job 42 is running"));
  // Running at the second look: it never waited as far as the user is told.
  notices_.clear();
  states("PENDING|None\nRUNNING|None\n");
  auto quick = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  EXPECT_EQ(quick->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_THAT(notices(), ElementsAre(::testing::StartsWith("submitted")));
}

TEST_F(SlurmAllocationTest, AJobThatEndsWhileWorkersWaitEndsTheWaitOnce) {
  states("PENDING|Priority\nCANCELLED|None\n");
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 has ended (CANCELLED)");
  // The pool asks again after a back-off: the same answer, no second notice.
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 has ended (CANCELLED)");
  allocation->release();
  EXPECT_THAT(full_notices(),
              ElementsAre(::testing::Field(&AllocationNotice::kind, Kind::Info),
                          AllocationNotice{Kind::Waiting, "Slurm job 42", "Slurm job 42 is pending (Priority); workers start when it runs"},
                          AllocationNotice{Kind::Ended, "Slurm job 42", "Slurm job 42 has ended (CANCELLED)"},
                          AllocationNotice{Kind::Info, "Slurm job 42", "cancelled Slurm job 42: its resources are released"}));
}

TEST_F(SlurmAllocationTest, ReleasingAPendingJobEndsTheWait) {
  states("PENDING|Resources\n");
  // The pool shutting down once the job was seen pending.
  auto wait_then_stop = [this](SlurmAllocation& allocation) {
    CancellationToken stop;
    std::thread stopper([&] {
      while (full_notices().empty() || full_notices().back().kind != Kind::Waiting) std::this_thread::sleep_for(5ms);
      stop.cancel();
    });
    EXPECT_EQ(allocation.wait_ready(stop), "the worker pool is shutting down");
    stopper.join();
  };
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  wait_then_stop(*allocation);
  allocation.reset();
  EXPECT_EQ(full_notices().back(), (AllocationNotice{Kind::Ended, "Slurm job 42", "cancelled Slurm job 42: its resources are released"}));

  auto attached = SlurmAllocation::attach(parse_slurm_worker("slurm:jobid=77"), recorder(), tools_);
  wait_then_stop(*attached);
  attached->release();
  EXPECT_EQ(full_notices().back(), (AllocationNotice{Kind::Ended, "Slurm job 77", "stopped waiting for Slurm job 77"}));
}

TEST_F(SlurmAllocationTest, StepsRunOneWorkerEachOnItsOwnResources) {
  auto gpus = SlurmAllocation::request(parse_slurm_worker("slurm:gres=gpu:4"), nullptr, tools_);
  EXPECT_EQ(gpus->step_command(3, {"/shared/hiera", "worker"}),
            (std::vector<std::string>{"srun", "--jobid=42", "--job-name=hiera-worker-3", "--nodes=1", "--ntasks=1",
                                      "--cpus-per-task=1", "--gres=gpu:1", "--exact", "--unbuffered", "--quiet",
                                      "--kill-on-bad-exit=1", "/shared/hiera", "worker"}));
  auto cpus = SlurmAllocation::request(parse_slurm_worker("slurm,workers=2,cpus=4"), nullptr, tools_);
  EXPECT_EQ(cpus->step_command(0, {"hiera", "worker"}),
            (std::vector<std::string>{"srun", "--jobid=42", "--job-name=hiera-worker-0", "--nodes=1", "--ntasks=1",
                                      "--cpus-per-task=4", "--exact", "--unbuffered", "--quiet", "--kill-on-bad-exit=1",
                                      "hiera", "worker"}));
}

TEST_F(SlurmAllocationTest, ARefusedSubmissionSaysWhySlurmRefused) {
  std::ofstream(path("sbatch.fail")) << "";
  EXPECT_EQ(hiera::testing::thrown_message<std::runtime_error>(
                [&] { SlurmAllocation::request(parse_slurm_worker("slurm:nope"), nullptr, tools_); }),
            "sbatch refused the workers' allocation (exit status 1: sbatch: error: invalid partition specified: nope)");
  tools_.sbatch = path("no-such-sbatch");
  EXPECT_THAT(hiera::testing::thrown_message<std::runtime_error>(
                  [&] { SlurmAllocation::request(parse_slurm_worker("slurm"), nullptr, tools_); }),
              ::testing::EndsWith("(is the Slurm client installed and on PATH?)"));
}

TEST_F(SlurmAllocationTest, AJobThatEndedIsAReasonNotAWait) {
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), nullptr, tools_);
  states("CANCELLED|None\n");
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 has ended (CANCELLED)");
  states("");
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 is no longer in the queue (it ended)");
  std::ofstream(path("squeue.gone")) << "";
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 is no longer known to Slurm (it ended)");
}

TEST_F(SlurmAllocationTest, AStopEndsAPendingWait) {
  states("PENDING|Priority\n");
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm"), recorder(), tools_);
  CancellationToken stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    stop.cancel();
  });
  EXPECT_EQ(allocation->wait_ready(stop), "the worker pool is shutting down");
  stopper.join();
  EXPECT_THAT(notices(), ::testing::Contains("Slurm job 42 is pending (Priority); workers start when it runs"));
  allocation->release();
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), "Slurm job 42 was released");
}

TEST_F(SlurmAllocationTest, AnExistingAllocationIsUsedAndNeverCancelled) {
  states("RUNNING|None\n");
  auto allocation = SlurmAllocation::attach(parse_slurm_worker("slurm:jobid=77"), recorder(), tools_);
  EXPECT_FALSE(allocation->owned());
  EXPECT_EQ(allocation->job_id(), "77");
  EXPECT_EQ(allocation->wait_ready(CancellationToken()), std::nullopt);
  EXPECT_EQ(read(log("squeue")), "--noheader --jobs=77 --format=%T|%r\n");
  allocation->release();
  EXPECT_FALSE(fs::exists(log("sbatch")));
  EXPECT_FALSE(fs::exists(log("scancel")));
  EXPECT_TRUE(notices().empty());
}

}  // namespace
}  // namespace hiera::engine::eval

namespace hiera::engine::eval {
namespace {

// sbatch copies its environment into the job, where Slurm keeps and shows it:
// the configured secrets are not in it.
TEST_F(SlurmAllocationTest, TheSlurmClientsDoNotSeeTheSecrets) {
  script("sbatch", "echo \"key=${HIERA_SLURM_TEST_KEY-unset} other=${HIERA_SLURM_TEST_OTHER-unset}\" >> " +
                       path("env.log") + "\necho '42;cluster'\n");
  states("RUNNING|None\n");
  ::setenv("HIERA_SLURM_TEST_KEY", "sk-slurm-0123456789", 1);
  ::setenv("HIERA_SLURM_TEST_OTHER", "visible", 1);
  tools_.remove_env = {"HIERA_SLURM_TEST_KEY"};
  auto allocation = SlurmAllocation::request(parse_slurm_worker("slurm:gpu"), recorder(), tools_);
  ::unsetenv("HIERA_SLURM_TEST_KEY");
  ::unsetenv("HIERA_SLURM_TEST_OTHER");
  EXPECT_EQ(allocation->job_id(), "42");
  EXPECT_EQ(read(path("env.log")), "key=unset other=visible\n");
  allocation->release();
}

}  // namespace
}  // namespace hiera::engine::eval
