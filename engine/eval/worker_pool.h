#pragma once
// N workers (one per GPU), each with one job in flight, fed from one queue.
// A job goes to the first free worker that may take it and runs under its own
// wall-clock timeout. A worker that hangs, dies or breaks the protocol is
// killed and replaced by a fresh process (new handshake); its job is reported
// failed with the reason and the pool goes on with the next job. A job whose
// worker was lost under it (the process vanished, its connection or Slurm step
// ended: any death but a crash signal of its own) goes back to the front of the
// queue once, for a different worker (the same one, restarted, in a pool of
// one), and its outcome lists the lost run; a candidate that kills every
// worker it runs on is thus tried at most twice.
// Workers may run inside a WorkerAllocation (a Slurm job), waited for before
// they start and released at shutdown. A worker that
// asks for a restart ("restart": true in its result) is replaced after its
// result is delivered. Cancelled jobs are dropped from the queue, or killed
// with their worker when running. Thread-safe.
//
// Threads: one per worker (it owns that worker's process and runs its jobs)
// and one watching the queue for cancelled jobs. Completion callbacks run on
// these threads (or on the submitting thread, for a job that fails at once):
// keep them short, and do not call shutdown() from one.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/cancellation.h"
#include "engine/eval/lost_attempt.h"
#include "engine/eval/worker_allocation.h"
#include "engine/eval/worker_failure.h"
#include "engine/eval/worker_process.h"

namespace hiera::engine::eval {

struct WorkerPoolOptions {
  // One command line per worker, e.g. {{"hiera","worker","--device","0"}, {"hiera","worker","--device","1"}}.
  std::vector<std::vector<std::string>> commands;
  std::string engine_version;  // empty: this build's version
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(60)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(2)};      // SIGTERM to SIGKILL
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(2)};  // for `shutdown` to be answered and obeyed
  // A worker that cannot be started is tried again after this, doubling up to the maximum.
  std::chrono::milliseconds restart_backoff{std::chrono::milliseconds(500)};
  std::chrono::milliseconds max_restart_backoff{std::chrono::seconds(30)};
  std::size_t stderr_capacity = 64u << 10;
  // Empty, or one per command (same index; null: none): what that worker runs
  // inside, waited for before each start, released once at shutdown.
  std::vector<std::shared_ptr<WorkerAllocation>> allocations;
  // How often a job whose worker was lost goes back to the queue (each time to
  // a worker it has not been lost on, or, lost on all, to any: a pool of one
  // reruns it on its restarted worker). 0: never.
  std::size_t max_requeues = 1;
  // The configured secrets (WorkerConfig::secrets): no worker sees them in its
  // environment, and nothing a worker says reaches a JobOutcome with them in it.
  SecretRedactor secrets;
};

// Whether a failure means the worker was lost rather than crashed by the job:
// it died (or its connection or Slurm step ended) without a crash signal of
// its own (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, also as
// the exit status 128+N that shells and srun report).
bool worker_lost(const WorkerFailure& failure);

struct Job {
  std::string method;  // "evaluate", "compile", "probe", ...
  nlohmann::json params = nlohmann::json::object();
  // Wall-clock limit for the job once a worker runs it (time in the queue is not counted).
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  CancellationToken cancel;
  // Only this worker may run the job (to probe each GPU); any worker when empty.
  std::optional<std::size_t> worker;
  // Called on the worker's thread when a worker takes the job, just before it
  // is sent (for progress: "evaluating on GPU 1"). Optional; keep it short.
  std::function<void(std::size_t worker)> on_started;
};

struct JobOutcome {
  nlohmann::json result;                 // the worker's result when ok()
  std::optional<WorkerFailure> failure;  // why there is none
  // Which worker ran it, for the report; -1, {} and -1 when it never ran.
  int worker = -1;
  std::vector<std::string> worker_command;
  pid_t worker_pid = -1;
  bool worker_restarted = false;  // the worker was replaced after this job
  // Earlier runs on workers that were lost under the job, oldest first (then requeued).
  std::vector<LostAttempt> lost_attempts;
  std::chrono::milliseconds queued{0};
  std::chrono::milliseconds ran{0};
  bool ok() const { return !failure; }
};

