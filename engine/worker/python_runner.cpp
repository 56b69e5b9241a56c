#include "engine/worker/python_runner.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <sys/wait.h>
#include <unistd.h>

#include "protocol/json_text.h"
#include "protocol/message.h"

namespace hiera::worker {

using nlohmann::json;

namespace {

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

PythonEnvironment resolve_python_environment(const std::optional<std::string>& explicit_python) {
  PythonEnvironment environment;
  if (const char* path = std::getenv("HIERA_PYTHONPATH"); path && *path) {
    environment.pythonpath = path;
  } else {
    environment.pythonpath = std::string(HIERA_SOURCE_DIR) + "/engine/worker/python";
  }
  if (explicit_python && !explicit_python->empty()) {
    environment.python = *explicit_python;
    return environment;
  }
  const std::string finder = std::string(HIERA_SOURCE_DIR) + "/scripts/find-torch-python";
  std::error_code ec;
  if (std::filesystem::exists(finder, ec)) {
    if (auto found = capture_output({finder}, std::chrono::seconds(120))) {
      environment.python = trim(*found);
      if (!environment.python.empty()) return environment;
    }
  }
  environment.python = "python3";
  return environment;
}

std::optional<std::string> torch_version(const std::string& python) {
  auto out = capture_output({python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"}, std::chrono::seconds(120));
  if (!out || out->empty()) return std::nullopt;
  return trim(*out);
}

PythonRunner::PythonRunner(PythonEnvironment environment) : environment_(std::move(environment)) {}

PythonRunner::~PythonRunner() { stop(); }

void PythonRunner::start() {
  std::cerr << "hiera-worker: starting the Python runner: " << environment_.python
            << " -m hiera_runner (PYTHONPATH=" << environment_.pythonpath << ")\n";
  std::string pythonpath = environment_.pythonpath;
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing) pythonpath += std::string(":") + existing;
  child_ = spawn_child({environment_.python, "-m", "hiera_runner"},
                       {{"PYTHONPATH", pythonpath}, {"PYTHONUNBUFFERED", "1"}});
  reader_ = protocol::FrameReader();
}

bool PythonRunner::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(child_.stdin_fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

RunnerDied PythonRunner::died(const std::string& while_doing) {
  const int status = stop_child(child_, std::chrono::seconds(5));
  return RunnerDied{"the Python runner " + describe_wait_status(status) + " " + while_doing};
}

std::variant<json, RunnerDied> PythonRunner::call(const std::string& method, const json& params) {
  if (child_.pid >= 0) {
    // A runner that ended between jobs (idle crash, exit after a reply) is replaced, not blamed on this job.
    int status = 0;
    if (::waitpid(child_.pid, &status, WNOHANG) == child_.pid) {
      std::cerr << "hiera-worker: the Python runner " << describe_wait_status(status) << " between jobs\n";
      child_.pid = -1;
      stop_child(child_, std::chrono::milliseconds(0));
    }
  }
  if (child_.pid < 0) {
    try {
      start();
    } catch (const std::exception& e) {
      return RunnerDied{std::string("the Python runner could not start: ") + e.what()};
    }
  }
  const long long id = next_id_++;
  const json request = protocol::to_json(protocol::Request{protocol::RequestId(id), method, params});
  if (!write_all(protocol::FrameWriter::encode(protocol::dump_json(request)))) return died("before it read the job");
  char buffer[64 * 1024];
  for (;;) {
    while (auto event = reader_.next()) {
      if (auto* error = std::get_if<protocol::FramingError>(&*event)) {
        std::cerr << "hiera-worker: the Python runner wrote a bad frame: " << error->message << "\n";
        continue;
      }
      auto parsed = protocol::parse_message(std::get<protocol::Frame>(*event).body);
      auto* message = std::get_if<protocol::Message>(&parsed);
      auto* response = message ? std::get_if<protocol::Response>(message) : nullptr;
      if (!response) {
        std::cerr << "hiera-worker: ignoring a message from the Python runner that is not a response\n";
        continue;
      }
      if (!(response->id == protocol::RequestId(id))) continue;  // a late answer to an older job
      const json answer = protocol::to_json(*response);
      // "restart": true in a result, or in an error's data: the runner exits
      // after this answer, so it is stopped here and started afresh next time.
      const json* carrier = response->ok() ? &std::get<json>(response->result)
                                           : (std::get<protocol::ResponseError>(response->result).data
                                                  ? &*std::get<protocol::ResponseError>(response->result).data
                                                  : nullptr);
      const bool restart = carrier && carrier->is_object() && carrier->value("restart", false);
      if (restart) {
        std::cerr << "hiera-worker: the Python runner asked to be restarted\n";
        stop_child(child_, std::chrono::seconds(5));
      }
      return answer;
    }
    const ssize_t n = ::read(child_.stdout_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died("during the job");
    reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

void PythonRunner::stop() {
  if (child_.pid < 0) return;
  const json request = protocol::to_json(protocol::Request{protocol::RequestId(next_id_++), "shutdown", json::object()});
  write_all(protocol::FrameWriter::encode(request.dump()));
  stop_child(child_, std::chrono::seconds(5));
}

}  // namespace hiera::worker
