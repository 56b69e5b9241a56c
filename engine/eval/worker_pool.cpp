#include "engine/eval/worker_pool.h"

#include <algorithm>
#include <csignal>
#include <set>
#include <stdexcept>
#include <utility>

namespace hiera::engine::eval {

namespace {

// The watcher looks at queued jobs' tokens this often: a token cannot wake
// anyone, so a cancelled queued job is reported within about this long.
constexpr std::chrono::milliseconds kCancelPoll{20};

std::chrono::milliseconds since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

// Signals a process raises on itself when its own code is at fault.
bool crash_signal(int signal) {
  return signal == SIGSEGV || signal == SIGBUS || signal == SIGILL || signal == SIGFPE || signal == SIGABRT ||
         signal == SIGTRAP || signal == SIGSYS;
}

// " (after worker 0 (ssh ...) was lost under it: ...)": why a failed job had run more than once.
std::string lost_note(const std::vector<LostAttempt>& lost) {
  std::string note;
  for (const auto& attempt : lost) {
    note += " (after worker " + std::to_string(attempt.worker) + " (" + describe_command(attempt.worker_command) +
            ") was lost under it: " + attempt.failure.message + ")";
  }
  return note;
}

}  // namespace

bool worker_lost(const WorkerFailure& failure) {
  if (failure.kind != WorkerFailureKind::Died) return false;
  if (failure.signal && crash_signal(*failure.signal)) return false;
  if (failure.exit_code && *failure.exit_code > 128 && crash_signal(*failure.exit_code - 128)) return false;
  return true;
}

const char* to_string(WorkerState state) {
  switch (state) {
    case WorkerState::Starting: return "starting";
    case WorkerState::Ready: return "ready";
    case WorkerState::Busy: return "busy";
    case WorkerState::Broken: return "broken";
    case WorkerState::Stopped: return "stopped";
  }
  return "unknown";
}

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(std::move(options)) {
  if (options_.commands.empty()) throw std::invalid_argument("a worker pool needs at least one worker command");
  if (!options_.allocations.empty() && options_.allocations.size() != options_.commands.size()) {
    throw std::invalid_argument("a worker pool needs one allocation (or none) per worker command");
  }
  for (std::size_t i = 0; i < options_.commands.size(); ++i) {
    if (options_.commands[i].empty()) throw std::invalid_argument("worker " + std::to_string(i) + " has an empty command");
    auto slot = std::make_unique<Slot>();
    slot->index = i;
    slot->config.command = options_.commands[i];
    slot->config.engine_version = options_.engine_version;
    slot->config.handshake_timeout = options_.handshake_timeout;
    slot->config.kill_grace = options_.kill_grace;
    slot->config.stderr_capacity = options_.stderr_capacity;
    slot->config.secrets = options_.secrets;
    if (!options_.allocations.empty()) slot->allocation = options_.allocations[i];
    slots_.push_back(std::move(slot));
  }
  // Started only once every slot exists: the threads read all of slots_.
  for (auto& slot : slots_) slot->thread = std::thread([this, s = slot.get()] { run_slot(*s); });
  watcher_ = std::thread([this] { watch_queue(); });
}

WorkerPool::~WorkerPool() { shutdown(); }

std::future<JobOutcome> WorkerPool::submit(Job job) {
  auto promise = std::make_shared<std::promise<JobOutcome>>();
  auto future = promise->get_future();
  submit(std::move(job), [promise](JobOutcome outcome) { promise->set_value(std::move(outcome)); });
  return future;
}

void WorkerPool::submit(Job job, std::function<void(JobOutcome)> on_done) {
  if (job.worker && *job.worker >= slots_.size()) {
    throw std::invalid_argument("no worker " + std::to_string(*job.worker) + " in a pool of " +
                                std::to_string(slots_.size()));
  }
  Pending pending{std::move(job), std::move(on_done), std::chrono::steady_clock::now(), {}};
  std::optional<JobOutcome> at_once;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      at_once = failed(pending, WorkerFailureKind::Cancelled, "the worker pool is shut down");
    } else if (pending.job.cancel.cancelled()) {
      at_once = failed(pending, WorkerFailureKind::Cancelled, "cancelled before " + pending.job.method + " started");
    } else if (!runnable_locked(pending)) {
      at_once = unrunnable_locked(pending);
    } else {
      queue_.push_back(std::move(pending));
    }
  }
  if (at_once) return deliver(pending, std::move(*at_once));
  work_.notify_all();
  watch_.notify_all();
}

