#include "engine/eval/worker_failure.h"

#include <cstdio>

namespace hiera::engine::eval {

const char* to_string(WorkerFailureKind kind) {
  switch (kind) {
    case WorkerFailureKind::Timeout: return "timeout";
    case WorkerFailureKind::Died: return "died";
    case WorkerFailureKind::Protocol: return "protocol";
    case WorkerFailureKind::RpcError: return "rpc_error";
    case WorkerFailureKind::Cancelled: return "cancelled";
    case WorkerFailureKind::Refused: return "refused";
  }
  return "unknown";
}

std::string describe_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000.0);
  return text;
}

}  // namespace hiera::engine::eval
