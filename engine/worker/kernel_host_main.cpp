#include "engine/worker/kernel_host_main.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "engine/common/process_protection.h"
#include "engine/worker/cuda_device.h"
#include "engine/worker/cuda_failure.h"
#include "engine/worker/driver_api.h"
#include "engine/worker/kernel_host_protocol.h"
#include "engine/worker/kernel_host_sandbox.h"
#include "engine/worker/kernel_module.h"
#include "engine/worker/kernel_timer.h"

namespace hiera::engine::worker {

namespace kh = kernel_host;
using nlohmann::json;

namespace {

std::string user_home() {
  const passwd* self = ::getpwuid(::getuid());
  return self && self->pw_dir ? self->pw_dir : "";
}

// The user's files and hiera's own, made read-only; not one that holds the scratch directory.
std::vector<std::string> read_only_paths(const std::filesystem::path& scratch) {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path candidates[] = {user_home(), std::filesystem::current_path(ec),
                                              std::filesystem::read_symlink("/proc/self/exe", ec).parent_path()};
  const std::string inside = std::filesystem::weakly_canonical(scratch, ec).string() + "/";
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    const std::string path = std::filesystem::weakly_canonical(c, ec).string();
    if (ec || path.empty() || path == "/" || !std::filesystem::is_directory(path, ec)) continue;
    if (inside.starts_with(path + "/") || std::find(out.begin(), out.end(), path) != out.end()) continue;
    out.push_back(path);
  }
  return out;
}

class Server {
 public:
  Server(kh::Channel& channel, std::optional<DeviceInfo> device, std::optional<std::string> cuda_error)
      : channel_(channel), device_(std::move(device)), cuda_error_(std::move(cuda_error)) {}

  int serve() {
    for (;;) {
      json message;
      try {
        message = channel_.receive();
      } catch (const kh::ChannelClosed&) {
        return 0;
      } catch (const kh::ProtocolError& e) {
        reply_error("protocol", e.what(), false);
        continue;
      }
      try {
        const std::string op = kh::op_of(message);
        if (op == "exit") return 0;
        if (cuda_error_) throw kh::ProtocolError("the kernel host has no GPU: " + *cuda_error_);
        if (op == "load") load(kh::load_from_json(message));
        else if (op == "map") map(kh::map_from_json(message));
        else if (op == "launch") launch(kh::launch_from_json(message));
        else throw kh::ProtocolError("kernel host message: unknown op '" + op + "'");
      } catch (const CudaFailure& failure) {
        const bool lost = failure.context_lost() || failure.kind() == CudaFailure::Kind::Timeout;
        reply_error(failure.kind() == CudaFailure::Kind::Timeout       ? "timeout"
                    : failure.kind() == CudaFailure::Kind::OutOfMemory ? "out_of_memory"
                                                                       : "runtime",
                    failure.what(), lost);
        // The context is unusable (or a kernel still runs): the end of this process frees the GPU.
        if (lost) std::_Exit(3);
      } catch (const kh::ProtocolError& e) {
        reply_error("protocol", e.what(), false);
      } catch (const std::exception& e) {
        reply_error("runtime", e.what(), false);
      }
    }
  }

 private:
  void reply_error(const char* kind, const std::string& message, bool lost) {
    kh::Reply reply;
    reply.kind = kind;
    reply.message = message;
    reply.lost = lost;
    try {
      channel_.send(kh::to_json(reply));
    } catch (const kh::ChannelClosed&) {
      std::_Exit(0);  // the worker is gone
    }
  }
  void reply_ok(std::optional<double> elapsed_ms = std::nullopt) {
    kh::Reply reply;
    reply.ok = true;
    reply.elapsed_ms = elapsed_ms;
    channel_.send(kh::to_json(reply));
  }

  void load(const kh::LoadRequest& request) {
    module_.reset();
    module_ = std::make_unique<KernelModule>(request.cubin, request.kernel, "candidate");
    reply_ok();
  }

  void unmap() {
    for (void* ptr : mapped_) {
      if (!context_abandoned()) cudaIpcCloseMemHandle(ptr);
    }
    mapped_.clear();
  }

