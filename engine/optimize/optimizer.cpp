#include "engine/optimize/optimizer.h"

#include <algorithm>

#include "engine/eval/evaluation_client.h"
#include "engine/graph/minimal_work.h"
#include "engine/optimize/delivery.h"
#include "engine/optimize/reference_facts.h"
#include "engine/optimize/round.h"
#include "engine/optimize/run_context.h"
#include "engine/optimize/run_plan.h"

namespace hiera::engine::optimize {

std::optional<double> module_speed_of_light_ms(const graph::OpGraph& graph, const GpuCeilings& ceilings) {
  const auto bytes_of = graph::tensor_bytes;
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
    if (t == "float32") return float32_accurate_tflops(ceilings.peak_tflops);  // 3xTF32 where it is faster
    const auto found = ceilings.peak_tflops.find(t);
    return found != ceilings.peak_tflops.end() ? found->second : 0.0;
  };
  // Each node's least work (a product with torch.diag(d) is a multiply: the bound of the computation, not of
  // its spelling) at its own peak, float32's that of a float32-accurate product (3xTF32 where faster). A
  // float32 convolution's at TF32's: PyTorch lets cuDNN use it by default (torch.backends.cudnn.allow_tf32),
  // so a float32 peak would put the bound above the reference.
  double flop_ms = 0.0, counted = 0.0, saved = 0.0;
  bool bounded = true;
  for (const auto& node : graph.nodes) {
    if (node.flops <= 0.0) continue;
    const double flops = graph::minimal_work(graph, node).flops;
    saved += node.flops - flops;
    const std::string t = node.meta ? node.meta->dtype : dtype;
    double peak = peak_of(t);
    if (t == "float32" && node.kind.rfind("conv", 0) == 0) peak = std::max(peak, peak_of("tf32"));
    bounded = bounded && peak > 0.0;
    if (!bounded) continue;  // the whole module at one peak below; `saved` still counts every node
    flop_ms += flops / (peak * 1e12) * 1e3;
    counted += node.flops;
  }
  const double module_peak = peak_of(dtype);
  if (bounded && graph.total_flops > counted && module_peak > 0.0) flop_ms += (graph.total_flops - counted) / (module_peak * 1e12) * 1e3;
  if (!bounded) flop_ms = module_peak > 0.0 ? (graph.total_flops - saved) / (module_peak * 1e12) * 1e3 : 0.0;
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

// The walk, phase by phase (docs/architecture.md, "The optimize walk"): each
// phase records what it did in run.result and the run log, and ends the run
// with its ending when it cannot go on.
OptimizeResult Optimizer::run(const OptimizeOptions& options, const ProgressCallback& progress,
                              const CancellationToken& cancel) {
  RunContext run(options, progress, cancel);
  run.result.target = options.target.name();
  eval::EvaluationClient client(pool_);
  std::vector<std::string> names;
  for (const auto& p : proposers_) names.push_back(p->name());
  if (auto ending = open_run_log(run, pool_.size(), names)) return finish(run, *ending);
  for (const auto& problem : knowledge_.problems) run.decide("knowledge problem skipped: " + problem.to_string());
  try {
    const PhaseResult<ReferenceFacts> facts = measure_reference(run, client, knowledge_);
    if (!facts) return finish(run, facts.ending());
    const bool graph_proposer =
        std::any_of(proposers_.begin(), proposers_.end(), [](const auto& p) { return p->proposes_for_graph(); });
    const PhaseResult<RunPlan> plan = make_run_plan(run, *facts, knowledge_, graph_proposer);
    if (!plan) return finish(run, plan.ending());
    if (auto ending = stop_before_rounds(run, *facts, *plan, !proposers_.empty())) return finish(run, *ending);
    const RoundInputs inputs{*facts, *plan, proposers_, candidates_per_round(options, pool_.size()),
                             round_profile_text(*facts, plan->plan, run.result.gpu)};
    const RoundState rounds = run_rounds(run, client, knowledge_, inputs);
    run.result.best = deliver(run, client, *facts, plan->spec, rounds.faster);
    return finish(run, delivered_ending(run.result));
  } catch (const Cancelled&) {
    return finish(run, {Outcome::Cancelled, "cancelled after " + std::to_string(run.result.figures.proposed) + " candidates"});
  } catch (const std::exception& e) {
    return finish(run, {Outcome::Error, e.what()});
  }
}

}  // namespace hiera::engine::optimize
