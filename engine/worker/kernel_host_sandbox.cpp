#include "engine/worker/kernel_host_sandbox.h"

#include <dlfcn.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef HIERA_HAVE_SECCOMP_H
#include <seccomp.h>
#endif

#include "hiera/denied_syscalls.h"

namespace hiera::engine::worker::kernel_host {

namespace {

// Where secrets usually live in a home directory (sandbox.py's SECRET_PLACES).
constexpr const char* kSecretPlaces[] = {".ssh", ".aws", ".azure", ".config", ".netrc", ".gnupg", ".docker", ".kube",
                                         ".git-credentials", ".npmrc", ".pypirc", ".bash_history", ".python_history",
                                         ".zsh_history", ".cache/hiera", ".hiera", ".env"};

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

}  // namespace

void die_with_parent(Protections& protections, pid_t parent) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    protections.missing("dies_with_parent", failed("prctl(PR_SET_PDEATHSIG)"));
    return;
  }
  if (::getppid() != parent) ::_exit(70);  // the worker is already gone: nobody would end us later
  protections.ok("dies_with_parent");
}

void enter_namespaces(Protections& protections, const std::vector<std::string>& read_only, const std::string& home) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  int flags = CLONE_NEWNS | CLONE_NEWNET;
  if (uid != 0) flags |= CLONE_NEWUSER;
  if (::unshare(flags) != 0) {
    const std::string reason = failed(uid == 0 ? "unshare(NEWNS|NEWNET)" : "unshare(NEWUSER|NEWNS|NEWNET)");
    protections.missing("no_network", reason);
    protections.missing("read_only_user_files", reason);
    protections.missing("hidden_secret_places", reason);
    return;
  }
  if (uid != 0) {
    // Maps the user to itself, so files keep their owners and CUDA's device nodes stay usable.
    if (!write_file("/proc/self/setgroups", "deny") ||
        !write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
      protections.missing("read_only_user_files", "cannot write the user namespace's maps");
    }
  }
  protections.ok("no_network", "a network namespace of its own, with no interfaces up");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    const std::string reason = failed("mount / private");
    protections.missing("read_only_user_files", reason);
    protections.missing("hidden_secret_places", reason);
    return;
  }
  std::string done;
  bool all = true;
  for (const auto& path : read_only) {
    if (::mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
        ::mount(nullptr, path.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      protections.missing("read_only_user_files", failed(path));
      all = false;
      break;
    }
    done += (done.empty() ? "" : ", ") + path;
  }
  if (all) protections.ok("read_only_user_files", done.empty() ? "none to protect" : done);
  std::string hidden;
  all = true;
  for (const char* name : kSecretPlaces) {
    if (home.empty()) break;
    const std::filesystem::path path = std::filesystem::path(home) / name;
    std::error_code ec;
    if (std::filesystem::is_symlink(path, ec)) continue;
    int r = 0;
    if (std::filesystem::is_directory(path, ec)) {
      r = ::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16k,mode=000");
    } else if (std::filesystem::is_regular_file(path, ec)) {
      r = ::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr);
    } else {
      continue;
    }
    if (r != 0) {
      protections.missing("hidden_secret_places", failed(path.string()));
      all = false;
      break;
    }
    hidden += (hidden.empty() ? "" : ", ") + path.string();
  }
  if (all) protections.ok("hidden_secret_places", hidden.empty() ? "none found" : hidden);
}

void set_limits(Protections& protections) {
  constexpr rlim_t kFileBytes = rlim_t{8} << 30;
  rlimit core{0, 0};
  rlimit fsize{};
  if (::setrlimit(RLIMIT_CORE, &core) != 0 || ::getrlimit(RLIMIT_FSIZE, &fsize) != 0) {
    protections.missing("resource_limits", failed("setrlimit(RLIMIT_CORE)"));
    return;
  }
  const rlim_t cap = fsize.rlim_max == RLIM_INFINITY ? kFileBytes : std::min(fsize.rlim_max, kFileBytes);
  rlimit capped{cap, cap};
  if (::setrlimit(RLIMIT_FSIZE, &capped) != 0) {
    protections.missing("resource_limits", failed("setrlimit(RLIMIT_FSIZE)"));
    return;
  }
  protections.ok("resource_limits", "no core dumps, files of at most " + std::to_string(cap >> 30) + " GiB");
}