  void map(const kh::MapRequest& request) {
    unmap();
    for (const auto& bytes : request.handles) {
      cudaIpcMemHandle_t handle{};
      if (bytes.size() != sizeof handle) {
        throw kh::ProtocolError("kernel host message 'map': a handle must be " + std::to_string(sizeof handle) + " bytes, got " +
                                std::to_string(bytes.size()));
      }
      std::memcpy(&handle, bytes.data(), sizeof handle);
      void* ptr = nullptr;
      check_cuda(cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess), "opening an argument buffer's IPC handle");
      mapped_.push_back(ptr);
    }
    reply_ok();
  }

  void launch(const kh::LaunchRequest& request) {
    if (!module_) throw kh::ProtocolError("kernel host message 'launch': no candidate is loaded");
    std::vector<void*> pointers(request.args.size(), nullptr);
    std::vector<std::string> scalars(request.args.size());
    std::vector<void*> params;
    for (std::size_t i = 0; i < request.args.size(); ++i) {
      const auto& arg = request.args[i];
      if (arg.buffer) {
        if (*arg.buffer >= mapped_.size()) {
          throw kh::ProtocolError("kernel host message 'launch': buffer " + std::to_string(*arg.buffer) + " is not mapped (" +
                                  std::to_string(mapped_.size()) + " are)");
        }
        pointers[i] = mapped_[*arg.buffer];
        params.push_back(&pointers[i]);
      } else {
        scalars[i] = arg.bytes;
        params.push_back(scalars[i].data());
      }
    }
    const std::chrono::milliseconds limit(request.limit_ms);
    if (!request.timed) {
      module_->launch(request.dims, params, nullptr);
      wait_for_stream(nullptr, limit, "running the candidate");
      reply_ok();
      return;
    }
    // Timed the way the worker times the reference: flush, events, device synchronised.
    if (!timer_) timer_ = std::make_unique<KernelTimer>(device_->l2_bytes, limit);
    const double ms = timer_->time_one([&](cudaStream_t stream) { module_->launch(request.dims, params, stream); });
    reply_ok(ms);
  }

  kh::Channel& channel_;
  std::optional<DeviceInfo> device_;
  std::optional<std::string> cuda_error_;
  std::unique_ptr<KernelModule> module_;
  std::unique_ptr<KernelTimer> timer_;
  std::vector<void*> mapped_;
};

}  // namespace

int run_kernel_host(int device, pid_t parent) {
  kh::Protections protections;
  // Namespaces first: they need a single thread, and CUDA starts threads.
  kh::die_with_parent(protections, parent);
  const char* home = std::getenv("HOME");
  const std::filesystem::path scratch = home && *home ? home : std::filesystem::temp_directory_path();
  kh::enter_namespaces(protections, read_only_paths(scratch), user_home());
  kh::set_limits(protections);
  std::error_code ec;
  std::filesystem::current_path(scratch, ec);

  // The channel keeps the real stdout; fd 1 becomes stderr, so a candidate's
  // device printf (and any library's print) lands in the log, not in a frame.
  std::fflush(stdout);
  const int channel_out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (channel_out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("hiera-worker --kernel-host: cannot set up stdout");
    return 2;
  }

  std::optional<std::string> cuda_error;
  std::string reason;
  std::optional<DeviceInfo> info = CudaDevice::open(device, &reason);
  if (!info) {
    cuda_error = reason;
  } else {
    try {
      DriverApi::get();
    } catch (const std::exception& e) {
      cuda_error = e.what();
    }
  }
  kh::drop_privileges(protections);
  if (!engine::make_undumpable()) protections.missing("undumpable", "prctl(PR_SET_DUMPABLE) refused");
  kh::filter_syscalls(protections, kh::denied_syscalls());

  kh::Channel channel(STDIN_FILENO, channel_out);
  kh::Ready ready;
  ready.pid = ::getpid();
  ready.protections = protections.state();
  ready.cuda_error = cuda_error;
  try {
    channel.send(kh::to_json(ready));
  } catch (const kh::ChannelClosed&) {
    return 0;
  }
  Server server(channel, std::move(info), std::move(cuda_error));
  const int code = server.serve();
  std::_Exit(code);  // skip the runtime's teardown: the driver frees the context
}

}  // namespace hiera::engine::worker
