#include "server/features/optimizer_settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace hiera::server {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& setting, const std::string& what) {
  throw std::invalid_argument("hiera settings: " + setting + " " + what);
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string string_at(const json& object, const char* key, const std::string& setting) {
  const json* value = member(object, key);
  if (!value) return "";
  if (!value->is_string()) bad(setting, "must be a string");
  return value->get<std::string>();
}

}  // namespace

engine::optimize::OptimizerSetupArgs optimizer_args_from_settings(const json& settings,
                                                                  const std::filesystem::path& document_dir) {
  engine::optimize::OptimizerSetupArgs args;
  // No worker.command, specs or count: one worker per visible GPU (CUDA_VISIBLE_DEVICES respected), as hiera optimize.
  if (const json* worker = member(settings, "worker")) {
    if (!worker->is_object()) bad("worker", "must be an object");
    if (const json* command = member(*worker, "command")) {
      if (!command->is_array() || command->empty() ||
          !std::all_of(command->begin(), command->end(), [](const json& w) { return w.is_string(); }) ||
          command->front().get<std::string>().empty()) {
        bad("worker.command", "must be a non-empty list of strings (the worker's argv)");
      }
      args.worker_argv.push_back(command->get<std::vector<std::string>>());
    }
    // More workers, as `--worker` takes them: ssh://host, slurm:partition,gres=gpu:2, or a command line.
    if (const json* specs = member(*worker, "specs")) {
      if (!specs->is_array() || !std::all_of(specs->begin(), specs->end(), [](const json& w) {
            return w.is_string() && !w.get<std::string>().empty();
          })) {
        bad("worker.specs", "must be a list of worker specs (ssh://host, slurm:..., or a command line)");
      }
      args.workers = specs->get<std::vector<std::string>>();
    }
    if (const json* device = member(*worker, "device")) {
      // "": unset (a client's default), as no setting
      if (!device->is_string() || (*device != "gpu" && *device != "cpu" && *device != "")) {
        bad("worker.device", "must be \"gpu\" (a GPU worker, the default) or \"cpu\" (a CPU run), not " + device->dump());
      }
      args.device = device->get<std::string>();
    }
    if (const json* count = member(*worker, "count")) {
      if (!count->is_number_integer() || count->get<int>() < 1 || count->get<int>() > 64) {
        bad("worker.count", "must be an integer from 1 to 64 (copies of the default worker)");
      }
      args.worker_count = count->get<int>();
    }
  }
  std::string gpu = string_at(settings, "gpu", "gpu");
  std::transform(gpu.begin(), gpu.end(), gpu.begin(), [](unsigned char c) { return std::tolower(c); });
  args.target_gpu = gpu;

  if (const json* llm = member(settings, "llm")) {
    if (!llm->is_object()) bad("llm", "must be an object");
    const std::string base_url = string_at(*llm, "endpoint", "llm.endpoint");
    const std::string model = string_at(*llm, "model", "llm.model");
    if (base_url.empty() && model.empty()) {
      args.llm = "none";
    } else {
      if (base_url.empty()) bad("llm.endpoint", "is required with llm.model");
      if (model.empty()) bad("llm.model", "is required with llm.endpoint");
      json endpoint = {{"name", "settings"}, {"provider", string_at(*llm, "provider", "llm.provider")}, {"base_url", base_url},
                       {"model", model}};
      if (endpoint["provider"] == "") endpoint["provider"] = "openai";
      const std::string key_env = string_at(*llm, "apiKeyEnv", "llm.apiKeyEnv");
      if (!key_env.empty()) endpoint["api_key_env"] = key_env;
      if (const json* retries = member(*llm, "maxRetries")) endpoint["max_retries"] = *retries;
      try {
        args.endpoint = engine::propose::llm::parse_endpoint(endpoint);
      } catch (const std::exception& e) {
        bad("llm", std::string("is not a usable endpoint: ") + e.what());
      }
    }
  } else {
    args.llm = "none";
  }

  if (const json* budget = member(settings, "budget")) {
    if (!budget->is_object()) bad("budget", "must be an object");
    if (const json* candidates = member(*budget, "candidates")) {
      if (!candidates->is_number_integer() || candidates->get<std::int64_t>() < 1 || candidates->get<std::int64_t>() > 100000) {
        bad("budget.candidates", "must be an integer from 1 to 100000");
      }
      args.budget = candidates->get<int>();
    }
    if (const json* minutes = member(*budget, "minutes")) {
      if (!minutes->is_number() || !(minutes->get<double>() > 0) || !std::isfinite(minutes->get<double>())) {
        bad("budget.minutes", "must be a positive number");
      }
      args.time_limit_s = minutes->get<double>() * 60.0;
    }
  }
  std::filesystem::path runs = string_at(settings, "runsDir", "runsDir");
  if (runs.empty()) runs = ".hiera/runs";
  args.runs_dir = (runs.is_absolute() ? runs : document_dir / runs).lexically_normal().string();
  return args;
}

}  // namespace hiera::server