enum class WorkerState {
  Starting,  // being started or restarted (handshake in progress)
  Ready,     // idle, waiting for a job
  Busy,      // running a job
  Broken,    // its last start failed; tried again after a back-off
  Stopped,   // the pool shut down
};
const char* to_string(WorkerState state);

struct WorkerStatus {
  std::size_t index = 0;
  std::vector<std::string> command;
  WorkerState state = WorkerState::Starting;
  pid_t pid = -1;               // the current (or last) process
  std::size_t starts = 0;       // processes started so far: restarts = starts - 1
  std::size_t jobs = 0;         // jobs run
  std::optional<WorkerHello> hello;            // from the current process's handshake
  std::optional<WorkerFailure> start_failure;  // why the last start failed (state Broken)
};

class WorkerPool {
 public:
  // Starts every worker in the background; jobs may be submitted at once.
  // Throws std::invalid_argument when there is no command.
  explicit WorkerPool(WorkerPoolOptions options);
  // shutdown().
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  std::future<JobOutcome> submit(Job job);
  // on_done is called exactly once, on a pool thread (see above).
  void submit(Job job, std::function<void(JobOutcome)> on_done);

  std::size_t size() const { return slots_.size(); }
  std::vector<WorkerStatus> status() const;
  // Waits until no worker is Starting (each Ready, Busy or Broken), at most timeout.
  std::vector<WorkerStatus> wait_started(std::chrono::milliseconds timeout);

  // Queued jobs are reported cancelled, running ones are killed with their
  // workers (reported cancelled), idle workers get `shutdown` and a grace
  // period, then are killed. Every process is reaped. Idempotent; blocks.
  void shutdown();

 private:
  struct Pending {
    Job job;
    std::function<void(JobOutcome)> done;
    std::chrono::steady_clock::time_point submitted;
    std::vector<LostAttempt> lost;  // workers lost under it so far: never offered to them again
  };
  struct Slot {
    std::size_t index = 0;
    WorkerConfig config;
    std::unique_ptr<WorkerProcess> worker;  // replaced only by its thread, under mutex_
    WorkerState state = WorkerState::Starting;
    pid_t pid = -1;
    std::size_t starts = 0;
    std::size_t jobs = 0;
    std::optional<WorkerHello> hello;
    std::optional<WorkerFailure> start_failure;
    std::shared_ptr<WorkerAllocation> allocation;
    std::thread thread;
  };

  void run_slot(Slot& slot);
  bool start_worker(Slot& slot, std::chrono::milliseconds& backoff);
  void run_job(Slot& slot, Pending pending);
  void watch_queue();
  bool eligible(const Pending& pending, std::size_t index) const;
  bool runnable_locked(const Pending& pending) const;
  bool requeue_locked(Pending& pending, const Slot& slot, const JobOutcome& outcome);
  std::optional<Pending> take_job_locked(std::size_t index);
  std::vector<Pending> take_unrunnable_locked();
  JobOutcome unrunnable_locked(const Pending& pending) const;
  static void deliver(Pending& pending, JobOutcome outcome);
  static JobOutcome failed(const Pending& pending, WorkerFailureKind kind, std::string message);

  WorkerPoolOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable work_;     // slots: a job or stop
  std::condition_variable watch_;    // the watcher: a job queued, or stop
  std::condition_variable changed_;  // a worker changed state (wait_started)
  std::deque<Pending> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::thread watcher_;
  CancellationToken stop_;     // cancelled by shutdown(): ends waits for an allocation
  std::mutex shutdown_mutex_;  // one shutdown() joins; a second waits for it
  bool allocations_released_ = false;  // under shutdown_mutex_
};

}  // namespace hiera::engine::eval
