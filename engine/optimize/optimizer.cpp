#include "engine/optimize/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <set>

#include "engine/eval/evaluation_client.h"
#include "engine/graph/op_graph.h"
#include "engine/knowledge/probe_check.h"
#include "engine/optimize/report.h"
#include "engine/optimize/run_log.h"
#include "engine/optimize/time_breakdown.h"
#include "engine/plan/escalation.h"
#include "engine/plan/plan_report.h"
#include "engine/plan/planner.h"
#include "engine/plan/regions.h"
#include "engine/plan/roofline.h"
#include "engine/plan/worker_profile.h"
#include "engine/spec/annotations.h"
#include "engine/spec/spec_builder.h"
#include "engine/spec/worker_task.h"

namespace hiera::engine::optimize {

using nlohmann::json;

namespace {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string failure_text(const eval::CheckFailure& f) { return f.check + ": " + f.message; }

// The state of one run, shared by the steps of Optimizer::run.
struct Run {
  Run(const OptimizeOptions& o, const ProgressCallback& p, const CancellationToken& c) : options(o), progress(p), cancel(c) {}
  const OptimizeOptions& options;
  const ProgressCallback& progress;
  const CancellationToken& cancel;
  OptimizeResult result;
  std::unique_ptr<RunLog> log;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int budget = kDefaultBudget;
  double time_limit_s = kDefaultTimeLimitS;
  std::optional<double> best_speedup;
  std::string step_label;
  PhaseClock clock;  // where the time goes (time_breakdown.h)

