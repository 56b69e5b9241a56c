#pragma once
// The job protocol's methods (engine/eval/JOB_PROTOCOL.md): hello, probe,
// compile, evaluate, profile, shutdown. CUDA jobs run here; `kind:
// "pytorch"` jobs go to the Python runner. The GPU is opened on first need,
// so a machine without one still answers hello (cuda: false) and compiles.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/message.h"

namespace hiera::engine::worker {

// An error answer passed through from the Python runner as it came.
class ForwardedError : public std::runtime_error {
 public:
  explicit ForwardedError(protocol::ResponseError error) : std::runtime_error(error.message), error_(std::move(error)) {}
  const protocol::ResponseError& error() const { return error_; }

 private:
  protocol::ResponseError error_;
};

class WorkerService {
 public:
  struct Options {
    int device = 0;
    std::filesystem::path cache_dir;
    std::optional<std::string> python;
  };

  explicit WorkerService(Options options);
  ~WorkerService();
  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  // The result of one request; throws protocol::RpcError or ForwardedError.
  nlohmann::json handle(const std::string& method, const nlohmann::json& params);
  // Set once the worker must end after its reply: 0 after shutdown, 3 after
  // the CUDA context was lost (the engine restarts the worker).
  std::optional<int> exit_code() const { return exit_code_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::optional<int> exit_code_;
};

}  // namespace hiera::engine::worker
