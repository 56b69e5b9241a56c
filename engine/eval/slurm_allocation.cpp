#include "engine/eval/slurm_allocation.h"

#include <stdexcept>
#include <thread>

#include "engine/common/child_process.h"

namespace hiera::engine::eval {

namespace {

constexpr std::chrono::milliseconds kStopPoll{50};
// squeue failing this many times in a row (the controller unreachable) ends the wait.
constexpr int kSqueueAttempts = 5;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  const auto start = text.find_first_not_of(" \n");
  return start == std::string::npos ? std::string() : text.substr(start);
}

CompletedProcess run_tool(const std::vector<std::string>& argv, const SlurmTools& tools) {
  const std::chrono::milliseconds timeout = tools.command_timeout;
  try {
    SpawnOptions options;
    options.remove_env = tools.remove_env;
    options.die_with_parent = true;  // a killed engine leaves no Slurm client behind
    return run_to_completion(argv, "", timeout, options);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (is the Slurm client installed and on PATH?)");
  }
}

std::string failure_text(const CompletedProcess& run) {
  if (run.timed_out) return "no answer";
  const std::string err = trimmed(run.err);
  return run.status.describe() + (err.empty() ? std::string() : ": " + err);
}

// Pending-like states: the job will run, later.
bool waiting_state(const std::string& state) {
  return state == "PENDING" || state == "CONFIGURING" || state == "REQUEUED" || state == "RESIZING" ||
         state == "SUSPENDED" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED";
}

}  // namespace

SlurmAllocation::SlurmAllocation(SlurmWorkerSpec spec, std::string job_id, bool owned, SlurmNotice notice,
                                 SlurmTools tools)
    : spec_(std::move(spec)), job_id_(std::move(job_id)), owned_(owned), notice_(std::move(notice)), tools_(std::move(tools)) {}

SlurmAllocation::~SlurmAllocation() {
  try {
    release();
  } catch (...) {
    // A destructor cannot report; release() itself only notices.
  }
}

std::shared_ptr<SlurmAllocation> SlurmAllocation::request(const SlurmWorkerSpec& spec, SlurmNotice notice,
                                                          SlurmTools tools) {
  if (!spec.job_id.empty()) throw std::logic_error("SlurmAllocation::request: the spec names an existing job; attach to it");
  std::vector<std::string> argv{tools.sbatch, "--parsable", "--job-name=hiera-workers", "--output=/dev/null",
                                "--nodes=" + std::to_string(spec.nodes), "--ntasks=" + std::to_string(spec.workers),
                                "--cpus-per-task=" + std::to_string(spec.cpus_per_worker)};
  if (!spec.partition.empty()) argv.push_back("--partition=" + spec.partition);
  if (!spec.gres.empty()) argv.push_back("--gres=" + spec.gres);
  if (!spec.time_limit.empty()) argv.push_back("--time=" + spec.time_limit);
  if (!spec.memory.empty()) argv.push_back("--mem=" + spec.memory);
  // exec: the batch step is this sleep itself, so scancel ends it at once.
  argv.insert(argv.end(), {"--wrap", "exec sleep infinity"});
  const CompletedProcess run = run_tool(argv, tools);
  // --parsable: "123" or "123;cluster".
  const std::string out = trimmed(run.out);
  const std::string id = out.substr(0, out.find(';'));
  if (run.timed_out || run.status.code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error("sbatch refused the workers' allocation (" + failure_text(run) + ")" +
                             (out.empty() ? std::string() : ": " + out));
  }
  auto allocation = std::shared_ptr<SlurmAllocation>(new SlurmAllocation(spec, id, true, std::move(notice), tools));
  allocation->notice(AllocationNoticeKind::Info,
                     "submitted Slurm job " + id + " to hold " + std::to_string(spec.workers) + " worker(s)" +
                         (spec.partition.empty() ? std::string() : " in partition " + spec.partition) +
                         "; it is cancelled when the run ends");
  return allocation;
}

std::shared_ptr<SlurmAllocation> SlurmAllocation::attach(const SlurmWorkerSpec& spec, SlurmNotice notice,
                                                         SlurmTools tools) {
  if (spec.job_id.empty()) throw std::logic_error("SlurmAllocation::attach: the spec names no job");
  return std::shared_ptr<SlurmAllocation>(new SlurmAllocation(spec, spec.job_id, false, std::move(notice), std::move(tools)));
}

void SlurmAllocation::notice(AllocationNoticeKind kind, const std::string& line) const {
  if (!notice_) return;
  try {
    notice_(AllocationNotice{kind, describe(), line});
  } catch (...) {
    // Telling the user must not decide whether workers start.
  }
}