  void report(const std::string& phase, const std::string& message) {
    if (!progress) return;
    OptimizeProgress p;
    p.phase = phase;
    p.message = message;
    p.tried = result.figures.proposed;
    p.verified = result.figures.correct;
    p.budget = budget;
    p.best_speedup = best_speedup;
    p.step = step_label;
    progress(p);
  }
  void decide(const std::string& decision) {
    result.decisions.push_back(decision);
    if (log) log->write("decision", {{"text", decision}});
  }
  bool out_of_time() const { return seconds_since(start) >= time_limit_s; }
};

json evaluation_json(const eval::Evaluation& e) {
  json failures = json::array();
  for (const auto& f : e.failures) failures.push_back({{"check", f.check}, {"message", f.message}});
  json out = {{"verdict", eval::to_string(e.verdict)}, {"failures", failures}, {"worker", e.record.worker}};
  if (e.timing) out["speedup"] = e.timing->speedup;
  json phases = json::object();
  for (const auto& p : e.phases) phases[p.name] = p.ms;
  out["phases_ms"] = std::move(phases);
  return out;
}

knowledge::Space parse_space_or(const std::string& text, knowledge::Space fallback) {
  return knowledge::parse_space(text).value_or(fallback);
}

// The region's bound over its time in a candidate that saved (reference - candidate)
// there: what next_action compares with near_sol.
double fraction_of_sol(const plan::Plan& plan, const std::string& region, double reference_ms, double speedup) {
  for (const auto& a : plan.regions) {
    if (a.region.name != region || a.point.bound_ms <= 0) continue;
    const double saved = reference_ms - reference_ms / speedup;
    const double in_region = std::max(a.region.measured_ms - saved, a.point.bound_ms * 1e-3);
    return a.point.bound_ms / in_region;
  }
  return 0.0;
}

// The worker's task for a candidate. A CUDA candidate may launch differently
// from the reference: its own `hiera: launch` annotation says how.
json candidate_task(const spec::TaskSpec& spec, const std::string& reference_source, const std::string& candidate_source,
                    const std::string& kernel, const std::string& device) {
  spec::CandidateTask candidate;
  candidate.device = device;
  if (spec.kind == spec::TargetKind::Cuda) {
    candidate.kernel = kernel;
    const auto annotations = spec::parse_annotations(candidate_source, spec::SourceLanguage::Cuda);
    for (const auto& clause : annotations.clauses) {
      if (clause.name == "interface.launch") candidate.launch = spec::Launch::from_json(clause.value);
    }
  }
  return spec::to_worker_task(spec, reference_source, candidate_source, candidate);
}

}  // namespace

std::optional<double> module_speed_of_light_ms(const graph::OpGraph& graph, const plan::Ceilings& ceilings) {
  auto size_of = [](const std::string& dtype) -> double {
    if (dtype == "float64" || dtype == "int64" || dtype == "complex64") return 8;
    if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
    if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
    return 4;
  };
  auto bytes_of = [&](const std::vector<std::int64_t>& shape, const std::string& dtype) {
    double n = 1;
    for (const auto d : shape) n *= static_cast<double>(d);
    return n * size_of(dtype);
  };
  double bytes = 0.0;
  std::string dtype = "float32";
  for (const auto& node : graph.nodes) {
    if (node.op == "placeholder" && node.meta) bytes += bytes_of(node.meta->shape, node.meta->dtype);
    if (node.op != "output") continue;
    std::vector<const graph::Arg*> pending;
    for (const auto& a : node.args) pending.push_back(&a);
    while (!pending.empty()) {
      const graph::Arg* a = pending.back();
      pending.pop_back();
      for (const auto& item : a->items) pending.push_back(&item);
      if (const graph::Node* p = graph.producer(*a); p && p->meta) {
        bytes += bytes_of(p->meta->shape, p->meta->dtype);
        dtype = p->meta->dtype;
      }
    }
  }
  for (const auto& [name, t] : graph.parameters) bytes += bytes_of(t.shape, t.dtype);
  for (const auto& [name, t] : graph.buffers) bytes += bytes_of(t.shape, t.dtype);
  double ms = ceilings.bandwidth_gbs > 0 ? bytes / (ceilings.bandwidth_gbs * 1e9) * 1e3 : 0.0;
  auto peak_of = [&](const std::string& t) {
    const auto found = ceilings.tflops.find(t);
    return found != ceilings.tflops.end() ? found->second : 0.0;
  };
  // Each node's flops at its own peak. A float32 convolution's at TF32's: PyTorch lets cuDNN use it by
  // default (torch.backends.cudnn.allow_tf32), so the float32 peak would put the bound above the reference.
  double flop_ms = 0.0, counted = 0.0;
  bool bounded = true;
  for (const auto& node : graph.nodes) {
    if (node.flops <= 0.0) continue;
    const std::string t = node.meta ? node.meta->dtype : dtype;
    double peak = peak_of(t);
    if (t == "float32" && node.kind.rfind("conv", 0) == 0) peak = std::max(peak, peak_of("tf32"));
    if (peak <= 0.0) {
      bounded = false;
      break;
    }
    flop_ms += node.flops / (peak * 1e12) * 1e3;
    counted += node.flops;
  }
  const double module_peak = peak_of(dtype);
  if (bounded && graph.total_flops > counted && module_peak > 0.0) flop_ms += (graph.total_flops - counted) / (module_peak * 1e12) * 1e3;
  if (!bounded) flop_ms = module_peak > 0.0 ? graph.total_flops / (module_peak * 1e12) * 1e3 : 0.0;
  ms = std::max(ms, flop_ms);
  if (ms <= 0.0) return std::nullopt;
  return ms;
}

bool faster_beyond_noise(const eval::Timing& t) {
  return t.candidate.median_ms < t.reference.median_ms && t.candidate.p90_ms < t.reference.p10_ms;
}

Optimizer::Optimizer(eval::WorkerPool& pool, const knowledge::KnowledgeBase& knowledge,
                     std::vector<std::shared_ptr<propose::Proposer>> proposers)
    : pool_(pool), knowledge_(knowledge), proposers_(std::move(proposers)) {}

OptimizeResult Optimizer::run(const OptimizeOptions& options, const ProgressCallback& progress,
                              const CancellationToken& cancel) {
  Run run(options, progress, cancel);
  OptimizeResult& result = run.result;
  const Target& target = options.target;
  result.target = target.name();
  eval::EvaluationClient client(pool_);

  auto finish = [&](Outcome outcome, std::string message) -> OptimizeResult {
    result.outcome = outcome;
    result.message = std::move(message);
    // A cancellation or an error ends the run whatever the loop had decided.
    if (outcome == Outcome::Cancelled || outcome == Outcome::Error) {
      result.stop_reason = outcome == Outcome::Cancelled ? StopReason::Cancelled : StopReason::Error;
      result.stop_detail = result.message;
    }
    result.wall_s = seconds_since(run.start);
    result.time_breakdown = run.clock.finish(result.wall_s);
    if (run.log) {
      run.log->write("time", to_json(result.time_breakdown));
      run.log->write("done", {{"outcome", to_string(outcome)},
                              {"message", result.message},
                              {"stop_reason", result.stop_reason ? to_string(*result.stop_reason) : "none"},
                              {"stop_detail", result.stop_detail}});
      try {
        run.log->write_file("result.json", to_json(result).dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
        run.log->write_file("report.md", to_markdown(result));
      } catch (const std::exception& e) {
        result.message += " (the run directory could not be written: " + std::string(e.what()) + ")";
      }
    }
    run.report("done", result.message);
    return result;
  };

  try {
    run.log = std::make_unique<RunLog>(new_run_directory(options.runs_dir, target.file.stem().string(), target.symbol));
    result.run_dir = run.log->directory();
  } catch (const std::exception& e) {
    return finish(Outcome::Error, e.what());
  }
  run.log->write("start", {{"target", result.target}, {"file", target.file.string()}, {"kind", spec::to_string(target.kind)},
                           {"workers", pool_.size()}, {"proposers", [&] {
                              json names = json::array();
                              for (const auto& p : proposers_) names.push_back(p->name());
                              return names;
                            }()}});
  for (const auto& problem : knowledge_.problems) run.decide("knowledge problem skipped: " + problem.to_string());

  try {
    // 2. The task spec from configuration and annotations (the probe's facts join below).
    run.report("spec", "reading the contract");
    spec::SpecInputs inputs;
    inputs.target = result.target;
    inputs.kind = target.kind;
    inputs.source = target.source;
    inputs.configuration = options.configuration;
    spec::SpecBuildResult built = spec::build_spec(inputs);
    if (!built.ok()) {
      std::string text;
      for (const auto& e : built.problems) text += (text.empty() ? "" : "; ") + e.to_string();
      return finish(Outcome::Error, "the task spec has errors: " + text);
    }

    // The device: its measured ceilings, or the knowledge's datasheet when there is no GPU.
    run.report("probe", "probing the worker's device");
    run.clock.enter("probe");
    const eval::DeviceProbe probe = client.probe({false, std::chrono::minutes(5), cancel, std::nullopt});
    run.clock.leave();
    throw_if_cancelled(cancel);
    plan::Ceilings ceilings;
    if (probe.ok()) {
      result.gpu = probe.name;
      ceilings = plan::ceilings_from_probe(probe.copy_gbs, probe.gemm_tflops, probe.name);
      if (const auto* gpu = knowledge_.find_gpu(probe.name)) {
        for (const auto& deviation : knowledge::check_against_probe(*gpu, probe.copy_gbs, probe.gemm_tflops)) {
          run.decide("probe check: " + deviation.message);
        }
      }
    } else {
      const knowledge::GpuSpec* gpu = knowledge_.gpu(options.target_gpu);
      result.gpu = "cpu";
      if (!gpu) return finish(Outcome::Error, "no GPU to probe (" + probe.job_failure->message +
                                                  ") and no knowledge GPU '" + options.target_gpu + "' for estimates");
      ceilings = plan::ceilings_from_spec(*gpu);
      run.decide("no GPU probe (" + probe.job_failure->message + "): the roofline uses the " + gpu->name +
                 " datasheet; times are measured where the worker runs");
    }
    run.log->write("probe", {{"ok", probe.ok()}, {"gpu", result.gpu}, {"ceilings", plan::describe(ceilings)}});

    // The reference against itself: proves the harness runs it and measures the baseline.
    run.report("reference", "timing the reference");
    const std::string reference_source = target.reference_source();
    eval::EvaluateOptions evaluate_options;
    evaluate_options.trials = options.trials;
    evaluate_options.timing_trials = options.timing_trials;
    evaluate_options.seed = options.seed;
    evaluate_options.timeout = options.evaluate_timeout;
    evaluate_options.cancel = cancel;
    const std::string device = probe.ok() ? "cuda" : "cpu";
    const json baseline_task = candidate_task(built.spec, reference_source, target.reference_as_candidate(), "", device);
    run.clock.enter("reference_baseline");
    const eval::Evaluation baseline = client.evaluate(baseline_task, evaluate_options);
    run.clock.leave();
    run.clock.reference(baseline);
    throw_if_cancelled(cancel);
    run.log->write("baseline", evaluation_json(baseline));
    if (!baseline.passed() || !baseline.timing) {
      std::string why = baseline.failures.empty() ? "no timing" : failure_text(baseline.failures.front());
      return finish(Outcome::Error, "the reference does not run under the verification harness: " + why);
    }
    result.reference_timing = baseline.timing;
    const double reference_ms = baseline.timing->reference.median_ms;

    // Its profile: the regions the planner places on the roofline.
    run.report("profile", "profiling the reference");
    run.clock.enter("reference_profile");
    const eval::ProfileResult profile = client.profile(baseline_task, "reference", evaluate_options);
    run.clock.leave();
    throw_if_cancelled(cancel);
    json facts = {{"reference_ms", reference_ms}, {"device", result.gpu}};
    plan::TaskWork work;
    work.module_ms = reference_ms;
    work.runs = target.kind == spec::TargetKind::Pytorch ? 5 : 1;
    std::vector<plan::Region> regions;
    if (profile.ok()) {
      result.reference_profile = profile.raw;
      result.profiled_calls = work.runs;
      try {
        regions = plan::regions_from_profile(plan::parse_profile(profile.raw), work, ceilings);
      } catch (const std::exception& e) {
        run.decide("the reference's profile could not be read (" + std::string(e.what()) + "): one whole-module region");
      }
    } else {
      run.decide("no profile of the reference (" + profile.job_failure->message + "): one whole-module region");
    }
    if (regions.empty()) {
      plan::Region module;
      module.name = "module";
      module.measured_ms = reference_ms;
      module.launches = 1;
      module.pattern = "whole_module";
      regions.push_back(module);
    }
    run.log->write("profile", {{"ok", profile.ok()}, {"regions", regions.size()}, {"worker_profile", profile.raw}});

    // The reference forward as an op graph (PyTorch tasks): what the knowledge
    // proposer rewrites. Without one it still has whole-module rewrites.
    std::optional<graph::OpGraph> op_graph;
    if (target.kind == spec::TargetKind::Pytorch && !options.measure_only) {
      run.report("capture", "capturing the reference's op graph");
      run.clock.enter("capture");
      const eval::CaptureResult capture = client.capture(baseline_task, evaluate_options);
      run.clock.leave();
      throw_if_cancelled(cancel);
      if (!capture.ok()) {
        run.decide("no op graph of the reference (" + capture.job_failure->message + ")");
      } else if (!capture.graph.is_null()) {
        try {
          op_graph = graph::parse_op_graph(capture.graph);
          if (!op_graph->captured()) {
            run.decide("the reference could not be captured as an op graph: " + op_graph->fallback +
                       " (whole-module rewrites only)");
          } else {
            run.decide("op graph of the reference: " + std::to_string(op_graph->nodes.size()) + " nodes (" +
                       op_graph->method + ")");
          }
        } catch (const std::exception& e) {
          run.decide("the reference's op graph could not be read (" + std::string(e.what()) + ")");
          op_graph.reset();
        }
      }
      run.log->write("capture", {{"ok", capture.ok()}, {"graph", capture.graph}});
    }

    // The spec again, with what the probe and the reference run established.
    run.clock.enter("planning");
    inputs.probe = facts;
    built = spec::build_spec(inputs);
    if (!built.ok()) {
      std::string text;
      for (const auto& e : built.problems) text += (text.empty() ? "" : "; ") + e.to_string();
      return finish(Outcome::Error, "the task spec has errors: " + text);
    }
    const spec::TaskSpec& spec = built.spec;
    result.spec = spec.to_json();
    result.spec_markdown = spec.to_markdown();
    run.log->write("spec", result.spec);

    // 3. The plan.
    run.budget = options.budget.value_or(static_cast<int>(spec.candidate_budget().value_or(kDefaultBudget)));
    run.time_limit_s = options.time_limit_s.value_or(spec.time_budget_s().value_or(kDefaultTimeLimitS));
    plan::PlanContext context;
    context.allowed_spaces.clear();
    for (const auto& s : spec.spaces()) context.allowed_spaces.push_back(parse_space_or(s, knowledge::Space::S1));
    if (context.allowed_spaces.empty()) context.allowed_spaces = {knowledge::Space::S1, knowledge::Space::S2, knowledge::Space::S3};
    context.allowed_precision = spec.allowed_precisions();
    context.target_speedup = spec.target_speedup().value_or(1.0);
    context.candidate_budget = run.budget;
    const auto dtypes = spec.output_dtypes();
    context.dtype = dtypes.empty() ? "float32" : dtypes.front();
    plan::Plan plan = plan::make_plan(regions, ceilings, context, knowledge_.recipes);
    for (const auto& d : plan.decisions) run.decide(d);
    if (plan.steps.empty() && !plan.at_speed_of_light) {
      // No recipe fits any region: the proposers still get the whole module in the cheapest allowed space.
      plan::PlanStep step;
      step.region = regions.front().name;
      step.space = context.allowed_spaces.front();
      step.budget = run.budget;
      step.reason = "no recipe applies to any region: the whole module in " + std::string(knowledge::to_string(step.space));
      plan.steps.push_back(step);
      run.decide(step.reason);
    }
    const bool graph_proposer = std::any_of(proposers_.begin(), proposers_.end(),
                                            [](const auto& p) { return p->name() == "knowledge"; });
    if (op_graph && op_graph->captured() && graph_proposer) {
      // The profile's regions are kernels; the knowledge proposer rewrites the
      // whole op graph and fuses across them. Its steps come first, one per
      // allowed space, cheapest first; the kernel regions' steps follow.
      std::vector<plan::PlanStep> graph_steps;
      for (const knowledge::Space space : context.allowed_spaces) {
        plan::PlanStep step;
        step.region = "op graph";
        step.space = space;
        step.budget = 3;
        step.reason = std::string("the captured op graph (") + std::to_string(op_graph->nodes.size()) +
                      " nodes) in " + knowledge::to_string(space) + ": rewrites of the whole forward, across kernels";
        run.decide(step.reason);
        graph_steps.push_back(std::move(step));
      }
      plan.steps.insert(plan.steps.begin(), graph_steps.begin(), graph_steps.end());
    }
    result.plan = plan::to_json(plan);
    if (op_graph && op_graph->captured()) {
      if (const auto bound = module_speed_of_light_ms(*op_graph, ceilings)) {
        result.plan["module_speed_of_light_ms"] = *bound;
        run.decide("the module's speed of light (every op fused, inputs, weights and outputs moved once, every flop "
                   "at peak): " + fixed(*bound, 4) + " ms");
      }
    }
    result.plan_markdown = plan::to_markdown(plan);
    run.log->write("plan", result.plan);
    run.clock.leave();
    if (options.measure_only) {
      result.stop_reason = StopReason::MeasureOnly;
      result.stop_detail = "measure only: no candidates";
      return finish(Outcome::NoImprovement, "the reference measured: " + fixed(reference_ms, 4) + " ms per call on " +
                                                result.gpu + " (measure only: no candidates)");
    }
    if (plan.at_speed_of_light) {
      result.stop_reason = StopReason::NearSpeedOfLight;
      result.stop_detail = "the reference already runs near its speed of light";
      return finish(Outcome::NoImprovement, result.stop_detail);
    }
    if (proposers_.empty()) {
      run.decide("no proposer configured (no LLM endpoint, and the built-in proposer is not enabled)");
      result.stop_reason = StopReason::NoProposer;
      result.stop_detail = result.decisions.back();
    }

    // 4-6. Rounds of proposals, evaluated in parallel, step by step.
    std::vector<propose::Attempt> history;
    std::string best_source;
    std::vector<std::size_t> faster;  // indexes into result.attempts, verified faster
    int next_id = 1;
    std::size_t rounds = 0;
    const int parallel = std::max<int>(1, options.candidates_per_round ? *options.candidates_per_round
                                                                       : static_cast<int>(pool_.size()));
    const std::string gpu_text = result.gpu;
    std::string profile_text = "reference: " + fixed(reference_ms, 4) + " ms per call on " + gpu_text + "\n";
    for (const auto& a : plan.regions) {
      profile_text += "- " + a.region.name + ": " + a.point.reason + "\n";
    }
    if (profile.ok()) {
      const json metrics = profile.raw.value("metrics", json::object());
      if (metrics.contains("dram_throughput_pct")) {
        profile_text += "hardware counters (CUPTI): DRAM throughput " + fixed(metrics.value("dram_throughput_pct", 0.0), 1) +
                        "% of peak, SM throughput " + fixed(metrics.value("sm_throughput_pct", 0.0), 1) +
                        "%, achieved occupancy " + fixed(metrics.value("achieved_occupancy_pct", 0.0), 1) + "%\n";
      }
      int shown = 0;
      for (const auto& k : profile.raw.value("kernels", json::array())) {
        if (shown++ == 8) break;
        profile_text += "  kernel " + k.value("name", std::string("?")) + ": " + std::to_string(k.value("calls", 0)) +
                        " calls, mean " + fixed(k.value("mean_ns", 0.0) / 1e3, 2) + " us\n";
      }
    }
    std::vector<plan::StepOutcome> outcomes;  // cumulative snapshots, one per round
    std::map<std::size_t, std::set<std::string>> exhausted;  // per plan step: proposers with nothing new
    std::optional<std::size_t> current_step;
    while (!proposers_.empty()) {
      throw_if_cancelled(cancel);
      if (run.out_of_time()) {
        run.decide("time limit reached (" + fixed(run.time_limit_s, 0) + " s)");
        result.stop_reason = StopReason::TimeLimit;
        result.stop_detail = "time limit reached after " + fixed(seconds_since(run.start), 0) + " s (limit " +
                             fixed(run.time_limit_s, 0) + " s), " + std::to_string(result.figures.proposed) + " of " +
                             std::to_string(run.budget) + " candidates tried";
        break;
      }
      const plan::Decision decision = plan::next_action(plan, outcomes);
      run.log->write("next_action", plan::to_json(decision));
      if (decision.action == plan::Action::Stop || !decision.step) {
        run.decide(decision.reason);
        result.stop_reason = decision.stop == plan::StopCause::BudgetSpent        ? StopReason::BudgetSpent
                             : decision.stop == plan::StopCause::NearSpeedOfLight ? StopReason::NearSpeedOfLight
                                                                                  : StopReason::PlanExhausted;
        result.stop_detail = decision.reason;
        if (decision.stop != plan::StopCause::BudgetSpent) {
          result.stop_detail += " (" + std::to_string(result.figures.proposed) + " of a budget of " +
                                std::to_string(run.budget) + " candidates tried)";
        }
        break;
      }
      const std::size_t s = *decision.step;
      const plan::PlanStep& step = plan.steps[s];
      if (current_step != s) {
        current_step = s;
        run.step_label = std::string(knowledge::to_string(step.space)) + " / " + step.region;
        run.decide("step " + std::to_string(s + 1) + " (" + run.step_label + "): " + decision.reason);
      }
      plan::StepOutcome snapshot;
      snapshot.region = step.region;
      snapshot.space = step.space;
      for (const auto& o : outcomes) {
        if (o.region == step.region && o.space == step.space) snapshot = o;  // the latest for this step
      }

      propose::ProposalRequest request;
      request.task_name = result.target;
      request.spec = result.spec_markdown;
      request.language = target.kind == spec::TargetKind::Pytorch ? propose::Language::Python : propose::Language::Cuda;
      request.gpu = gpu_text;
      request.space = step.space;
      request.region = step.region;
      for (const auto& id : step.recipes) {
        if (const auto* recipe = knowledge_.recipe(id)) request.recipes.push_back(recipe);
      }
      request.reference_source = reference_source;
      request.current_best_source = best_source;
      request.profile = profile_text;
      request.history = history;
      request.count = std::max(1, std::min({parallel, decision.candidates, run.budget - result.figures.proposed}));
      request.graph = op_graph ? &*op_graph : nullptr;
      request.allowed_precisions = context.allowed_precision;
      // Proposers take turns; one that had nothing new for this step is not asked again there.
      std::set<std::string>& done = exhausted[s];
      std::shared_ptr<propose::Proposer> proposer;
      for (std::size_t k = 0; k < proposers_.size() && !proposer; ++k) {
        auto& candidate_proposer = proposers_[(rounds + k) % proposers_.size()];
        if (!done.count(candidate_proposer->name())) proposer = candidate_proposer;
      }
      ++rounds;
      if (!proposer) {
        snapshot.exhausted = true;  // the step is finished; its budget carries on
        outcomes.push_back(snapshot);
        continue;
      }
      run.report("propose", run.step_label + ": asking " + proposer->name() + " for " + std::to_string(request.count));
      run.clock.enter("proposing");
      std::vector<propose::Candidate> candidates = proposer->propose(request, cancel);
      run.clock.leave();
      if (candidates.empty()) {
        run.decide(proposer->name() + " has nothing new for " + run.step_label);
        done.insert(proposer->name());
        outcomes.push_back(snapshot);
        continue;
      }
      // Evaluate every usable candidate at once: the pool spreads them over its workers.
      struct Pending {
        std::size_t record;
        std::future<eval::Evaluation> evaluation;
      };
      std::vector<Pending> pending;
      run.clock.enter("candidates");
      for (auto& candidate : candidates) {
        candidate.id = "c" + std::to_string(next_id++);
        ++result.figures.proposed;
        ++snapshot.tried;
        result.figures.prompt_tokens += candidate.usage.prompt_tokens;
        result.figures.completion_tokens += candidate.usage.completion_tokens;
        AttemptRecord record;
        record.attempt.candidate = candidate;
        record.step = run.step_label;
        run.log->write("candidate", {{"id", candidate.id}, {"proposer", candidate.proposer},
                                     {"space", knowledge::to_string(candidate.space)}, {"source", candidate.source},
                                     {"rejected", candidate.rejected ? json(*candidate.rejected) : json(nullptr)}});
        // The same code again (an LLM repeating itself, a cached reply) would only be measured again.
        if (!candidate.rejected) {
          const auto same = std::find_if(history.begin(), history.end(), [&](const propose::Attempt& earlier) {
            return !earlier.candidate.rejected && earlier.candidate.source == candidate.source &&
                   earlier.candidate.kernel == candidate.kernel;
          });
          if (same != history.end()) candidate.rejected = "the same code as " + same->candidate.id + ", already evaluated";
          record.attempt.candidate.rejected = candidate.rejected;
        }
        if (candidate.rejected) {
          ++result.figures.rejected;
          record.verdict = "rejected";
          record.attempt.failures.push_back("proposer: " + *candidate.rejected);
          result.attempts.push_back(record);
          history.push_back(record.attempt);
          continue;
        }
        eval::EvaluateOptions o = evaluate_options;
        o.seed = options.seed + 1000 * next_id;  // fresh inputs for every candidate
        json task = candidate_task(spec, reference_source, candidate.source, candidate.kernel, device);
        result.attempts.push_back(record);
        pending.push_back({result.attempts.size() - 1, client.submit_evaluate(std::move(task), o)});
      }
      run.report("evaluate", run.step_label + ": verifying " + std::to_string(pending.size()) + " candidate(s)");
      for (auto& p : pending) {
        const eval::Evaluation e = p.evaluation.get();
        run.clock.candidate(e);
        AttemptRecord& record = result.attempts[p.record];
        propose::Attempt& attempt = record.attempt;
        record.worker = e.record.worker;
        record.worker_command = e.record.worker_command;
        record.lost = e.record.lost;
        record.trials = e.trials;
        record.timing = e.timing;
        record.speed_of_light_ms = e.speed_of_light_ms;
        const bool compile_failed = std::any_of(e.failures.begin(), e.failures.end(),
                                                [](const auto& f) { return f.check == "compile" || f.check == "static"; });
        attempt.compiled = !compile_failed && !e.job_failure;
        attempt.correct = e.passed();
        for (const auto& f : e.failures) attempt.failures.push_back(failure_text(f));
        if (e.timing) attempt.speedup = e.timing->speedup;
        result.figures.compiled += attempt.compiled ? 1 : 0;
        result.figures.correct += attempt.correct ? 1 : 0;
        snapshot.compiled += attempt.compiled ? 1 : 0;
        snapshot.correct += attempt.correct ? 1 : 0;
        const bool is_faster = attempt.correct && e.timing && faster_beyond_noise(*e.timing) &&
                               e.timing->speedup >= context.target_speedup;
        record.verdict = attempt.correct ? "passed" : "failed";
        if (attempt.correct && e.timing) {
          if (!snapshot.best_speedup || e.timing->speedup > *snapshot.best_speedup) {
            snapshot.best_speedup = e.timing->speedup;
            snapshot.best_fraction_of_sol = fraction_of_sol(plan, step.region, reference_ms, e.timing->speedup);
          }
        }
        if (is_faster) {
          ++result.figures.faster;
          faster.push_back(p.record);
          if (!run.best_speedup || e.timing->speedup > *run.best_speedup) {
            run.best_speedup = e.timing->speedup;
            best_source = attempt.candidate.source;
          }
        }
        run.log->write("evaluation", {{"id", attempt.candidate.id}, {"evaluation", evaluation_json(e)}, {"faster", is_faster}});
        history.push_back(attempt);
        run.report("evaluate", attempt.candidate.id + ": " + record.verdict +
                                   (attempt.speedup ? " (" + fixed(*attempt.speedup, 2) + "x)" : std::string()));
      }
      run.clock.leave();
      outcomes.push_back(snapshot);
    }

    // 7. The best verified candidate, delivered and verified again in that form.
    std::sort(faster.begin(), faster.end(), [&](std::size_t a, std::size_t b) {
      return *result.attempts[a].attempt.speedup > *result.attempts[b].attempt.speedup;
    });
    run.clock.enter("delivery");
    for (std::size_t rank = 0; rank < faster.size() && rank < 3; ++rank) {
      throw_if_cancelled(cancel);
      const propose::Candidate& candidate = result.attempts[faster[rank]].attempt.candidate;
      run.report("deliver", "verifying " + candidate.id + " in its delivered form");
      eval::EvaluateOptions o = evaluate_options;
      o.seed = options.seed + 7777;
      // A delivered module builds its kernels with load_inline: about a minute cold per source.
      o.timeout = std::max<std::chrono::milliseconds>(o.timeout, std::chrono::minutes(10));
      // KernelBench's own criterion beside hiera's verdict, for the report (PyTorch modules: its format).
      o.kernelbench = target.kind == spec::TargetKind::Pytorch;
      o.baselines = options.delivery_baselines;
      BestResult best;
      best.candidate = candidate;
      const json task = candidate_task(spec, reference_source, candidate.source, candidate.kernel, device);
      if (target.kind == spec::TargetKind::Pytorch) {
        eval::Delivery delivery = client.deliver(task, o);
        best.delivered_source = delivery.source;
        best.evaluation = std::move(delivery.evaluation);
      } else {
        best.delivered_source = candidate.source;  // a kernel is delivered as its source
        best.evaluation = client.evaluate(task, o);
      }
      run.clock.delivery(best.evaluation);
      run.log->write("delivery", {{"id", candidate.id}, {"evaluation", evaluation_json(best.evaluation)}});
      if (!best.evaluation.passed() || !best.evaluation.timing) {
        run.decide(candidate.id + " failed verification in its delivered form: " +
                   (best.evaluation.failures.empty() ? std::string("no timing") : failure_text(best.evaluation.failures.front())));
        continue;
      }
      best.speedup = best.evaluation.timing->speedup;
      const std::string extension = target.kind == spec::TargetKind::Pytorch ? ".py" : ".cu";
      best.file = run.log->write_file("best" + extension, best.delivered_source);
      result.best = std::move(best);
      break;
    }
    run.clock.leave();
    if (result.best) {
      return finish(Outcome::Improved, result.best->candidate.id + " is " + fixed(result.best->speedup, 2) +
                                           "x faster than the reference, verified in its delivered form");
    }
    return finish(Outcome::NoImprovement, std::to_string(result.figures.proposed) + " candidates tried, " +
                                              std::to_string(result.figures.correct) + " correct, none verified faster");
  } catch (const Cancelled&) {
    return finish(Outcome::Cancelled, "cancelled after " + std::to_string(result.figures.proposed) + " candidates");
  } catch (const std::exception& e) {
    return finish(Outcome::Error, e.what());
  }
}

}  // namespace hiera::engine::optimize
