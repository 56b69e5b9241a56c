#pragma once
// The worker's side of the job protocol's transport: Content-Length frames of
// JSON-RPC on two file descriptors, one request at a time, exactly one
// response per request, a JSON-RPC error for anything malformed.
#include "engine/worker/worker_service.h"

namespace hiera::engine::worker {

// Serves until shutdown (returns 0), a lost CUDA context (returns 3, after
// the reply), or the end of input (returns 1: the engine went away without
// shutdown).
int serve_jobs(int in_fd, int out_fd, WorkerService& service);

}  // namespace hiera::engine::worker
