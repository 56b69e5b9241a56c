#include "engine/worker/kernel_host.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <system_error>

#include <unistd.h>

extern char** environ;

namespace hiera::engine::worker {

using nlohmann::json;
namespace kh = kernel_host;

namespace {

// What CUDA and locales need (python/hiera_runner/sandbox.py's ALLOWED_ENV, less Python's own).
constexpr std::string_view kAllowedEnv[] = {
    "PATH", "LANG", "LANGUAGE", "TZ", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH",
    "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING"};
constexpr std::chrono::milliseconds kExitGrace{500};
// A host answers a launch only after its own bounded wait: this much later it is hung itself.
constexpr std::chrono::milliseconds kReplyGrace{2000};

std::filesystem::path make_scratch() {
  std::string pattern = (std::filesystem::temp_directory_path() / "hiera-kernel-host-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    throw std::system_error(errno, std::generic_category(), "cannot create the kernel host's scratch directory");
  }
  return pattern;
}

}  // namespace

bool kept_in_kernel_host_env(std::string_view name) {
  if (name.starts_with("LC_")) return true;
  for (const auto allowed : kAllowedEnv) {
    if (name == allowed) return true;
  }
  return false;
}

engine::SpawnOptions kernel_host_spawn_options(const char* const* environment, const std::filesystem::path& scratch) {
  engine::SpawnOptions options;
  for (const char* const* entry = environment; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const std::string name(text.substr(0, text.find('=')));
    if (!kept_in_kernel_host_env(name)) options.remove_env.push_back(name);
  }
  options.extra_env = {{"HOME", scratch.string()}, {"TMPDIR", scratch.string()}, {"CUDA_CACHE_PATH", (scratch / "nv").string()}};
  // Its log (and a candidate's device printf, moved there) joins the worker's.
  options.stderr_mode = engine::SpawnOptions::Stderr::Inherited;
  options.own_process_group = true;
  options.die_with_parent = true;
  return options;
}

KernelHost::KernelHost(const std::vector<std::string>& argv) : scratch_(make_scratch()) {
  try {
    child_ = std::make_unique<engine::ChildProcess>(argv, kernel_host_spawn_options(environ, scratch_));
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
    throw;
  }
  to_host_ = child_->take_stdin();
  from_host_ = child_->take_stdout();
  channel_ = std::make_unique<kh::Channel>(from_host_, to_host_);
}

std::unique_ptr<KernelHost> KernelHost::start(int device) {
  // /proc/self/exe: this very executable, even if the file was replaced since.
  return std::make_unique<KernelHost>(std::vector<std::string>{"/proc/self/exe", "--kernel-host", "--device",
                                                               std::to_string(device), "--parent", std::to_string(::getpid())});
}

KernelHost::~KernelHost() {
  if (!dead_ && child_ && !child_->exit_status()) {
    try {
      channel_->send(kh::exit_request());
    } catch (const kh::ProtocolError&) {
    }
    if (!child_->wait_for(kExitGrace)) child_->kill();
  }
  if (to_host_ >= 0) ::close(to_host_);
  if (from_host_ >= 0) ::close(from_host_);
  child_.reset();  // kills and reaps a host still running
  std::error_code ec;
  std::filesystem::remove_all(scratch_, ec);
}

void KernelHost::died(const std::string& what) {
  std::string how = "ended";
  if (child_) {
    if (auto status = child_->wait_for(std::chrono::milliseconds(2000))) how = "exited (" + status->describe() + ")";
    else how = "exited (" + child_->kill().describe() + ")";
  }
  dead_ = "the kernel host " + how + " while " + what;
  throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
}

const kh::Ready& KernelHost::ready(std::chrono::milliseconds limit) {
  if (ready_) return *ready_;
  if (dead_) throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  try {
    ready_ = kh::ready_from_json(channel_->receive(std::chrono::steady_clock::now() + limit));
  } catch (const kh::ChannelTimeout&) {
    child_->kill();
    dead_ = "the kernel host was not ready within " + std::to_string(limit.count()) + " ms (killed)";
    throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  } catch (const kh::ChannelClosed&) {
    died("starting");
  } catch (const kh::ProtocolError& e) {
    child_->kill();
    dead_ = std::string("the kernel host's first message is malformed: ") + e.what();
    throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  }
  return *ready_;
}

kh::Reply KernelHost::call(const json& request, std::chrono::milliseconds limit, const std::string& what) {
  if (dead_) throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  kh::Reply reply;
  try {
    channel_->send(request);
    reply = kh::reply_from_json(channel_->receive(std::chrono::steady_clock::now() + limit + kReplyGrace));
  } catch (const kh::ChannelTimeout&) {
    child_->kill();
    dead_ = what + ": still running after " + std::to_string(limit.count()) + " ms (the kernel host was killed)";
    throw KernelHostError(KernelHostError::Kind::Timeout, *dead_);
  } catch (const kh::ChannelClosed&) {
    died(what);
  } catch (const kh::ProtocolError& e) {
    child_->kill();
    dead_ = what + ": the kernel host's reply is malformed (" + e.what() + "; killed)";
    throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  }
  if (reply.ok) return reply;
  const std::string message = what + ": " + reply.message;
  if (reply.lost) {
    dead_ = message + " (the kernel host's CUDA context is lost; it exits)";
    if (!child_->wait_for(kExitGrace)) child_->kill();
  }
  const auto kind = reply.kind == "timeout"         ? KernelHostError::Kind::Timeout
                    : reply.kind == "out_of_memory" ? KernelHostError::Kind::OutOfMemory
                                                    : KernelHostError::Kind::Runtime;
  throw KernelHostError(kind, dead_ ? *dead_ : message);
}

void KernelHost::load(const std::string& cubin, const std::string& kernel, std::chrono::milliseconds limit) {
  call(kh::to_json(kh::LoadRequest{cubin, kernel}), limit, "loading the candidate in the kernel host");
}

void KernelHost::map(const std::vector<std::string>& handles, std::chrono::milliseconds limit) {
  call(kh::to_json(kh::MapRequest{handles}), limit, "mapping the candidate's buffers in the kernel host");
}

void KernelHost::launch(kh::LaunchRequest request, std::chrono::milliseconds limit, const std::string& what) {
  request.timed = false;
  request.limit_ms = limit.count();
  call(kh::to_json(request), limit, what);
}

KernelHost::Timed KernelHost::launch_timed(kh::LaunchRequest request, std::chrono::milliseconds limit, const std::string& what) {
  request.timed = true;
  request.limit_ms = limit.count();
  const json message = kh::to_json(request);
  const auto started = std::chrono::steady_clock::now();
  const kh::Reply reply = call(message, limit, what);
  const auto ended = std::chrono::steady_clock::now();
  if (!reply.elapsed_ms) {
    child_->kill();
    dead_ = what + ": the kernel host's reply carries no time (killed)";
    throw KernelHostError(KernelHostError::Kind::Runtime, *dead_);
  }
  return {*reply.elapsed_ms, std::chrono::duration<double, std::milli>(ended - started).count()};
}

std::optional<std::string> impossible_timing(const KernelHost::Timed& timed) {
  if (timed.reported_ms <= timed.wall_ms + kTimingToleranceMs) return std::nullopt;
  std::ostringstream message;
  message.precision(4);
  message << "the kernel host reported " << timed.reported_ms << " ms for a timed run that took " << timed.wall_ms
          << " ms from request to reply (measured by the worker): the report is impossible";
  return message.str();
}

bool KernelHost::usable() {
  return !dead_ && child_ && !child_->exit_status() && !child_->wait_for(std::chrono::milliseconds(0));
}

void KernelHost::retire() {
  if (!usable()) return;
  try {
    channel_->send(kh::exit_request());
  } catch (const kh::ProtocolError&) {
  }
  dead_ = "the kernel host was retired";
}

bool KernelHost::finished() { return !child_ || child_->wait_for(std::chrono::milliseconds(0)).has_value(); }

void KernelHostPool::reap_finished() {
  std::erase_if(retiring_, [](const std::unique_ptr<KernelHost>& host) { return host->finished(); });
  // One still exiting after its successor's whole evaluation is stuck: ended now (killed, reaped).
  while (retiring_.size() > 2) retiring_.erase(retiring_.begin());
}

void KernelHostPool::give_back(std::unique_ptr<KernelHost> host) {
  if (!host) return;
  host->retire();
  retiring_.push_back(std::move(host));
  reap_finished();
}

std::unique_ptr<KernelHost> KernelHostPool::take() {
  reap_finished();
  std::unique_ptr<KernelHost> host = std::move(spare_);
  if (!host || !host->usable()) host = start_();
  try {
    spare_ = start_();
  } catch (const std::exception& e) {
    std::cerr << "hiera-worker: cannot start a spare kernel host: " << e.what() << "\n";
  }
  return host;
}

}  // namespace hiera::engine::worker
