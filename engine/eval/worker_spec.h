#pragma once
// `--worker` values (and editor `worker.command` entries) that say where a
// worker runs instead of spelling its command line:
//
//   ssh://[user@]host[:port][/absolute/path/to/hiera][?gpus=N]
//       `hiera worker` on that host through the system ssh client, over its
//       stdin and stdout (the job protocol as is; nothing listens on a port).
//       The user's ssh configuration and keys apply; BatchMode=yes, so a
//       missing key fails at once instead of prompting. gpus=N: N workers,
//       `--device 0` .. `--device N-1`; default one worker, the remote default.
//   slurm[:PARTITION][,gres=gpu:N][,nodes=K][,workers=W][,cpus=C][,mem=SIZE][,time=T][,jobid=ID][,hiera=PATH]
//       workers as Slurm job steps (`srun … hiera worker`), one per allocated
//       GPU (N per node × K nodes) unless workers=W says, each with C CPUs
//       (default 1), in a holding job the engine submits (sbatch; time=T is
//       its time limit, mem=SIZE its memory per node: digits with an optional
//       K, M, G or T, megabytes without) and cancels when the run ends, or in
//       the existing allocation jobid=ID (never cancelled by hiera). PATH: the
//       hiera the compute nodes run (default: this executable; clusters share
//       the file system).
//
// Anything else is a command line. Bad specs throw std::invalid_argument
// with a message that names the spec and what is wrong with it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::eval {

enum class WorkerSpecKind { Command, Ssh, Slurm };
WorkerSpecKind worker_spec_kind(std::string_view text);

struct SshWorkerSpec {
  std::string user;  // empty: ssh's own default (configuration, then the local user)
  std::string host;
  std::optional<int> port;
  std::string hiera = "hiera";  // the remote executable: on the remote PATH unless a path is given
  int gpus = 0;                 // 0: one worker on the remote default device
};
SshWorkerSpec parse_ssh_worker(std::string_view text);

// One argv per worker: ssh_command (e.g. {"ssh"}, or $HIERA_SSH_COMMAND split)
// + BatchMode, keep-alives that notice a dead connection within a minute,
// no escape character, [-p PORT], then [user@]host and the remote command
// `exec hiera worker [--device I]`, each word quoted for the remote shell.
std::vector<std::vector<std::string>> ssh_worker_commands(const SshWorkerSpec& spec,
                                                          const std::vector<std::string>& ssh_command);

struct SlurmWorkerSpec {
  std::string partition;   // empty: the cluster's default
  std::string gres;        // "gpu:4", "gpu:a100:4"; empty: no GPUs asked for
  int gpus_per_node = 0;   // from gres
  int nodes = 1;
  int workers = 1;         // default: gpus_per_node × nodes, else nodes
  int cpus_per_worker = 1;
  std::string time_limit;  // sbatch --time; empty: the partition's default
  std::string memory;      // sbatch --mem, per node ("64G"); empty: the partition's default
  std::string job_id;      // an existing allocation; empty: hiera submits one
  std::string hiera;       // empty: this executable
};
SlurmWorkerSpec parse_slurm_worker(std::string_view text);

// A word for a POSIX shell: as is when it is made of safe characters, else in single quotes.
std::string shell_quote(std::string_view word);

}  // namespace hiera::engine::eval
