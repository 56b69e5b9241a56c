#include "engine/worker/python_runner.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include <unistd.h>

#include "protocol/json_text.h"
#include "protocol/message.h"

#if !defined(HIERA_INSTALL_PYTHONDIR) || !defined(HIERA_INSTALL_FINDER)
#error "HIERA_INSTALL_PYTHONDIR and HIERA_INSTALL_FINDER name the installed runner and finder (CMakeLists.txt sets them)"
#endif

namespace hiera::engine::worker {

using nlohmann::json;

namespace {

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

// The stdout of a short command (locating python, asking torch's version), or
// nullopt when it cannot start, fails or runs too long. Its stderr goes to
// ours, so what went wrong reaches the engine's log.
std::optional<std::string> output_of(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  engine::SpawnOptions options;
  options.stderr_mode = engine::SpawnOptions::Stderr::Inherited;
  options.die_with_parent = true;
  try {
    auto run = engine::run_to_completion(argv, "", timeout, options);
    if (run.timed_out || run.status.code != 0) return std::nullopt;
    return std::move(run.out);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

static std::filesystem::path installed_file(const std::filesystem::path& executable, const std::filesystem::path& relative) {
  if (executable.empty()) return {};
  // <prefix>/bin/hiera-worker → <prefix>/<relative> (GNUInstallDirs' layout, as `cmake --install` writes it).
  const auto candidate = (executable.parent_path() / ".." / relative).lexically_normal();
  std::error_code ec;
  return std::filesystem::exists(candidate, ec) ? candidate : std::filesystem::path();
}

PythonEnvironment resolve_python_environment(const std::optional<std::string>& explicit_python,
                                             const std::filesystem::path& executable) {
  PythonEnvironment environment;
  if (const char* path = std::getenv("HIERA_PYTHONPATH"); path && *path) {
    environment.pythonpath = path;
  } else if (const auto installed = installed_file(executable, HIERA_INSTALL_PYTHONDIR);
             !installed.empty() && std::filesystem::exists(installed / "hiera_runner" / "__main__.py")) {
    environment.pythonpath = installed.string();
  } else {
    environment.pythonpath = std::string(HIERA_SOURCE_DIR) + "/engine/worker/python";
  }
  if (explicit_python && !explicit_python->empty()) {
    environment.python = *explicit_python;
    return environment;
  }
  std::string finder = installed_file(executable, HIERA_INSTALL_FINDER).string();
  if (finder.empty()) finder = std::string(HIERA_SOURCE_DIR) + "/scripts/find-torch-python";
  std::error_code ec;
  if (std::filesystem::exists(finder, ec)) {
    if (auto found = output_of({finder}, std::chrono::seconds(120))) {
      environment.python = trim(*found);
      if (!environment.python.empty()) return environment;
    }
  }
  environment.python = "python3";
  return environment;
}

PythonEnvironment resolve_python_environment(const std::optional<std::string>& explicit_python) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return resolve_python_environment(explicit_python, ec ? std::filesystem::path() : self);
}

std::optional<std::string> torch_version(const std::string& python) {
  auto out = output_of({python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"}, std::chrono::seconds(120));
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
  engine::SpawnOptions options;
  options.extra_env = {{"PYTHONPATH", pythonpath}, {"PYTHONUNBUFFERED", "1"}};
  options.stderr_mode = engine::SpawnOptions::Stderr::Inherited;  // its logs join ours
  options.own_process_group = false;  // signals to the worker's group reach it too
  options.die_with_parent = true;     // a killed worker leaves no runner holding the GPU
  child_ = std::make_unique<engine::ChildProcess>(std::vector<std::string>{environment_.python, "-m", "hiera_runner"},
                                                  options);
  to_runner_ = child_->take_stdin();
  from_runner_ = child_->take_stdout();
  reader_ = protocol::FrameReader();
}

void PythonRunner::warm_up(const std::string& engine_version) {
  if (child_) return;
  try {
    start();
  } catch (const std::exception& e) {
    std::cerr << "hiera-worker: the Python runner could not start ahead of its first job: " << e.what() << "\n";
    return;  // the first job starts it again and reports why it cannot
  }
  const json params = {{"engine_version", engine_version}};
  const json request = protocol::to_json(protocol::Request{protocol::RequestId(next_id_++), "hello", params});
  if (!write_all(protocol::FrameWriter::encode(protocol::dump_json(request)))) stop_runner(std::chrono::milliseconds(0));
}

bool PythonRunner::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(to_runner_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

RunnerDied PythonRunner::died(const std::string& while_doing) {
  const engine::ExitStatus status = stop_runner(std::chrono::seconds(5));
  return RunnerDied{"the Python runner died (" + status.describe() + ") " + while_doing};
}

engine::ExitStatus PythonRunner::stop_runner(std::chrono::milliseconds grace) {
  close_fd(to_runner_);
  close_fd(from_runner_);
  if (!child_) return engine::ExitStatus{};
  std::optional<engine::ExitStatus> status = child_->wait_for(grace);
  if (!status) status = child_->kill();
  child_.reset();
  return *status;
}

std::variant<json, RunnerDied> PythonRunner::call(const std::string& method, const json& params) {
  if (child_) {
    // A runner that ended between jobs (idle crash, exit after a reply) is replaced, not blamed on this job.
    if (auto status = child_->wait_for(std::chrono::milliseconds(0))) {
      std::cerr << "hiera-worker: the Python runner ended (" << status->describe() << ") between jobs\n";
      stop_runner(std::chrono::milliseconds(0));
    }
  }
  if (!child_) {
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
        stop_runner(std::chrono::seconds(5));
      }
      return answer;
    }
    const ssize_t n = ::read(from_runner_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return died("during the job");
    reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

void PythonRunner::stop() {
  if (!child_) return;
  const json request = protocol::to_json(protocol::Request{protocol::RequestId(next_id_++), "shutdown", json::object()});
  write_all(protocol::FrameWriter::encode(request.dump()));
  stop_runner(std::chrono::seconds(5));
}

}  // namespace hiera::engine::worker
