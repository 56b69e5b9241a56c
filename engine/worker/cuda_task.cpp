#include "engine/worker/cuda_task.h"

#include <nlohmann/json.hpp>

namespace hiera::engine::worker {

using nlohmann::json;

namespace {

KernelSource parse_kernel(const json& task, const char* which, bool required) {
  auto it = task.find(which);
  if (it == task.end() || it->is_null()) {
    if (required) throw ContractError(std::string("task.") + which + " is missing");
    return {};
  }
  if (!it->is_object()) throw ContractError(std::string("task.") + which + " must be an object with source and kernel");
  KernelSource kernel;
  auto source = it->find("source");
  if (source == it->end() || !source->is_string()) throw ContractError(std::string("task.") + which + ".source must be a string");
  kernel.source = source->get<std::string>();
  auto name = it->find("kernel");
  if (name == it->end() || !name->is_string() || name->get<std::string>().empty()) {
    throw ContractError(std::string("task.") + which + ".kernel must name the kernel to launch");
  }
  kernel.kernel = name->get<std::string>();
  if (auto options = it->find("options"); options != it->end() && !options->is_null()) {
    if (!options->is_array()) throw ContractError(std::string("task.") + which + ".options must be an array of strings");
    for (const auto& option : *options) {
      if (!option.is_string()) throw ContractError(std::string("task.") + which + ".options must be an array of strings");
      kernel.options.push_back(option.get<std::string>());
    }
  }
  return kernel;
}

double tolerance_field(const json& numerics, const char* key, double fallback) {
  auto it = numerics.find(key);
  if (it == numerics.end() || it->is_null()) return fallback;
  if (!it->is_number() || it->get<double>() < 0.0) throw ContractError(std::string("task.numerics.") + key + " must be a non-negative number");
  return it->get<double>();
}

}  // namespace

CudaTask parse_cuda_task(const json& task) {
  if (!task.is_object()) throw ContractError("task must be an object");
  CudaTask parsed;
  parsed.reference = parse_kernel(task, "reference", true);
  parsed.candidate = parse_kernel(task, "candidate", true);
  auto contract = task.find("contract");
  if (contract == task.end()) throw ContractError("task.contract is missing");
  parsed.contract = parse_launch_contract(*contract);
  if (auto numerics = task.find("numerics"); numerics != task.end() && !numerics->is_null()) {
    if (!numerics->is_object()) throw ContractError("task.numerics must be an object");
    parsed.numerics.tolerance.atol = tolerance_field(*numerics, "atol", parsed.numerics.tolerance.atol);
    parsed.numerics.tolerance.rtol = tolerance_field(*numerics, "rtol", parsed.numerics.tolerance.rtol);
    if (auto allow = numerics->find("allow"); allow != numerics->end() && !allow->is_null()) {
      if (!allow->is_array()) throw ContractError("task.numerics.allow must be an array of strings");
      for (const auto& item : *allow) {
        if (!item.is_string()) throw ContractError("task.numerics.allow must be an array of strings");
        parsed.numerics.allow.insert(item.get<std::string>());
      }
    }
  }
  return parsed;
}

StaticCheckOptions static_check_options(const CudaTask& task) {
  const auto& allow = task.numerics.allow;
  StaticCheckOptions options;
  options.allow_fp16 = allow.count("fp16") || allow.count("float16");
  options.allow_bf16 = allow.count("bf16") || allow.count("bfloat16");
  options.allow_tf32 = allow.count("tf32") > 0;
  options.allow_fp8 = allow.count("fp8") > 0;
  for (const auto& arg : task.contract.args) {
    options.allow_fp16 = options.allow_fp16 || arg.type == ScalarType::Float16;
    options.allow_bf16 = options.allow_bf16 || arg.type == ScalarType::BFloat16;
  }
  return options;
}

}  // namespace hiera::engine::worker
