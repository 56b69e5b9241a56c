#include "engine/optimize/reference_facts.h"

#include "engine/knowledge/probe_check.h"
#include "engine/propose/prompt_builder.h"
#include "engine/spec/kernel_annotation_lines.h"

namespace hiera::engine::optimize {

using nlohmann::json;

std::optional<Ending> spec_errors(const spec::SpecBuildResult& built) {
  if (built.ok()) return std::nullopt;
  std::string text;
  for (const auto& e : built.problems) text += (text.empty() ? "" : "; ") + e.to_string();
  return Ending{Outcome::Error, "the task spec has errors: " + text};
}

std::optional<Ending> probe_device(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                                   ReferenceFacts& facts) {
  OptimizeResult& result = run.result;
  run.report("probe", "probing the worker's device");
  run.clock.enter("probe");
  const eval::DeviceProbe probe = client.probe({false, std::chrono::minutes(5), run.cancel, std::nullopt});
  run.clock.leave();
  throw_if_cancelled(run.cancel);
  if (probe.ok()) {
    result.gpu = probe.name;
    facts.ceilings = plan::ceilings_from_probe(probe.copy_gbs, probe.gemm_tflops, probe.name);
    if (const auto* gpu = knowledge.find_gpu(probe.name)) {
      for (const auto& deviation : knowledge::check_against_probe(*gpu, probe.copy_gbs, probe.gemm_tflops)) {
        run.decide("probe check: " + deviation.message);
      }
    }
  } else {
    const knowledge::GpuSpec* gpu = knowledge.gpu(run.options.target_gpu);
    result.gpu = "cpu";
    if (!gpu) {
      return Ending{Outcome::Error, "no GPU to probe (" + probe.job_failure->message + ") and no knowledge GPU '" +
                                        run.options.target_gpu + "' for estimates"};
    }
    facts.ceilings = plan::ceilings_from_spec(*gpu);
    run.decide("no GPU probe (" + probe.job_failure->message + "): the roofline uses the " + gpu->name +
               " datasheet; times are measured where the worker runs");
  }
  facts.device = probe.ok() ? "cuda" : "cpu";
  if (const auto versions = client.torch_versions(); !versions.empty()) facts.torch_version = versions.front();
  run.log->write("probe", {{"ok", probe.ok()}, {"gpu", result.gpu}, {"ceilings", plan::describe(facts.ceilings)}});
  return std::nullopt;
}

std::optional<Ending> time_baseline(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts) {
  const OptimizeOptions& options = run.options;
  run.report("reference", "timing the reference");
  facts.reference_source = options.target.reference_source();
  eval::EvaluateOptions& evaluate_options = facts.evaluate_options;
  evaluate_options.trials = options.trials;
  evaluate_options.timing_trials = options.timing_trials;
  evaluate_options.seed = options.seed;
  evaluate_options.timeout = options.evaluate_timeout;
  evaluate_options.cancel = run.cancel;
  facts.baseline_task = candidate_task(facts.first_spec, facts.reference_source, options.target.reference_as_candidate(), "",
                                       facts.device);
  run.clock.enter("reference_baseline");
  const eval::Evaluation baseline = client.evaluate(facts.baseline_task, evaluate_options);
  run.clock.leave();
  run.clock.reference(baseline);
  throw_if_cancelled(run.cancel);
  run.log->write("baseline", evaluation_json(baseline));
  if (!baseline.passed() || !baseline.timing) {
    std::string why = baseline.failures.empty() ? "no timing" : failure_text(baseline.failures.front());
    return Ending{Outcome::Error, "the reference does not run under the verification harness: " + why};
  }
  run.result.reference_timing = baseline.timing;
  facts.reference_ms = baseline.timing->reference.median_ms;
  return std::nullopt;
}

propose::ReferenceProfile prompt_profile(const KernelProfile& worker_profile) {
  propose::ReferenceProfile out;
  if (worker_profile.counters) {
    out.counters = propose::ReferenceProfile::Counters{worker_profile.counters->dram_throughput_pct,
                                                       worker_profile.counters->sm_throughput_pct,
                                                       worker_profile.counters->achieved_occupancy_pct};
  }
  for (const ProfiledKernel& k : worker_profile.kernels) {
    if (out.kernels.size() == static_cast<std::size_t>(propose::kPromptKernels)) break;  // all the prompt shows
    out.kernels.push_back({k.name, k.calls, static_cast<double>(k.mean_ns)});
  }
  return out;
}

void profile_reference(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts) {
  OptimizeResult& result = run.result;
  run.report("profile", "profiling the reference");
  run.clock.enter("reference_profile");
  const eval::ProfileResult profile = client.profile(facts.baseline_task, "reference", facts.evaluate_options);
  run.clock.leave();
  throw_if_cancelled(run.cancel);
  plan::TaskWork work;
  work.module_ms = facts.reference_ms;
  work.runs = run.options.target.kind == spec::TargetKind::Pytorch ? 5 : 1;
  std::vector<plan::Region>& regions = facts.regions;
  if (profile.ok()) {
    result.reference_profile = profile.raw;
    result.profiled_calls = work.runs;
    std::string unreadable = profile.unreadable;
    if (profile.profile) {
      try {
        regions = plan::regions_from_profile(*profile.profile, work, facts.ceilings);
      } catch (const std::exception& e) {
        unreadable = e.what();
      }
    }
    if (!unreadable.empty()) {
      run.decide("the reference's profile could not be read (" + unreadable + "): one whole-module region");
    }
  } else {
    run.decide("no profile of the reference (" + profile.job_failure->message + "): one whole-module region");
  }
  if (regions.empty()) {
    plan::Region module;
    module.name = "module";
    module.measured_ms = facts.reference_ms;
    module.launches = 1;
    module.pattern = "whole_module";
    regions.push_back(module);
  }
  run.log->write("profile", {{"ok", profile.ok()}, {"regions", regions.size()}, {"worker_profile", profile.raw}});
  if (profile.profile) facts.profile = prompt_profile(*profile.profile);
}

void capture_op_graph(RunContext& run, eval::EvaluationClient& client, ReferenceFacts& facts) {
  run.report("capture", "capturing the reference's op graph");
  run.clock.enter("capture");
  const eval::CaptureResult capture = client.capture(facts.baseline_task, facts.evaluate_options);
  run.clock.leave();
  throw_if_cancelled(run.cancel);
  std::optional<graph::OpGraph>& op_graph = facts.op_graph;
  if (!capture.ok()) {
    run.decide("no op graph of the reference (" + capture.job_failure->message + ")");
  } else if (!capture.graph.is_null()) {
    try {
      op_graph = graph::parse_op_graph(capture.graph);
      if (!op_graph->captured()) {
        run.decide("the reference could not be captured as an op graph: " + op_graph->fallback +
                   " (whole-module rewrites only)");
      } else {
        run.decide("op graph of the reference: " + std::to_string(op_graph->nodes.size()) + " nodes (" + op_graph->method +
                   ")");
      }
    } catch (const std::exception& e) {
      run.decide("the reference's op graph could not be read (" + std::string(e.what()) + ")");
      op_graph.reset();
    }
  }
  run.log->write("capture", {{"ok", capture.ok()}, {"graph", capture.graph}});
}

PhaseResult<ReferenceFacts> measure_reference(RunContext& run, eval::EvaluationClient& client,
                                              const knowledge::KnowledgeBase& knowledge) {
  const Target& target = run.options.target;
  ReferenceFacts facts;
  // The task spec from configuration and annotations (the probe's facts join in make_run_plan).
  run.report("spec", "reading the contract");
  facts.spec_inputs.target = run.result.target;
  facts.spec_inputs.kind = target.kind;
  facts.spec_inputs.source = target.source;
  facts.spec_inputs.configuration = run.options.configuration;
  if (target.kind == spec::TargetKind::Cuda) {
    // The kernel's own annotations, not those of the file's other kernels (ANNOTATIONS.md).
    const spec::LineRange lines = spec::target_annotation_lines(target.source, target.symbol);
    facts.spec_inputs.first_line = lines.first;
    facts.spec_inputs.last_line = lines.last;
  }
  spec::SpecBuildResult built = spec::build_spec(facts.spec_inputs);
  if (auto ending = spec_errors(built)) return *ending;
  facts.first_spec = std::move(built.spec);
  // The device, the reference against itself, its profile, its op graph (PyTorch tasks): what the
  // knowledge proposer rewrites. Without one it still has whole-module rewrites.
  if (auto ending = probe_device(run, client, knowledge, facts)) return *ending;
  if (auto ending = time_baseline(run, client, facts)) return *ending;
  profile_reference(run, client, facts);
  if (target.kind == spec::TargetKind::Pytorch && !run.options.measure_only) capture_op_graph(run, client, facts);
  return facts;
}

}  // namespace hiera::engine::optimize
