#pragma once
// A CUDA evaluation task as the job protocol carries it ("kind": "cuda"):
// reference and candidate kernels, their launch contract and the numerics.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/worker/cuda_static_checks.h"
#include "engine/worker/launch_contract.h"
#include "engine/worker/output_checks.h"

namespace hiera::engine::worker {

struct KernelSource {
  std::string source;
  std::string kernel;  // a name or name expression ("saxpy", "scale<float>")
  std::vector<std::string> options;
};

struct Numerics {
  Tolerance tolerance;
  std::set<std::string> allow;  // "tf32", "fp16", "bf16", "fp8"
};

struct CudaTask {
  KernelSource reference;
  KernelSource candidate;
  LaunchContract contract;
  Numerics numerics;
};

// Throws ContractError (answered as InvalidParams) naming the bad field.
CudaTask parse_cuda_task(const nlohmann::json& task);

// What the static checks allow for this task: numerics.allow, plus the
// reduced-precision types the task's own arguments already use.
StaticCheckOptions static_check_options(const CudaTask& task);

}  // namespace hiera::engine::worker