std::vector<WorkerStatus> WorkerPool::status() const {
  std::lock_guard lock(mutex_);
  std::vector<WorkerStatus> result;
  for (const auto& slot : slots_) {
    result.push_back(WorkerStatus{slot->index, slot->config.command, slot->state, slot->pid, slot->starts, slot->jobs,
                                  slot->hello, slot->start_failure});
  }
  return result;
}

std::vector<WorkerStatus> WorkerPool::wait_started(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [this] {
      return std::none_of(slots_.begin(), slots_.end(),
                          [](const auto& slot) { return slot->state == WorkerState::Starting; });
    });
  }
  return status();
}

void WorkerPool::shutdown() {
  std::lock_guard once(shutdown_mutex_);
  std::deque<Pending> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stop_.cancel();
    dropped.swap(queue_);
    // Running jobs and handshakes end now; idle workers get a clean `shutdown` from their threads.
    for (auto& slot : slots_) {
      if (slot->worker && (slot->state == WorkerState::Busy || slot->state == WorkerState::Starting)) {
        slot->worker->abort("the worker pool is shutting down");
      }
    }
  }
  work_.notify_all();
  watch_.notify_all();
  for (auto& pending : dropped) {
    deliver(pending, failed(pending, WorkerFailureKind::Cancelled, "the worker pool shut down before the job ran"));
  }
  for (auto& slot : slots_) {
    if (slot->thread.joinable()) slot->thread.join();
  }
  if (watcher_.joinable()) watcher_.join();
  // Every worker is gone: now the allocations they ran in can go too, each once.
  if (allocations_released_) return;
  allocations_released_ = true;
  std::set<WorkerAllocation*> released;
  for (auto& slot : slots_) {
    if (slot->allocation && released.insert(slot->allocation.get()).second) slot->allocation->release();
  }
}

void WorkerPool::run_slot(Slot& slot) {
  std::chrono::milliseconds backoff = options_.restart_backoff;
  for (;;) {
    if (!slot.worker || !slot.worker->running()) {
      if (!start_worker(slot, backoff)) break;
      continue;  // a failed start was waited out; try again unless stopping
    }
    std::optional<Pending> pending;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] {
        if (stopping_) return true;
        return std::any_of(queue_.begin(), queue_.end(), [&](const Pending& p) { return eligible(p, slot.index); });
      });
      if (stopping_) break;
      pending = take_job_locked(slot.index);
      slot.state = WorkerState::Busy;
    }
    if (pending->job.cancel.cancelled()) {
      // Cancelled since the watcher last looked: not worth a healthy worker's life.
      {
        std::lock_guard lock(mutex_);
        slot.state = WorkerState::Ready;
      }
      deliver(*pending, failed(*pending, WorkerFailureKind::Cancelled,
                               "cancelled while queued, before " + pending->job.method + " started"));
      continue;
    }
    if (!slot.worker->running()) {
      // It died while idle: the job has not run, so it goes back to the front
      // of the queue, for another worker or for this one once restarted.
      {
        std::lock_guard lock(mutex_);
        queue_.push_front(std::move(*pending));
        slot.state = WorkerState::Starting;
      }
      work_.notify_all();
      continue;
    }
    run_job(slot, std::move(*pending));
  }

  std::unique_ptr<WorkerProcess> last;
  {
    std::lock_guard lock(mutex_);
    last = std::move(slot.worker);
    slot.state = WorkerState::Stopped;
  }
  changed_.notify_all();
  if (last) last->shutdown(options_.shutdown_grace);
}

