#include "engine/worker/kernel_host_sandbox.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace hiera::worker::kernel_host {

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

}  // namespace hiera::worker::kernel_host
