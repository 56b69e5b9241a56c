#pragma once
// The first phase of a run: what is known of the reference before any plan.
// The task spec from configuration and annotations, the device's ceilings
// (probed, or the knowledge's datasheet without a GPU), the reference timed
// against itself (the baseline), its profile as regions for the planner, and
// (PyTorch, unless measure only) its forward captured as an op graph.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/kernel_profile.h"
#include "engine/eval/evaluation_client.h"
#include "engine/graph/op_graph.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/run_context.h"
#include "engine/plan/regions.h"
#include "engine/plan/roofline.h"
#include "engine/propose/reference_profile.h"
#include "engine/spec/spec_builder.h"

namespace hiera::engine::optimize {

struct ReferenceFacts {
  spec::SpecInputs spec_inputs;        // what build_spec was given (the probe's facts join in make_run_plan)
  spec::TaskSpec first_spec;           // the spec before those facts: the reference's own jobs ran on it
  GpuCeilings ceilings;
  std::string device = "cpu";          // "cuda" when the probe found a GPU
  std::string torch_version;           // the workers' torch, as their handshake named it ("" unknown)
  std::string reference_source;        // Target::reference_source()
  eval::EvaluateOptions evaluate_options;  // the options' trials, seed, timeout, cancellation
  nlohmann::json baseline_task;        // the reference against itself
  double reference_ms = 0.0;           // the baseline's median
  std::vector<plan::Region> regions;   // from the profile; one whole-module region without one
  // The worker's profile as the prompt shows it (counters, kernels); no regions yet: the plan places them.
  propose::ReferenceProfile profile;
  std::optional<graph::OpGraph> op_graph;  // PyTorch: the captured forward (captured() or its fallback)
};

// Everything above, in order, with its records (result.gpu, reference_timing,
// reference_profile, the run log's probe, baseline, profile and capture
// events; decisions) and the engine phases probe, reference_baseline,
// reference_profile and capture. Ends the run (Outcome::Error) when the spec
// has errors, no GPU can be probed and the knowledge has no target_gpu, or the
// reference does not pass against itself. Throws Cancelled.
PhaseResult<ReferenceFacts> measure_reference(RunContext& run, eval::EvaluationClient& client,
                                              const knowledge::KnowledgeBase& knowledge);

// The steps of measure_reference, each on its own.
// build_spec's errors as one ending ("the task spec has errors: ..."), or none.
std::optional<Ending> spec_errors(const spec::SpecBuildResult& built);
// The probe's ceilings (or the datasheet's); sets result.gpu and facts.device.
std::optional<Ending> probe_device(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                                   ReferenceFacts& facts);
// The baseline: sets result.reference_timing and facts.reference_ms.
std::optional<Ending> time_baseline(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts);
// facts.regions (never empty) and facts.profile from the worker's profile.
void profile_reference(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts);
// facts.op_graph from the capture job, when the worker sent one that parses.
void capture_op_graph(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts);
// The worker's profile (ProfileResult::profile) as the prompt's counters and kernels.
propose::ReferenceProfile prompt_profile(const KernelProfile& worker_profile);

}  // namespace hiera::engine::optimize
