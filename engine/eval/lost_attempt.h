#pragma once
// A job's earlier run on a worker that was lost under it (killed from outside,
// its ssh connection dropped, its Slurm step cancelled or preempted): the job
// went back to the queue and ran again elsewhere. Kept for the report, so a
// result always says where it ran and what it survived.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/eval/worker_failure.h"

namespace hiera::engine::eval {

struct LostAttempt {
  int worker = -1;  // index in the pool
  std::vector<std::string> worker_command;
  pid_t worker_pid = -1;
  WorkerFailure failure;  // how the worker was lost (kind Died)
  std::chrono::milliseconds ran{0};
};

}  // namespace hiera::engine::eval
