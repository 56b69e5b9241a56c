#pragma once
// The kernel host's sandbox, from what Linux provides; the same choices as
// the PyTorch candidate process (python/hiera_runner/sandbox.py): die with
// the worker, no network and read-only user files with hidden secret places
// (network and mount namespaces: as root directly, otherwise inside a user
// namespace), no core dumps and capped file sizes, and after CUDA is up the
// user `nobody` where it runs as root, and last a seccomp filter that denies
// the system calls of python/hiera_runner/denied_syscalls.txt. Each protection
// that cannot be put in force is recorded with its reason, and the host goes on.
#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::worker::kernel_host {

class Protections {
 public:
  void ok(const std::string& name, const std::string& detail = "in force") { state_[name] = detail; }
  void missing(const std::string& name, const std::string& reason) { state_[name] = "not in force: " + reason; }
  const std::map<std::string, std::string>& state() const { return state_; }

 private:
  std::map<std::string, std::string> state_;
};

// PR_SET_PDEATHSIG(SIGKILL); exits (70) at once when `parent` is already gone.
void die_with_parent(Protections& protections, pid_t parent);
// Network and mount namespaces; `read_only` bind-remounted read-only, the
// usual secret places under `home` hidden. Before any thread starts.
void enter_namespaces(Protections& protections, const std::vector<std::string>& read_only, const std::string& home);
// No core dumps, files of at most 8 GiB.
void set_limits(Protections& protections);
// Root becomes `nobody` (and at most 256 processes); after CUDA is initialised.
void drop_privileges(Protections& protections);
// The names of a denied-syscalls list: one a line, '#' comments and blank lines skipped.
std::vector<std::string> denied_syscall_names(std::string_view list);
// Every thread gets EPERM for `names` (those this architecture has), through
// libseccomp loaded at run time. Last: the set-up above needs some of them.
void filter_syscalls(Protections& protections, const std::vector<std::string>& names);
// The list embedded from denied_syscalls.txt.
const std::vector<std::string>& denied_syscalls();

}  // namespace hiera::engine::worker::kernel_host
