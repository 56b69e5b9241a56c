#include "engine/worker/worker_service.h"

#include <iostream>
#include <sstream>

#include "engine/worker/cuda_device.h"
#include "engine/worker/cuda_failure.h"
#include "engine/worker/cuda_task.h"
#include "engine/worker/device_probe.h"
#include "engine/worker/native_evaluator.h"
#include "engine/worker/nvrtc_compiler.h"
#include "engine/worker/python_runner.h"
#include "hiera/version.h"

namespace hiera::engine::worker {

using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

constexpr int kExitRestart = 3;

// "0.1" of "0.1.0"; nullopt when the text is not a version.
std::optional<std::string> major_minor(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos || first == 0) return std::nullopt;
  const auto second = version.find('.', first + 1);
  const std::string prefix = version.substr(0, second);
  for (char c : prefix) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return std::nullopt;
  }
  if (prefix.size() == first + 1) return std::nullopt;
  return prefix;
}

const json& object_params(const json& params) {
  static const json empty = json::object();
  if (params.is_null()) return empty;
  if (!params.is_object()) throw RpcError(ErrorCode::InvalidParams, "params must be an object");
  return params;
}

json runner_died_evaluation(const std::string& message) {
  return {{"verdict", "failed"}, {"failures", json::array({{{"check", "runtime"}, {"message", message}}})}, {"trials", json::array()}};
}

}  // namespace

struct WorkerService::State {
  Options options;
  NvrtcCompiler compiler;
  bool device_tried = false;
  std::optional<DeviceInfo> device;
  std::string no_device_reason;
  std::optional<json> probe;
  std::optional<PythonEnvironment> python;
  std::optional<std::optional<std::string>> torch;  // looked up once
  std::unique_ptr<PythonRunner> runner;

  explicit State(Options o) : options(std::move(o)), compiler(options.cache_dir / "cubin") {}

  const DeviceInfo* open_device() {
    if (!device_tried) {
      device_tried = true;
      device = CudaDevice::open(options.device, &no_device_reason);
      if (device) {
        std::cerr << "hiera-worker: device " << device->index << ": " << device->name << " (" << device->arch() << ", "
                  << device->sm_count << " SMs)\n";
      } else {
        std::cerr << "hiera-worker: no CUDA device: " << no_device_reason << "\n";
      }
    }
    return device ? &*device : nullptr;
  }

  const DeviceInfo& require_device() {
    if (const DeviceInfo* info = open_device()) return *info;
    throw RpcError(ErrorCode::InternalError, "no CUDA device: " + no_device_reason);
  }

  const PythonEnvironment& python_environment() {
    if (!python) python = resolve_python_environment(options.python);
    return *python;
  }
};

WorkerService::WorkerService(Options options) : state_(std::make_unique<State>(std::move(options))) {}

WorkerService::~WorkerService() = default;

