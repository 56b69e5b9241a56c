#pragma once
// A task spec as the worker's evaluate job takes it: the Task JSON of
// engine/eval/JOB_PROTOCOL.md ("kind": "pytorch" or "cuda"), with a reference
// and a candidate source. What the protocol cannot carry is stated where the
// conversion drops or coarsens it (worker_task.cpp).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/spec/kernel_contract.h"
#include "engine/spec/task_spec.h"

namespace hiera::engine::spec {

// What the candidate changes besides its source.
struct CandidateTask {
  std::string kernel;            // CUDA: the candidate's kernel (name expression); empty: the reference's
  std::optional<Launch> launch;  // CUDA: the candidate's launch; empty: the reference's
  std::vector<std::string> reference_options;  // CUDA: NVRTC options
  std::vector<std::string> candidate_options;
  std::string device = "cuda";  // PyTorch: "cuda" or "cpu"
};

// Throws SpecError when the spec lacks what the task needs (a CUDA target
// without arguments or a launch).
nlohmann::json to_worker_task(const TaskSpec& spec, const std::string& reference_source,
                              const std::string& candidate_source, const CandidateTask& candidate = {});

// The one atol/rtol a task carries (the protocol has no per-output tolerance):
// the loosest over the output dtypes present, each dtype's own value or else
// the default for it (engine/common/default_tolerance.h: 1e-2 for float16/bfloat16,
// 1e-4 otherwise).
// When the output dtypes are unknown (a module not probed yet): nullopt for a
// tolerance that is still the default (the worker then applies its per-dtype
// defaults itself), else the loosest value the clause lists.
std::optional<double> task_tolerance(const TaskSpec& spec, const char* clause);

// PyTorch: a Python expression, evaluated in the reference module's namespace,
// that returns get_inputs() with the module-level sizes set to the spec's
// second sizes (and restores them after); nullopt without second sizes.
std::optional<std::string> second_inputs_expression(const TaskSpec& spec);

}  // namespace hiera::engine::spec