// Replaces the slot's worker with a fresh, started one. False when the pool is stopping.
bool WorkerPool::start_worker(Slot& slot, std::chrono::milliseconds& backoff) {
  auto fresh = std::make_unique<WorkerProcess>(slot.config);
  WorkerProcess* worker = fresh.get();
  std::unique_ptr<WorkerProcess> old;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    old = std::exchange(slot.worker, std::move(fresh));  // published first, so shutdown() can abort the handshake
    slot.state = WorkerState::Starting;
    ++slot.starts;
  }
  changed_.notify_all();
  old.reset();  // kills and reaps a process that died while idle

  // A pending Slurm allocation keeps the worker Starting and its jobs queued.
  std::optional<WorkerFailure> failure;
  if (slot.allocation) {
    if (auto why = slot.allocation->wait_ready(stop_)) {
      failure = WorkerFailure{};
      failure->kind = WorkerFailureKind::Died;
      failure->message = "cannot start " + describe_command(slot.config.command) + ": " + *why;
    }
  }
  if (!failure) failure = worker->start();
  std::vector<std::pair<Pending, JobOutcome>> unrunnable;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    slot.pid = worker->pid();
    if (!failure) {
      slot.state = WorkerState::Ready;
      slot.hello = worker->hello();
      slot.start_failure.reset();
      backoff = options_.restart_backoff;
    } else {
      slot.state = WorkerState::Broken;
      slot.hello.reset();
      slot.start_failure = failure;
      // Jobs that only broken workers could run would otherwise wait forever.
      for (auto& pending : take_unrunnable_locked()) {
        JobOutcome outcome = unrunnable_locked(pending);
        unrunnable.emplace_back(std::move(pending), std::move(outcome));
      }
    }
  }
  changed_.notify_all();
  if (!failure) return true;
  for (auto& [pending, outcome] : unrunnable) deliver(pending, std::move(outcome));
  std::unique_lock lock(mutex_);
  work_.wait_for(lock, backoff, [this] { return stopping_; });
  backoff = std::min(backoff * 2, options_.max_restart_backoff);
  return !stopping_;
}

void WorkerPool::run_job(Slot& slot, Pending pending) {
  JobOutcome outcome;
  outcome.worker = static_cast<int>(slot.index);
  outcome.worker_command = slot.config.command;
  outcome.worker_pid = slot.worker->pid();
  const auto started = std::chrono::steady_clock::now();
  outcome.queued = std::chrono::duration_cast<std::chrono::milliseconds>(started - pending.submitted);

  if (pending.job.on_started) {
    try {
      pending.job.on_started(slot.index);
    } catch (...) {
      // Progress reporting must not decide whether the job runs.
    }
  }
  // A job that may be requeued keeps its parameters for the next worker.
  const bool may_requeue = !pending.job.worker && pending.lost.size() < options_.max_requeues;
  CallResult reply = slot.worker->call(pending.job.method,
                                       may_requeue ? pending.job.params : std::move(pending.job.params),
                                       pending.job.timeout, pending.job.cancel);
  outcome.ran = since(started);
  const bool asked_restart = reply.ok() && reply.result.is_object() && reply.result.contains("restart") &&
                             reply.result["restart"].is_boolean() && reply.result["restart"].get<bool>();
  // An error reply leaves the worker healthy; every other failure has already killed it.
  outcome.worker_restarted = asked_restart || (!reply.ok() && reply.failure->kind != WorkerFailureKind::RpcError);
  outcome.result = std::move(reply.result);
  outcome.failure = std::move(reply.failure);
  bool requeued = false;
  {
    std::lock_guard lock(mutex_);
    ++slot.jobs;
    slot.state = outcome.worker_restarted ? WorkerState::Starting : WorkerState::Ready;
    requeued = requeue_locked(pending, slot, outcome);
  }
  changed_.notify_all();
  if (requeued) {
    work_.notify_all();
    watch_.notify_all();
    return;
  }
  deliver(pending, std::move(outcome));
  // It exits by itself after such a reply; the next loop starts its successor.
  if (asked_restart) slot.worker->wait_exit(options_.kill_grace);
}

