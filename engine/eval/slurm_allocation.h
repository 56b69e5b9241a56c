#pragma once
// Workers as Slurm job steps, inside an allocation that hiera holds for the
// run: `sbatch --wrap 'exec sleep infinity'` submits a holding job that owns
// the resources (it returns at once, so the job can be cancelled while it
// still pends), each worker is `srun --jobid=ID … hiera worker` (one task, one
// GPU when the job has GPUs, its own CPUs), and `scancel ID` gives it all
// back when the pool shuts down. An existing allocation (jobid=) is used the
// same way and never cancelled. A step that is cancelled or preempted ends
// its srun: the pool sees the worker lost, requeues its job elsewhere and
// starts a new step once the allocation runs again.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/eval/allocation_notices.h"
#include "engine/eval/worker_allocation.h"
#include "engine/eval/worker_spec.h"

namespace hiera::engine::eval {

// The Slurm client commands (tests substitute scripts) and how they are used.
struct SlurmTools {
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string scancel = "scancel";
  std::string srun = "srun";
  std::chrono::milliseconds poll{std::chrono::seconds(2)};  // squeue while the job pends
  std::chrono::milliseconds command_timeout{std::chrono::seconds(30)};
  // Variables the Slurm clients must not see (the configured secrets):
  // sbatch copies its environment into the job, where it is kept and shown.
  std::vector<std::string> remove_env;
};

// News for the user: submitted and cancelled (Info), "Slurm job 123 is pending
// (Resources); …" (Waiting), then running (Running) or gone (Ended).
using SlurmNotice = AllocationNoticeCallback;

class SlurmAllocation final : public WorkerAllocation {
 public:
  // Submits the holding job for spec (its job_id must be empty). Throws
  // std::runtime_error with sbatch's own words when it refuses, or when
  // sbatch cannot be run at all.
  static std::shared_ptr<SlurmAllocation> request(const SlurmWorkerSpec& spec, SlurmNotice notice, SlurmTools tools = {});
  // The existing allocation spec.job_id.
  static std::shared_ptr<SlurmAllocation> attach(const SlurmWorkerSpec& spec, SlurmNotice notice, SlurmTools tools = {});
  ~SlurmAllocation() override;  // release()

  // squeue until the job runs (nullopt), ends or is gone (the reason).
  // Pending states are noticed once each, and again when Slurm's reason
  // changes (a job just submitted gets a second look when it has none yet);
  // after one, the job running or ending is noticed too (the wait is over).
  std::optional<std::string> wait_ready(const CancellationToken& stop) override;
  // scancel, once, for a job hiera submitted; nothing for an attached one.
  void release() override;
  std::string describe() const override { return "Slurm job " + job_id_; }

  const std::string& job_id() const { return job_id_; }
  bool owned() const { return owned_; }
  // Worker `index`'s step: srun --jobid=ID --job-name=hiera-worker-INDEX, one
  // task on one node, its CPUs (and one GPU) exclusively, --mem=0 when the
  // job asked for memory (mem=), output unbuffered (frames do not end in a
  // newline), then worker_argv.
  std::vector<std::string> step_command(std::size_t index, const std::vector<std::string>& worker_argv) const;

 private:
  SlurmAllocation(SlurmWorkerSpec spec, std::string job_id, bool owned, SlurmNotice notice, SlurmTools tools);
  void notice(AllocationNoticeKind kind, const std::string& line) const;
  // wait_ready's answer when the job is gone: noticed as Ended when workers were waiting for it.
  std::string ended(std::string reason);

  SlurmWorkerSpec spec_;
  std::string job_id_;
  bool owned_ = false;
  SlurmNotice notice_;
  SlurmTools tools_;
  std::mutex mutex_;  // one squeue at a time, and release()
  std::string last_state_;
  std::string last_reason_;  // Slurm's reason with last_state_, while it pends
  bool released_ = false;
};

}  // namespace hiera::engine::eval