void drop_privileges(Protections& protections) {
  if (::getuid() != 0) {
    const passwd* self = ::getpwuid(::getuid());
    protections.ok("unprivileged_user", std::string("runs as ") + (self ? self->pw_name : std::to_string(::getuid())) + " (not root)");
    return;
  }
  const passwd* nobody = ::getpwnam("nobody");
  if (!nobody) {
    protections.missing("unprivileged_user", "there is no user 'nobody'");
    return;
  }
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
    protections.missing("unprivileged_user", failed("setuid(nobody)"));
    return;
  }
  if (::setuid(0) == 0) ::_exit(71);  // root could be regained: never run a candidate like that
  rlimit nproc{256, 256};
  ::setrlimit(RLIMIT_NPROC, &nproc);
  protections.ok("unprivileged_user", "runs as nobody (uid " + std::to_string(uid) + "), at most 256 processes");
}

std::vector<std::string> denied_syscall_names(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const std::size_t end = std::min(list.find('\n'), list.size());
    std::string_view line = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') names.emplace_back(line);
  }
  return names;
}

const std::vector<std::string>& denied_syscalls() {
  static const std::vector<std::string> names = denied_syscall_names(kDeniedSyscalls);
  return names;
}

#ifdef HIERA_HAVE_SECCOMP_H
namespace {

// libseccomp's entry points, resolved from libseccomp.so.2 at run time.
struct Libseccomp {
  decltype(&seccomp_init) init = nullptr;
  decltype(&seccomp_syscall_resolve_name) resolve = nullptr;
  decltype(&seccomp_rule_add) rule_add = nullptr;
  decltype(&seccomp_attr_set) attr_set = nullptr;
  decltype(&seccomp_load) load = nullptr;
  decltype(&seccomp_release) release = nullptr;
};

template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(library, name));
  return out != nullptr;
}

std::optional<Libseccomp> open_libseccomp(std::string& reason) {
  void* library = ::dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = ::dlerror();
    reason = std::string("libseccomp.so.2 cannot be loaded: ") + (error ? error : "dlopen failed");
    return std::nullopt;
  }
  Libseccomp lib;
  if (resolve(library, "seccomp_init", lib.init) && resolve(library, "seccomp_syscall_resolve_name", lib.resolve) &&
      resolve(library, "seccomp_rule_add", lib.rule_add) && resolve(library, "seccomp_attr_set", lib.attr_set) &&
      resolve(library, "seccomp_load", lib.load) && resolve(library, "seccomp_release", lib.release)) {
    return lib;  // the library stays loaded: the process ends with its filter
  }
  reason = "libseccomp.so.2 lacks an entry point hiera uses";
  return std::nullopt;
}

}  // namespace

void filter_syscalls(Protections& protections, const std::vector<std::string>& names) {
  std::string reason;
  const std::optional<Libseccomp> lib = open_libseccomp(reason);
  if (!lib) {
    protections.missing("syscall_filter", reason);
    return;
  }
  scmp_filter_ctx ctx = lib->init(SCMP_ACT_ALLOW);
  if (!ctx) {
    protections.missing("syscall_filter", "seccomp_init failed");
    return;
  }
  int denied = 0;
  int rc = 0;
  for (const std::string& name : names) {
    const int nr = lib->resolve(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not a call of this architecture
    rc = lib->rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (rc != 0) {
      reason = "seccomp_rule_add(" + name + "): " + std::strerror(-rc);
      break;
    }
    ++denied;
  }
  // CUDA's threads are already running: the filter goes on every thread.
  if (rc == 0 && (rc = lib->attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) != 0) {
    reason = std::string("seccomp_attr_set(TSYNC): ") + std::strerror(-rc);
  }
  if (rc == 0 && (rc = lib->load(ctx)) != 0) reason = std::string("seccomp_load: ") + std::strerror(-rc);
  lib->release(ctx);
  if (rc != 0) {
    protections.missing("syscall_filter", reason);
    return;
  }
  protections.ok("syscall_filter", std::to_string(denied) +
                                       " system calls denied (mounts, namespaces, ptrace, the clock, the kernel's "
                                       "modules and keyrings, io_uring)");
}
#else
void filter_syscalls(Protections& protections, const std::vector<std::string>&) {
  protections.missing("syscall_filter", "hiera-worker was built without libseccomp's header (libseccomp-dev)");
}
#endif

}  // namespace hiera::engine::worker::kernel_host