void WorkerPool::watch_queue() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    std::vector<Pending> cancelled;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->job.cancel.cancelled()) {
        cancelled.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (!cancelled.empty()) {
      lock.unlock();
      for (auto& pending : cancelled) {
        deliver(pending, failed(pending, WorkerFailureKind::Cancelled,
                                "cancelled while queued, before " + pending.job.method + " started"));
      }
      lock.lock();
      continue;
    }
    if (queue_.empty()) {
      watch_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    } else {
      watch_.wait_for(lock, kCancelPoll);
    }
  }
}

bool WorkerPool::eligible(const Pending& pending, std::size_t index) const {
  if (pending.job.worker && *pending.job.worker != index) return false;
  const auto lost_on = [&](std::size_t i) {
    return std::any_of(pending.lost.begin(), pending.lost.end(),
                       [&](const LostAttempt& lost) { return lost.worker == static_cast<int>(i); });
  };
  if (!lost_on(index)) return true;
  // Lost here before: another worker is the better bet, but with none left
  // (a pool of one) the restarted worker reruns it rather than the candidate being blamed.
  return std::all_of(slots_.begin(), slots_.end(), [&](const auto& slot) { return lost_on(slot->index); });
}

bool WorkerPool::runnable_locked(const Pending& pending) const {
  return std::any_of(slots_.begin(), slots_.end(), [&](const auto& slot) {
    return eligible(pending, slot->index) && slot->state != WorkerState::Broken;
  });
}

// Puts a job whose worker was lost under it back at the front of the queue,
// for a worker it has not been lost on (or its own, restarted, in a pool of
// one). False (nothing changed) when it does not qualify: it did not lose its
// worker, it is pinned, cancelled, out of requeues, or no worker could take it.
bool WorkerPool::requeue_locked(Pending& pending, const Slot& slot, const JobOutcome& outcome) {
  if (outcome.ok() || !worker_lost(*outcome.failure) || stopping_) return false;
  if (pending.job.worker || pending.job.cancel.cancelled() || pending.lost.size() >= options_.max_requeues) return false;
  pending.lost.push_back(LostAttempt{static_cast<int>(slot.index), outcome.worker_command, outcome.worker_pid,
                                     *outcome.failure, outcome.ran});
  if (!runnable_locked(pending)) {
    pending.lost.pop_back();
    return false;
  }
  queue_.push_front(std::move(pending));
  return true;
}

std::optional<WorkerPool::Pending> WorkerPool::take_job_locked(std::size_t index) {
  const auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Pending& p) { return eligible(p, index); });
  if (it == queue_.end()) return std::nullopt;
  Pending pending = std::move(*it);
  queue_.erase(it);
  return pending;
}

std::vector<WorkerPool::Pending> WorkerPool::take_unrunnable_locked() {
  std::vector<Pending> taken;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (!runnable_locked(*it)) {
      taken.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

JobOutcome WorkerPool::unrunnable_locked(const Pending& pending) const {
  // Named after the first failure, so a version refusal stays a refusal for the caller.
  std::optional<WorkerFailureKind> kind;
  std::string message = "no worker could be started:";
  for (const auto& slot : slots_) {
    if (!eligible(pending, slot->index)) continue;
    if (!kind && slot->start_failure) kind = slot->start_failure->kind;
    message += " worker " + std::to_string(slot->index) + " (" + describe_command(slot->config.command) + "): " +
               (slot->start_failure ? slot->start_failure->message : std::string("not started")) + ";";
  }
  message.pop_back();
  return failed(pending, kind.value_or(WorkerFailureKind::Died), std::move(message));
}

void WorkerPool::deliver(Pending& pending, JobOutcome outcome) {
  outcome.lost_attempts = pending.lost;
  if (outcome.failure) outcome.failure->message += lost_note(pending.lost);
  try {
    pending.done(std::move(outcome));
  } catch (...) {
    // A throwing callback must not take a worker thread (and the pool) down with it.
  }
}

JobOutcome WorkerPool::failed(const Pending& pending, WorkerFailureKind kind, std::string message) {
  JobOutcome outcome;
  outcome.failure = WorkerFailure{};
  outcome.failure->kind = kind;
  outcome.failure->message = std::move(message);
  outcome.queued = since(pending.submitted);
  return outcome;
}

}  // namespace hiera::engine::eval
