// hiera-worker: the GPU evaluation process, the only hiera program that loads
// the CUDA libraries. It serves the job protocol (engine/eval/JOB_PROTOCOL.md)
// on stdin/stdout; logs go to stderr.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "engine/common/process_protection.h"
#include "engine/worker/job_server.h"
#include "engine/worker/kernel_host_main.h"
#include "engine/worker/worker_service.h"
#include "hiera/version.h"

namespace {

std::filesystem::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "hiera";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "hiera";
  return std::filesystem::temp_directory_path() / "hiera-cache";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hiera-worker: GPU evaluation worker (the job protocol on stdin/stdout)"};
  app.set_version_flag("--version", std::string("hiera-worker ") + hiera::kVersion);
  int device = 0;
  std::string cache_dir;
  std::string python;
  app.add_option("--device", device, "CUDA device index")->check(CLI::NonNegativeNumber);
  app.add_option("--cache-dir", cache_dir, "cache directory (default $XDG_CACHE_HOME/hiera or ~/.cache/hiera)");
  app.add_option("--python", python, "python3 for PyTorch jobs (default: scripts/find-torch-python)");
  bool kernel_host = false;
  int parent = 0;
  app.add_flag("--kernel-host", kernel_host, "run one CUDA candidate for the worker --parent (started by the worker itself)");
  app.add_option("--parent", parent, "the worker's pid (with --kernel-host)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  // The host makes itself undumpable after its user namespace's maps are written (they need it dumpable).
  if (kernel_host) return hiera::engine::worker::run_kernel_host(device, parent);
  // exec made us dumpable again: a candidate of the same user must not read our memory or attach to us.
  hiera::engine::make_undumpable();

  // A runner that dies while we write to it must not take the worker with it.
  std::signal(SIGPIPE, SIG_IGN);
  // The protocol owns the real stdout; fd 1 becomes stderr, so a stray print
  // from any library (CUDA, cuBLAS, CUPTI) lands in the log, not in a frame.
  std::fflush(stdout);
  const int protocol_out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol_out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("hiera-worker: cannot set up stdout");
    return 2;
  }

  hiera::engine::worker::WorkerService::Options options;
  options.device = device;
  options.cache_dir = cache_dir.empty() ? default_cache_dir() : std::filesystem::path(cache_dir);
  if (!python.empty()) options.python = python;
  std::cerr << "hiera-worker " << hiera::kVersion << ": device " << device << ", cache " << options.cache_dir.string() << "\n";

  int code = 0;
  {
    hiera::engine::worker::WorkerService service(options);
    code = hiera::engine::worker::serve_jobs(STDIN_FILENO, protocol_out, service);
    if (code == 3) {
      // The CUDA context is lost (or a kernel still runs): skip the runtime's
      // teardown, which could wait on it; the kernel driver frees the GPU.
      std::cerr << "hiera-worker: exiting for a restart\n";
      std::_Exit(3);
    }
  }
  return code;
}