std::string SlurmAllocation::ended(std::string reason) {
  if (waiting_state(last_state_)) notice(AllocationNoticeKind::Ended, reason);
  last_state_ = "ENDED";
  return reason;
}

std::optional<std::string> SlurmAllocation::wait_ready(const CancellationToken& stop) {
  std::lock_guard lock(mutex_);
  int failures = 0;
  bool looked = false;
  for (;;) {
    if (released_) return describe() + " was released";
    if (stop.cancelled()) return "the worker pool is shutting down";
    const CompletedProcess run = run_tool({tools_.squeue, "--noheader", "--jobs=" + job_id_, "--format=%T|%r"}, tools_);
    const std::string out = trimmed(run.out);
    if (!run.timed_out && run.status.code == 0) {
      failures = 0;
      if (out.empty()) return ended(describe() + " is no longer in the queue (it ended)");
      const std::string state = out.substr(0, out.find('|'));
      const std::string reason = out.find('|') == std::string::npos ? std::string() : out.substr(out.find('|') + 1);
      if (state == "RUNNING") {
        if (!last_state_.empty() && last_state_ != "RUNNING") notice(AllocationNoticeKind::Running, describe() + " is running");
        last_state_ = state;
        return std::nullopt;
      }
      if (!waiting_state(state)) return ended(describe() + " has ended (" + state + ")");
      // Just submitted, the scheduler may not have looked at it yet (no reason):
      // one more look before saying why it waits.
      const bool unexamined = state == "PENDING" && (reason.empty() || reason == "None") && last_state_.empty() && !looked;
      looked = true;
      if (!unexamined) {
        // A new state, or a new reason for the same one (Resources, then Priority): the user hears it.
        if (state != last_state_ || reason != last_reason_) {
          notice(AllocationNoticeKind::Waiting, describe() + " is " + (state == "PENDING" ? std::string("pending") : state) +
                 (reason.empty() || reason == "None" ? std::string() : " (" + reason + ")") + "; workers start when it runs");
        }
        last_state_ = state;
        last_reason_ = reason;
      }
    } else if (run.err.find("Invalid job id") != std::string::npos) {
      return ended(describe() + " is no longer known to Slurm (it ended)");
    } else if (++failures >= kSqueueAttempts) {
      return "squeue failed " + std::to_string(failures) + " times about " + describe() + " (" + failure_text(run) + ")";
    }
    const auto until = std::chrono::steady_clock::now() + tools_.poll;
    while (std::chrono::steady_clock::now() < until && !stop.cancelled()) std::this_thread::sleep_for(kStopPoll);
  }
}

void SlurmAllocation::release() {
  std::lock_guard lock(mutex_);
  if (released_) return;
  released_ = true;
  // Released while workers waited for it: the line also ends the wait.
  const AllocationNoticeKind kind = waiting_state(last_state_) ? AllocationNoticeKind::Ended : AllocationNoticeKind::Info;
  if (!owned_) {
    if (kind == AllocationNoticeKind::Ended) notice(kind, "stopped waiting for " + describe());
    return;
  }
  try {
    const CompletedProcess run = run_tool({tools_.scancel, job_id_}, tools_);
    if (run.timed_out || run.status.code != 0) {
      notice(kind, "could not cancel " + describe() + " (" + failure_text(run) + "); cancel it yourself: scancel " + job_id_);
    } else {
      notice(kind, "cancelled " + describe() + ": its resources are released");
    }
  } catch (const std::exception& e) {
    notice(kind, "could not cancel " + describe() + ": " + e.what());
  }
}

std::vector<std::string> SlurmAllocation::step_command(std::size_t index, const std::vector<std::string>& worker_argv) const {
  std::vector<std::string> argv{tools_.srun, "--jobid=" + job_id_, "--job-name=hiera-worker-" + std::to_string(index),
                                "--nodes=1", "--ntasks=1", "--cpus-per-task=" + std::to_string(spec_.cpus_per_worker)};
  if (spec_.gpus_per_node > 0) argv.push_back("--gres=gpu:1");
  // The job holds mem= per node; a step's --mem=0 may use the job's memory without
  // reserving any of it (srun(1)), so every worker's step starts beside the others.
  if (!spec_.memory.empty()) argv.push_back("--mem=0");
  // --exact: only the step's own CPUs, so the other workers' steps run beside it;
  // --kill-on-bad-exit: a worker that fails takes its step down with it.
  argv.insert(argv.end(), {"--exact", "--unbuffered", "--quiet", "--kill-on-bad-exit=1"});
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

}  // namespace hiera::engine::eval
