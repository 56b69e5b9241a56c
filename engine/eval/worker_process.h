#pragma once
// One worker process and the job protocol spoken with it (JOB_PROTOCOL.md):
// start it from a configured command line (dying with us, without the secrets
// in its environment), shake hands, send one request at a time and wait for
// its reply, a timeout, its death or a cancellation. Every failure is a
// WorkerFailure. Every string the worker sends is redacted of the secrets.
// A request larger than the frame limit is refused before it is sent. After a timeout, a cancellation or a protocol
// violation the worker is killed (SIGTERM, then SIGKILL after a grace period)
// and reaped: a worker that failed never takes another job.
//
// The pipes are served by an I/O thread of its own (Boost.Asio): stdout is cut
// into frames and stderr kept in a bounded tail as bytes arrive, between calls
// too, so a chatty worker never blocks on a full pipe; requests are written
// asynchronously, so a worker that stops reading cannot hold the engine past
// the timeout.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/cancellation.h"
#include "engine/common/child_process.h"
#include "engine/common/secret_redactor.h"
#include "engine/eval/tail_buffer.h"
#include "engine/eval/worker_failure.h"

namespace hiera::engine::eval {

struct WorkerConfig {
  // The worker's argv: {"hiera", "worker", "--device", "0"}, {"ssh", "host", "hiera", "worker"}, ...
  std::vector<std::string> command;
  // Sent in `hello`; empty means this build's version (hiera::kVersion).
  std::string engine_version;
  // CUDA initialisation and `import torch` take seconds on a cold machine.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(60)};
  // How long a worker has to exit after SIGTERM (or after `shutdown`) before SIGKILL.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(2)};
  std::size_t stderr_capacity = 64u << 10;
  // The configured secrets: removed from the worker's environment, and from
  // everything it says (results, error replies, stderr, failure messages)
  // before any of it leaves this class. This is where worker text enters the engine.
  SecretRedactor secrets;
};

// What the worker said about itself in the handshake.
struct WorkerHello {
  struct Device {
    int index = 0;
    std::string name;
    std::string cc;  // compute capability, "9.0"
  };
  struct Pytorch {
    std::string python;
    std::string torch;
  };
  std::string worker_version;
  bool cuda = false;
  std::optional<Device> device;    // null: no GPU on this worker
  std::optional<Pytorch> pytorch;  // null: no Python with torch
};

struct CallResult {
  nlohmann::json result;                 // the response's result when ok()
  std::optional<WorkerFailure> failure;  // why there is none
  bool ok() const { return !failure; }
};

// Versions are compatible when major and minor match ("0.1.0" and "0.1.7");
// anything unparsable is incompatible.
bool same_major_minor(std::string_view a, std::string_view b);

// "hiera worker --device 0": a command line for messages.
std::string describe_command(const std::vector<std::string>& command);

class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerConfig config);
  // A worker still running is killed and reaped.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the process and shakes hands (`hello`). On failure (cannot start,
  // handshake timed out, versions refused: kind Refused, naming both) the
  // process is already gone. Call once per object; a restart is a new object.
  std::optional<WorkerFailure> start(const CancellationToken& cancel = CancellationToken());

  // Sends one request and waits for its response, at most timeout. A request
  // over the job protocol's frame limit is not sent: an RpcError naming the
  // limit and the size, and the worker lives on. The token
  // is looked at every few milliseconds; a cancelled call kills the worker.
  // One call at a time (the protocol has one job in flight per worker).
  CallResult call(const std::string& method, nlohmann::json params, std::chrono::milliseconds timeout,
                  const CancellationToken& cancel = CancellationToken());

  // Clean exit: sends `shutdown`, closes stdin and waits up to grace for the
  // process to exit, then kills it. Always reaps.
  void shutdown(std::chrono::milliseconds grace);
  // For a worker that announced it will exit (a restart request): waits up to
  // grace for it, then kills it. Reaps.
  void wait_exit(std::chrono::milliseconds grace);
  // SIGTERM, kill_grace, SIGKILL; reaps.
  void kill();

  // Thread-safe and sticky: the start or call in progress, and every later
  // one, fails at once as Cancelled with this reason (the pool shutting down).
  void abort(std::string reason);

  // Thread-safe. Started, handshake done, and not seen to exit or fail since.
  bool running() const;
  // Thread-safe. The process id once started (kept after it exits, for reports), else -1.
  pid_t pid() const { return pid_.load(); }
  // Thread-safe. The last bytes of stderr, UTF-8 repaired and redacted.
  std::string stderr_tail() const;
  // Thread-safe. How the process ended, once it has been reaped.
  std::optional<ExitStatus> exit_status() const;

  // Valid after a successful start().
  const WorkerHello& hello() const { return hello_; }
  const WorkerConfig& config() const { return config_; }

 private:
  class Io;
  enum class Wait { Response, Protocol, Closed, Aborted, Cancelled, Timeout };

  Wait wait_for_response(std::chrono::milliseconds timeout, const CancellationToken& cancel);
  WorkerFailure died(const std::string& method);
  WorkerFailure failure(WorkerFailureKind kind, std::string message);
  std::optional<WorkerFailure> handshake(const CancellationToken& cancel);
  void wait_for_stderr(std::chrono::milliseconds limit);
  void finish(ExitStatus status);  // stops the I/O thread; the process is reaped

  WorkerConfig config_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<Io> io_;
  WorkerHello hello_;
  std::int64_t next_id_ = 1;
  std::atomic<pid_t> pid_{-1};

  // Shared with the I/O thread and with abort().
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::int64_t> awaiting_;        // the id of the request in flight
  std::optional<nlohmann::json> response_;      // its response (the whole message)
  std::optional<std::string> protocol_error_;   // the first thing the worker wrote that breaks the protocol
  std::optional<std::string> write_error_;      // stdin refused our bytes
  bool stdout_closed_ = false;
  bool stderr_closed_ = false;
  bool alive_ = false;
  bool aborted_ = false;
  std::string abort_reason_;
  std::optional<ExitStatus> exit_status_;
  TailBuffer stderr_;

  friend class Io;
};

}  // namespace hiera::engine::eval
