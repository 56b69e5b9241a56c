#pragma once
// What some workers run inside and the pool must wait for and give back: a
// Slurm allocation (slurm_allocation.h). The pool waits for it before it
// starts such a worker (a pending allocation keeps the worker Starting and
// its jobs queued) and releases it once, when the pool shuts down.
#include <optional>
#include <string>

#include "engine/common/cancellation.h"

namespace hiera::engine::eval {

class WorkerAllocation {
 public:
  virtual ~WorkerAllocation() = default;
  // Blocks until workers can be started in it. nullopt: they can; else why
  // not (the allocation ended, was refused, ...), a sentence for the report.
  // Returns soon after `stop` is cancelled (the pool shutting down).
  virtual std::optional<std::string> wait_ready(const CancellationToken& stop) = 0;
  // Gives it back. Thread-safe and idempotent; called after its workers are gone.
  virtual void release() = 0;
  // "Slurm job 123", for messages.
  virtual std::string describe() const = 0;
};

}  // namespace hiera::engine::eval
