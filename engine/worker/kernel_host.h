#pragma once
// The worker's side of a kernel host: the child process (`hiera-worker
// --kernel-host`) that loads one CUDA candidate's cubin in a CUDA context of
// its own, sees only that candidate's argument buffers (CUDA IPC handles of
// buffers the worker allocated) and launches and times it on request. Its
// environment is reduced to an allowlist, it runs in a fresh scratch
// directory, in a process group of its own that dies with the worker, and
// every request has a wall-time limit past which the group is killed. A
// pool keeps one host started ahead, so its CUDA context is created while
// the previous evaluation runs.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/child_process.h"
#include "engine/worker/kernel_host_protocol.h"

namespace hiera::engine::worker {

// A candidate's run that failed in (or with) its host; the worker goes on.
class KernelHostError : public std::runtime_error {
 public:
  enum class Kind { Runtime, Timeout, OutOfMemory };
  KernelHostError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Whether the host keeps variable `name` (what CUDA and locales need; API
// keys, tokens and the user's own variables are dropped).
bool kept_in_kernel_host_env(std::string_view name);
// How a host is started: `environment` ("NAME=VALUE" entries, as environ)
// reduced to the allowlist, HOME and TMPDIR in `scratch`, its own process
// group, death with the worker.
engine::SpawnOptions kernel_host_spawn_options(const char* const* environment, const std::filesystem::path& scratch);

class KernelHost {
 public:
  // Starts argv with a new scratch directory as HOME (removed with the
  // host), which the host makes its working directory. The host itself is
  // `hiera-worker --kernel-host`: see start().
  explicit KernelHost(const std::vector<std::string>& argv);
  // This executable in kernel-host mode for CUDA device `device`.
  static std::unique_ptr<KernelHost> start(int device);
  ~KernelHost();
  KernelHost(const KernelHost&) = delete;
  KernelHost& operator=(const KernelHost&) = delete;

  // The host's first message, waited for at most `limit` once; throws KernelHostError.
  const kernel_host::Ready& ready(std::chrono::milliseconds limit);
  void load(const std::string& cubin, const std::string& kernel, std::chrono::milliseconds limit);
  // The buffers of the next launches, replacing the previous ones.
  void map(const std::vector<std::string>& handles, std::chrono::milliseconds limit);
  // One launch, waited for; `what` names it in errors ("running the candidate (first run)").
  void launch(kernel_host::LaunchRequest request, std::chrono::milliseconds limit, const std::string& what);
  // One timed launch: the host's event time and this side's wall time around
  // the whole request (the host synchronises its device before it replies).
  struct Timed {
    double reported_ms = 0.0;
    double wall_ms = 0.0;
  };
  Timed launch_timed(kernel_host::LaunchRequest request, std::chrono::milliseconds limit, const std::string& what);
  // False once the host exited, was killed, or lost its context.
  bool usable();
  // Asks the host to exit without waiting for it (see KernelHostPool::give_back).
  void retire();
  // The host process has ended (and is reaped).
  bool finished();
  const std::filesystem::path& scratch() const { return scratch_; }

 private:
  kernel_host::Reply call(const nlohmann::json& request, std::chrono::milliseconds limit, const std::string& what);
  [[noreturn]] void died(const std::string& what);

  std::filesystem::path scratch_;
  std::unique_ptr<engine::ChildProcess> child_;
  int to_host_ = -1;
  int from_host_ = -1;
  std::unique_ptr<kernel_host::Channel> channel_;
  std::optional<kernel_host::Ready> ready_;
  std::optional<std::string> dead_;  // why it can no longer be used
};

// The host's event time for a timed run lies inside the worker's wall time
// around that request; beyond this margin the report is impossible.
inline constexpr double kTimingToleranceMs = 0.1;
// Why a timed round's report cannot be true, or nullopt when it can.
std::optional<std::string> impossible_timing(const KernelHost::Timed& timed);

// One host per candidate, one started ahead (the spare).
class KernelHostPool {
 public:
  using Start = std::function<std::unique_ptr<KernelHost>()>;
  explicit KernelHostPool(Start start) : start_(std::move(start)) {}
  // The spare (or a new host when it died), and the next spare started.
  std::unique_ptr<KernelHost> take();
  // A used host: told to exit and reaped later, so the tear-down of its CUDA
  // context is not on the evaluation's path.
  void give_back(std::unique_ptr<KernelHost> host);

 private:
  void reap_finished();

  Start start_;
  std::unique_ptr<KernelHost> spare_;
  std::vector<std::unique_ptr<KernelHost>> retiring_;
};

}  // namespace hiera::engine::worker