json WorkerService::handle(const std::string& method, const json& raw_params) {
  const json& params = object_params(raw_params);
  State& s = *state_;

  if (method == "hello") {
    const auto engine = params.find("engine_version");
    if (engine == params.end() || !engine->is_string()) {
      throw RpcError(ErrorCode::InvalidParams, "hello needs engine_version, a string such as \"0.1.0\"");
    }
    const std::string engine_version = engine->get<std::string>();
    const auto engine_mm = major_minor(engine_version);
    if (!engine_mm || *engine_mm != *major_minor(kVersion)) {
      throw RpcError(ErrorCode::InvalidRequest, "engine version " + engine_version + " does not match worker version " +
                                                    std::string(kVersion) + " (major.minor must agree)");
    }
    json result = {{"worker_version", kVersion}};
    const DeviceInfo* device = s.open_device();
    result["cuda"] = device != nullptr;
    result["device"] = device ? json{{"index", device->index}, {"name", device->name}, {"cc", device->cc()}} : json(nullptr);
    if (!device) result["cuda_error"] = s.no_device_reason;
    const PythonEnvironment& python = s.python_environment();
    // With a GPU the runner starts before torch's version is asked, so the two
    // `import torch` (seconds each) overlap instead of adding up.
    const bool runner_started_here = device && !s.runner && !s.torch;
    if (runner_started_here) {
      s.runner = std::make_unique<PythonRunner>(python);
      s.runner->warm_up(kVersion);
    }
    if (!s.torch) s.torch = torch_version(python.python);
    result["pytorch"] = *s.torch ? json{{"python", python.python}, {"torch", **s.torch}} : json(nullptr);
    if (runner_started_here && !*s.torch) s.runner.reset();  // no torch: the runner cannot serve
    if (device && *s.torch && !s.runner) {
      s.runner = std::make_unique<PythonRunner>(python);
      s.runner->warm_up(kVersion);
    }
    return result;
  }

  if (method == "shutdown") {
    if (s.runner) s.runner->stop();
    exit_code_ = 0;
    return nullptr;
  }

  if (method == "compile") {
    const auto source = params.find("source");
    if (source == params.end() || !source->is_string()) throw RpcError(ErrorCode::InvalidParams, "compile needs source, a string");
    CompileRequest request;
    request.source = source->get<std::string>();
    if (auto options = params.find("options"); options != params.end() && !options->is_null()) {
      if (!options->is_array()) throw RpcError(ErrorCode::InvalidParams, "options must be an array of strings");
      for (const auto& option : *options) {
        if (!option.is_string()) throw RpcError(ErrorCode::InvalidParams, "options must be an array of strings");
        request.options.push_back(option.get<std::string>());
      }
    }
    if (auto arch = params.find("arch"); arch != params.end() && !arch->is_null()) {
      if (!arch->is_string()) throw RpcError(ErrorCode::InvalidParams, "arch must be a string such as \"sm_90\"");
      request.arch = arch->get<std::string>();
    } else {
      // The device's own architecture; sm_90 (the H200's) when there is no device.
      const DeviceInfo* device = s.open_device();
      request.arch = device ? device->arch() : "sm_90";
    }
    if (auto offset = params.find("line_offset"); offset != params.end() && !offset->is_null()) {
      if (!offset->is_number_integer() || offset->get<long long>() < 0 || offset->get<long long>() > 1000000) {
        throw RpcError(ErrorCode::InvalidParams, "line_offset must be a non-negative integer");
      }
      request.line_offset = offset->get<int>();
    }
    CompileResult result;
    try {
      result = s.compiler.compile(request);
    } catch (const CompileError& e) {
      throw RpcError(ErrorCode::InvalidParams, e.what());
    }
    json diagnostics = json::array();
    for (const auto& d : result.diagnostics) {
      diagnostics.push_back({{"line", d.line}, {"column", d.column}, {"severity", d.severity}, {"message", d.message}});
    }
    return {{"ok", result.ok}, {"cache_hit", result.cache_hit}, {"key", result.key}, {"log", result.log},
            {"diagnostics", diagnostics}, {"compile_ms", result.compile_ms}};
  }

  if (method == "probe") {
    const DeviceInfo& device = s.require_device();
    const bool refresh = params.value("refresh", false);
    try {
      s.probe = probe_device(device, s.options.cache_dir, refresh);
    } catch (const CudaFailure& failure) {
      if (failure.context_lost()) exit_code_ = kExitRestart;
      throw RpcError(ErrorCode::InternalError, std::string("probe failed: ") + failure.what());
    }
    return *s.probe;
  }

  if (method == "evaluate" || method == "profile" || method == "deliver" || method == "capture") {
    const auto task = params.find("task");
    if (task == params.end() || !task->is_object()) throw RpcError(ErrorCode::InvalidParams, "params.task must be an object");
    const std::string kind = task->value("kind", "");
    if (kind == "pytorch") {
      if (!s.runner) s.runner = std::make_unique<PythonRunner>(s.python_environment());
      auto answer = s.runner->call(method, params);
      if (auto* died = std::get_if<RunnerDied>(&answer)) {
        std::cerr << "hiera-worker: " << died->message << "\n";
        if (method == "evaluate") return runner_died_evaluation(died->message);
        if (method == "deliver") return {{"delivered_source", nullptr}, {"evaluation", runner_died_evaluation(died->message)}};
        throw RpcError(ErrorCode::InternalError, died->message);
      }
      json& response = std::get<json>(answer);
      if (response.contains("error")) {
        const json& error = response["error"];
        protocol::ResponseError forwarded;
        forwarded.code = static_cast<ErrorCode>(error.value("code", static_cast<int>(ErrorCode::InternalError)));
        forwarded.message = error.value("message", "the Python runner failed");
        if (error.contains("data")) {
          json data = error["data"];
          if (data.is_object()) data.erase("restart");  // the runner's restart, handled here (see below)
          if (!(data.is_object() && data.empty())) forwarded.data = std::move(data);
        }
        throw ForwardedError(std::move(forwarded));
      }
      // The runner's "restart" concerned the runner, already restarted here;
      // from a worker, "restart" would tell the engine that the worker exits.
      json result = response["result"];
      if (result.is_object()) result.erase("restart");
      return result;
    }
    if (kind != "cuda") throw RpcError(ErrorCode::InvalidParams, "task.kind must be \"cuda\" or \"pytorch\", got \"" + kind + "\"");
    if (method == "capture") return {{"graph", nullptr}};  // a CUDA kernel has no module graph to capture
    try {
      parse_cuda_task(*task);  // a malformed task is the caller's error, GPU or not
    } catch (const ContractError& e) {
      throw RpcError(ErrorCode::InvalidParams, e.what());
    }
    const DeviceInfo& device = s.require_device();
    NativeEvaluator evaluator(device, s.compiler, [&s, &device]() -> std::optional<GpuCeilings> {
      try {
        if (!s.probe) s.probe = probe_device(device, s.options.cache_dir, false);
        return ceilings_from_probe(*s.probe);
      } catch (const std::exception& e) {
        std::cerr << "hiera-worker: probe failed: " << e.what() << "\n";
        return std::nullopt;
      }
    });
    if (method == "profile") {
      try {
        return evaluator.profile(params);
      } catch (const ContextLost& lost) {
        exit_code_ = kExitRestart;
        throw RpcError(ErrorCode::InternalError, std::string(lost.what()) + " (the CUDA context is lost; this worker exits to be restarted)");
      }
    }
    json result = evaluator.evaluate(params);
    if (result.value("restart", false)) exit_code_ = kExitRestart;
    if (method == "deliver") {
      // A CUDA kernel's delivered form is its source (it needs only the CUDA
      // toolkit), so its verification in that form is the evaluation itself.
      json delivery = {{"delivered_source", task->at("candidate").at("source")}};
      if (result.contains("restart")) {
        delivery["restart"] = result["restart"];
        result.erase("restart");
      }
      delivery["evaluation"] = std::move(result);
      return delivery;
    }
    return result;
  }

  throw RpcError(ErrorCode::MethodNotFound, "unknown method '" + method + "'");
}

}  // namespace hiera::engine::worker
