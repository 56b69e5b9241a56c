#pragma once
// Why a job sent to a worker produced no result: the one failure type that
// WorkerProcess, WorkerPool and EvaluationClient all report, so a caller can
// branch on the kind and show the message as is.
#include <chrono>
#include <optional>
#include <string>

namespace hiera::engine::eval {

enum class WorkerFailureKind {
  Timeout,    // no reply within the time allowed; the worker was killed
  Died,       // the worker exited or was killed by a signal (or could not be started at all)
  Protocol,   // the worker wrote something that is not a framed JSON-RPC reply to our request; it was killed
  RpcError,   // the worker answered with a JSON-RPC error: the job could not run; the worker lives on
  Cancelled,  // the caller cancelled (or the pool shut down); a running worker was killed
  Refused,    // the handshake found incompatible versions
};

// "timeout", "died", "protocol", "rpc_error", "cancelled", "refused".
const char* to_string(WorkerFailureKind kind);

struct WorkerFailure {
  WorkerFailureKind kind = WorkerFailureKind::Died;
  // Complete and human-readable, e.g. "worker timed out after 30 s during evaluate"
  // or "worker died (signal 11 SIGSEGV) during evaluate: <stderr tail>".
  std::string message;
  std::optional<int> exit_code;  // Died: the worker's exit status
  std::optional<int> signal;     // Died: the signal that ended it
  std::optional<int> rpc_code;   // RpcError: the JSON-RPC error code
  std::string stderr_tail;       // the last bytes the worker wrote to stderr (bounded), UTF-8 repaired
};

// "300 ms", "30 s", "1.5 s": durations in failure messages, short and exact enough.
std::string describe_duration(std::chrono::milliseconds duration);

}  // namespace hiera::engine::eval
