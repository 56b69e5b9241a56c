#pragma once
// The persistent child `python3 -m hiera_runner` that runs PyTorch jobs. It
// speaks the job protocol on its stdio; the worker forwards each `kind:
// "pytorch"` request to it and relays the answer. A runner that dies
// mid-job, or answers with "restart": true, is stopped; the job is reported
// as failed, and the next PyTorch job starts a fresh runner.
#include <chrono>
#include <memory>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/common/child_process.h"
#include "protocol/framing.h"

namespace hiera::engine::worker {

struct PythonEnvironment {
  std::string python;      // the interpreter
  std::string pythonpath;  // the directory holding the hiera_runner package
};

// The interpreter: `explicit_python` when given, else what find-torch-python
// prints (the first python3 that imports torch), else "python3"; the finder
// installed beside `executable` (<prefix>/libexec/hiera/find-torch-python),
// else the source tree's scripts/find-torch-python. The package directory:
// $HIERA_PYTHONPATH, else the installed one (<prefix>/share/hiera/python, as
// `cmake --install` writes it, when it holds hiera_runner), else the source
// tree's engine/worker/python (a build tree). `executable` is this
// process's path; the one-argument form reads /proc/self/exe.
PythonEnvironment resolve_python_environment(const std::optional<std::string>& explicit_python,
                                             const std::filesystem::path& executable);
PythonEnvironment resolve_python_environment(const std::optional<std::string>& explicit_python);

// torch.__version__ of that interpreter, or nullopt when it cannot import torch.
std::optional<std::string> torch_version(const std::string& python);

struct RunnerDied {
  std::string message;  // "the Python runner died (exit status 1) during the job"
};

class PythonRunner {
 public:
  explicit PythonRunner(PythonEnvironment environment);
  ~PythonRunner();
  PythonRunner(const PythonRunner&) = delete;
  PythonRunner& operator=(const PythonRunner&) = delete;

  // Sends one request (starting the runner if needed) and waits for its
  // response: the whole JSON-RPC response message, or why there is none.
  std::variant<nlohmann::json, RunnerDied> call(const std::string& method, const nlohmann::json& params);
  // Starts the runner and sends it hello without waiting for the answer (call()
  // skips it): torch's import and the first candidate process's start then overlap
  // the engine's device probe instead of delaying the first PyTorch job.
  void warm_up(const std::string& engine_version);
  // Stops the runner (a shutdown request, then EOF, then SIGKILL).
  void stop();
  const PythonEnvironment& environment() const { return environment_; }

 private:
  void start();
  bool write_all(std::string_view bytes);
  RunnerDied died(const std::string& while_doing);
  // Closes the pipes (the runner exits at the end of its input), waits up to
  // grace, then kills it; reaps.
  engine::ExitStatus stop_runner(std::chrono::milliseconds grace);

  PythonEnvironment environment_;
  // Started with die_with_parent from the worker's main thread, which lives as long as the worker.
  std::unique_ptr<engine::ChildProcess> child_;
  int to_runner_ = -1;    // the runner's stdin
  int from_runner_ = -1;  // the runner's stdout
  protocol::FrameReader reader_;
  long long next_id_ = 1;
};

}  // namespace hiera::engine::worker
