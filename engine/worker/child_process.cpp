#include "engine/worker/child_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hiera::worker {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

ChildProcess spawn_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env) {
  if (argv.empty()) throw std::runtime_error("no command to start");
  int to_child[2], from_child[2], exec_error[2];
  if (::pipe2(to_child, O_CLOEXEC) || ::pipe2(from_child, O_CLOEXEC) || ::pipe2(exec_error, O_CLOEXEC)) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    if (!extra_env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (const auto& [name, value] : extra_env) env_strings.push_back(name + "=" + value);
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the worker died before the prctl took effect
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    ::execvpe(args[0], args.data(), env.data());
    const int error = errno;
    [[maybe_unused]] auto n = ::write(exec_error[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  ::close(exec_error[1]);
  int error = 0;
  ssize_t n = 0;
  do {
    n = ::read(exec_error[0], &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  ::close(exec_error[0]);
  if (n == sizeof error) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(error));
  }
  return ChildProcess{pid, to_child[1], from_child[0]};
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(status);
}

int stop_child(ChildProcess& child, std::chrono::milliseconds grace) {
  close_fd(child.stdin_fd);
  close_fd(child.stdout_fd);
  if (child.pid < 0) return 0;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    const pid_t done = ::waitpid(child.pid, &status, WNOHANG);
    if (done == child.pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  child.pid = -1;
  return status;
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ChildProcess child;
  try {
    child = spawn_child(argv, {});
  } catch (const std::exception&) {
    return std::nullopt;
  }
  close_fd(child.stdin_fd);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{child.stdout_fd, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(child.stdout_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  const int status = stop_child(child, timed_out ? std::chrono::milliseconds(0) : timeout);
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace hiera::worker
