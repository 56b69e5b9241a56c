// The phases of Optimizer::run on their own (reference_facts.h, run_plan.h,
// round.h, delivery.h), each over a pool of one hiera-fake-worker (a FAKE: it
// speaks the job protocol and answers canned measurements: the reference at
// 0.1 ms, a candidate at 0.05 ms (here beyond noise), a profile of one kernel "fake_kernel", a
// conv -> relu op graph for a PyTorch task) and scripted proposers.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "engine/optimize/delivery.h"
#include "engine/optimize/reference_facts.h"
#include "engine/optimize/round.h"
#include "engine/optimize/run_context.h"
#include "engine/optimize/run_plan.h"
#include "engine/propose/recipes/recipe_proposer.h"
#include "engine/propose/prompt_builder.h"
#include "temp_directory.h"
#include "annotated_kernel.h"
#include "build_paths.h"

namespace hiera::engine::optimize {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string kKernel = hiera::testing::annotated_scale_kernel();

const std::string kModule =
    "import torch\n"
    "import torch.nn as nn\n\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = nn.Conv2d(3, 16, 3, padding=1)\n\n"
    "    def forward(self, x):\n"
    "        return torch.relu(self.conv(x))\n\n\n"
    "def get_inputs():\n"
    "    return [torch.randn(8, 3, 64, 64)]\n\n\n"
    "def get_init_inputs():\n"
    "    return []\n";

// Every call: `count` kernels, a new one each (`repeat`: always the same one); none once `rounds` calls were made.
class ScriptedProposer : public propose::Proposer {
 public:
  explicit ScriptedProposer(std::string name = "scripted", bool repeat = false, int rounds = 1000)
      : name_(std::move(name)), repeat_(repeat), rounds_(rounds) {}
  std::string name() const override { return name_; }
  std::vector<propose::Candidate> propose(const propose::ProposalRequest& request, const CancellationToken&) override {
    requests.push_back(request);
    std::vector<propose::Candidate> out;
    if (static_cast<int>(requests.size()) > rounds_) return out;
    for (int i = 0; i < request.count; ++i) {
      propose::Candidate c;
      c.proposer = name();
      c.space = request.space;
      c.region = request.region;
      c.kernel = "scale";
      c.source = hiera::testing::scale_kernel_variant(repeat_ ? 0 : calls_++);
      c.parts = {{"part:" + std::to_string(calls_), "s3_scale", request.space, "scale", "a scaled kernel", std::nullopt, std::nullopt, std::nullopt}};
      out.push_back(std::move(c));
    }
    return out;
  }
  std::vector<propose::ProposalRequest> requests;

 private:
  std::string name_;
  bool repeat_;
  int rounds_;
  int calls_ = 0;
};

std::vector<json> events(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "run.jsonl");
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

bool has_event(const std::vector<json>& all, const std::string& name) {
  return std::any_of(all.begin(), all.end(), [&](const json& e) { return e["event"] == name; });
}

bool has_decision(const OptimizeResult& result, const std::string& prefix) {
  return std::any_of(result.decisions.begin(), result.decisions.end(),
                     [&](const std::string& d) { return d.rfind(prefix, 0) == 0; });
}

// A run context over one fake worker, its log open in a temporary directory.
class OptimizerPhases : public ::testing::Test {
 protected:
  OptimizerPhases() : pool_(pool_options()), client_(pool_) {}
  static eval::WorkerPoolOptions pool_options() {
    eval::WorkerPoolOptions o;
    o.commands.push_back(
        {::hiera::testing::fake_worker_bin(), "--candidate-ms", "0.05"});  // faster beyond the reference's spread
    o.handshake_timeout = 30s;
    return o;
  }
  RunContext& start(Target target) {
    options_.target = std::move(target);
    options_.runs_dir = dir_.path() / "runs";
    run_ = std::make_unique<RunContext>(options_, progress_, cancel_);
    run_->result.target = options_.target.name();
    EXPECT_FALSE(open_run_log(*run_, pool_.size(), {"scripted"}));
    return *run_;
  }
  RunContext& start_kernel() { return start(make_target(dir_.path() / "scale.cu", "scale", kKernel)); }
  RunContext& start_module() { return start(make_target(dir_.path() / "model.py", "Model", kModule)); }

  hiera::testing::TempDirectory dir_{"hiera-optimizer-phases-"};
  eval::WorkerPool pool_;
  eval::EvaluationClient client_;
  knowledge::KnowledgeBase knowledge_;
  OptimizeOptions options_;
  ProgressCallback progress_;
  CancellationToken cancel_;
  std::unique_ptr<RunContext> run_;
};

TEST_F(OptimizerPhases, MeasureReferenceProbesTimesAndProfilesAKernel) {
  RunContext& run = start_kernel();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts) << facts.ending().message;
  EXPECT_EQ(run.result.gpu, "Fake GPU");
  EXPECT_EQ(facts->device, "cuda");
  EXPECT_DOUBLE_EQ(facts->reference_ms, 0.1);
  ASSERT_TRUE(run.result.reference_timing);
  EXPECT_GT(facts->ceilings.bandwidth_gbs, 0.0);
  ASSERT_FALSE(facts->regions.empty());
  EXPECT_EQ(run.result.profiled_calls, 1);
  ASSERT_EQ(facts->profile.kernels.size(), 1u);
  EXPECT_EQ(facts->profile.kernels[0].name, "fake_kernel");
  EXPECT_EQ(facts->profile.kernels[0].calls, 2);
  EXPECT_DOUBLE_EQ(facts->profile.kernels[0].mean_ns, 100000.0);
  EXPECT_FALSE(facts->profile.counters);  // the fake's metrics are unavailable
  EXPECT_FALSE(facts->op_graph);          // a CUDA task has no op graph
  EXPECT_FALSE(facts->reference_source.empty());
  EXPECT_EQ(facts->evaluate_options.seed, options_.seed);
  const auto all = events(run.result.run_dir);
  for (const char* e : {"start", "probe", "baseline", "profile"}) EXPECT_TRUE(has_event(all, e)) << e;
  EXPECT_FALSE(has_event(all, "capture"));
  const TimeBreakdown t = run.clock.finish(1.0);
  EXPECT_GE(t.seconds("probe") + t.seconds("reference_baseline") + t.seconds("reference_profile"), 0.0);
  EXPECT_EQ(t.seconds("capture"), 0.0);
}

TEST_F(OptimizerPhases, MeasureReferenceCapturesAModulesOpGraph) {
  RunContext& run = start_module();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts) << facts.ending().message;
  ASSERT_TRUE(facts->op_graph);
  EXPECT_TRUE(facts->op_graph->captured());
  EXPECT_EQ(facts->op_graph->nodes.size(), 4u);
  EXPECT_EQ(run.result.profiled_calls, 5);
  EXPECT_TRUE(has_decision(run.result, "op graph of the reference: 4 nodes (fx)"));
  EXPECT_TRUE(has_event(events(run.result.run_dir), "capture"));
}

TEST_F(OptimizerPhases, MeasureReferenceSkipsTheCaptureWhenMeasuringOnly) {
  options_.measure_only = true;
  RunContext& run = start_module();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts) << facts.ending().message;
  EXPECT_FALSE(facts->op_graph);
  EXPECT_FALSE(has_event(events(run.result.run_dir), "capture"));
}

TEST_F(OptimizerPhases, MeasureReferenceEndsOnSpecErrorsBeforeAnyJob) {
  options_.configuration = json{{"spaces", {"S9"}}};
  RunContext& run = start_kernel();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_FALSE(facts);
  EXPECT_EQ(facts.ending().outcome, Outcome::Error);
  EXPECT_EQ(facts.ending().message.rfind("the task spec has errors: ", 0), 0u) << facts.ending().message;
  EXPECT_FALSE(has_event(events(run.result.run_dir), "probe"));
}

TEST_F(OptimizerPhases, MakeRunPlanRecordsTheSpecThePlanAndTheBudget) {
  options_.budget = 5;
  options_.time_limit_s = 60;
  RunContext& run = start_kernel();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts);
  const PhaseResult<RunPlan> plan = make_run_plan(run, *facts, knowledge_, /*graph_proposer=*/true);
  ASSERT_TRUE(plan) << plan.ending().message;
  EXPECT_EQ(run.budget, 5);
  EXPECT_EQ(run.time_limit_s, 60.0);
  EXPECT_EQ(plan->context.candidate_budget, 5);
  ASSERT_FALSE(plan->plan.steps.empty());
  // No recipes in an empty knowledge base: the whole module in the cheapest space; no graph to lead with.
  EXPECT_EQ(plan->plan.steps.front().region, facts->regions.front().name);
  EXPECT_TRUE(has_decision(run.result, "no recipe applies to any region"));
  EXPECT_FALSE(run.result.spec.is_null());
  EXPECT_FALSE(run.result.plan_markdown.empty());
  const auto all = events(run.result.run_dir);
  EXPECT_TRUE(has_event(all, "spec"));
  EXPECT_TRUE(has_event(all, "plan"));
  EXPECT_FALSE(stop_before_rounds(run, *facts, *plan, true));
}

TEST_F(OptimizerPhases, MakeRunPlanLeadsWithGraphStepsOnlyForAGraphProposer) {
  RunContext& run = start_module();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts);
  ASSERT_TRUE(facts->op_graph && facts->op_graph->captured());
  const PhaseResult<RunPlan> without = make_run_plan(run, *facts, knowledge_, false);
  ASSERT_TRUE(without);
  for (const auto& step : without->plan.steps) EXPECT_NE(step.region, "op graph");
  const PhaseResult<RunPlan> with = make_run_plan(run, *facts, knowledge_, true);
  ASSERT_TRUE(with);
  ASSERT_EQ(with->plan.steps.size(), without->plan.steps.size() + 3);
  const knowledge::Space spaces[] = {knowledge::Space::S1, knowledge::Space::S2, knowledge::Space::S3};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(with->plan.steps[i].region, "op graph");
    EXPECT_EQ(with->plan.steps[i].space, spaces[i]);
    EXPECT_EQ(with->plan.steps[i].budget, 3);
    EXPECT_TRUE(has_decision(run.result, with->plan.steps[i].reason));
  }
  EXPECT_TRUE(with->plan.decisions == without->plan.decisions);  // the planner's own decisions are unchanged
  EXPECT_TRUE(run.result.plan.contains("module_speed_of_light_ms"));
}

TEST(OptimizerPhaseParts, TheKnowledgeProposerProposesForTheGraphAndOthersDoNot) {
  const propose::recipes::RecipeProposer recipe_proposer(
      propose::recipes::RecipeProposer::KernelRewrites{});
  EXPECT_TRUE(recipe_proposer.proposes_for_graph());
  EXPECT_FALSE(ScriptedProposer("knowledge").proposes_for_graph());  // the name is no capability
}

TEST_F(OptimizerPhases, StopBeforeRoundsForMeasureOnlyAndWithoutProposers) {
  options_.measure_only = true;
  RunContext& run = start_kernel();
  const PhaseResult<ReferenceFacts> facts = measure_reference(run, client_, knowledge_);
  ASSERT_TRUE(facts);
  const PhaseResult<RunPlan> plan = make_run_plan(run, *facts, knowledge_, false);
  ASSERT_TRUE(plan);
  const auto ending = stop_before_rounds(run, *facts, *plan, true);
  ASSERT_TRUE(ending);
  EXPECT_EQ(ending->outcome, Outcome::NoImprovement);
  EXPECT_EQ(ending->message, "the reference measured: 0.1000 ms per call on Fake GPU (measure only: no candidates)");
  EXPECT_EQ(run.result.stop_reason, StopReason::MeasureOnly);

  options_.measure_only = false;
  run.result.stop_reason.reset();
  EXPECT_FALSE(stop_before_rounds(run, *facts, *plan, false));
  EXPECT_EQ(run.result.stop_reason, StopReason::NoProposer);
  EXPECT_EQ(run.result.stop_detail, "no proposer configured (no LLM endpoint, and the built-in proposer is not enabled)");
}

// The kernel's facts and plan, ready for rounds.
class OptimizerRounds : public OptimizerPhases {
 protected:
  void SetUp() override {
    options_.budget = 4;
    options_.candidates_per_round = 2;
    RunContext& run = start_kernel();
    auto measured = measure_reference(run, client_, knowledge_);
    ASSERT_TRUE(measured);
    facts_ = std::move(*measured);
    auto planned = make_run_plan(run, facts_, knowledge_, false);
    ASSERT_TRUE(planned);
    plan_ = std::move(*planned);
  }
  RoundInputs inputs(const std::vector<std::shared_ptr<propose::Proposer>>& proposers) {
    return RoundInputs{facts_, plan_, proposers, candidates_per_round(options_, pool_.size()),
                       round_profile_text(facts_, plan_.plan, run_->result.gpu)};
  }
  ReferenceFacts facts_;
  RunPlan plan_;
};

TEST_F(OptimizerRounds, ARoundProposesEvaluatesAndBooks) {
  RunContext& run = *run_;
  auto proposer = std::make_shared<ScriptedProposer>();
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{proposer};
  const RoundInputs in = inputs(proposers);
  RoundState state;
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  ASSERT_EQ(proposer->requests.size(), 1u);
  const propose::ProposalRequest& request = proposer->requests[0];
  EXPECT_EQ(request.count, 2);
  EXPECT_EQ(request.profile, in.profile_text);
  EXPECT_EQ(request.profile.rfind("reference: 0.1000 ms per call on Fake GPU\n", 0), 0u) << request.profile;
  EXPECT_NE(request.profile.find("  kernel fake_kernel: 2 calls, mean 100.00 us\n"), std::string::npos) << request.profile;
  EXPECT_EQ(request.language, propose::Language::Cuda);
  EXPECT_EQ(run.result.figures.proposed, 2);
  EXPECT_EQ(run.result.figures.correct, 2);
  EXPECT_EQ(run.result.figures.faster, 2);  // the fake's candidate: 0.05 ms, beyond the reference's spread
  ASSERT_EQ(run.result.attempts.size(), 2u);
  EXPECT_EQ(run.result.attempts[0].attempt.candidate.id, "c1");
  EXPECT_EQ(run.result.attempts[1].attempt.candidate.id, "c2");
  EXPECT_EQ(run.result.attempts[0].verdict, "passed");
  EXPECT_EQ(state.faster, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(state.history.size(), 2u);
  EXPECT_EQ(state.next_id, 3);
  ASSERT_EQ(state.outcomes.size(), 1u);
  EXPECT_EQ(state.outcomes[0].tried, 2);
  EXPECT_EQ(state.outcomes[0].correct, 2);
  ASSERT_TRUE(state.outcomes[0].best_speedup);
  EXPECT_DOUBLE_EQ(*state.outcomes[0].best_speedup, 2.0);
  EXPECT_FALSE(state.best_source.empty());
  EXPECT_EQ(run.best_speedup, 2.0);
  // The second round sees the first's attempts and the best so far; then the budget is spent.
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  EXPECT_EQ(proposer->requests[1].history.size(), 2u);
  // What each candidate was made of reaches the next request with its verdict (the knowledge proposer composes from it).
  ASSERT_EQ(proposer->requests[1].history[1].candidate.parts.size(), 1u);
  EXPECT_EQ(proposer->requests[1].history[1].candidate.parts[0].key, "part:2");
  EXPECT_TRUE(proposer->requests[1].history[1].correct);
  EXPECT_EQ(proposer->requests[1].current_best_source, proposer->requests[1].history[0].candidate.source);
  EXPECT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Stop);
  EXPECT_EQ(run.result.stop_reason, StopReason::BudgetSpent);
  EXPECT_EQ(run.result.figures.proposed, 4);
}

TEST_F(OptimizerRounds, ARepeatedSourceIsRejectedWithoutAnEvaluation) {
  RunContext& run = *run_;
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{std::make_shared<ScriptedProposer>("same", true)};
  RoundInputs in = inputs(proposers);
  in.parallel = 1;  // one candidate a round: the second round's is the first's again
  RoundState state;
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  ASSERT_EQ(run.result.attempts.size(), 2u);
  EXPECT_EQ(run.result.attempts[0].verdict, "passed");
  EXPECT_EQ(run.result.attempts[1].verdict, "rejected");
  EXPECT_EQ(run.result.attempts[1].attempt.failures,
            (std::vector<std::string>{"proposer: the same code as c1, already evaluated"}));
  EXPECT_EQ(run.result.figures.rejected, 1);
  EXPECT_EQ(run.result.figures.correct, 1);
  EXPECT_EQ(state.history.size(), 2u);
  EXPECT_EQ(state.outcomes.back().tried, 2);
}

TEST_F(OptimizerRounds, ProposersTakeTurnsAndOneWithNothingNewIsNotAskedAgain) {
  RunContext& run = *run_;
  auto first = std::make_shared<ScriptedProposer>("first", false, 0);  // never has anything
  auto second = std::make_shared<ScriptedProposer>("second", false, 0);
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{first, second};
  const RoundInputs in = inputs(proposers);
  RoundState state;
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  EXPECT_EQ(first->requests.size(), 1u);
  EXPECT_EQ(second->requests.size(), 1u);
  EXPECT_TRUE(has_decision(run.result, "first has nothing new for "));
  EXPECT_TRUE(has_decision(run.result, "second has nothing new for "));
  // Both exhausted at the step: it is finished, and with no step left the run stops.
  ASSERT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Continue);
  EXPECT_TRUE(state.outcomes.back().exhausted);
  EXPECT_EQ(run_round(run, client_, knowledge_, in, state), RoundOutcome::Stop);
  EXPECT_EQ(run.result.stop_reason, StopReason::PlanExhausted);
  EXPECT_EQ(run.result.figures.proposed, 0);
}

TEST_F(OptimizerRounds, RunRoundsStopsAtTheTimeLimit) {
  RunContext& run = *run_;
  run.time_limit_s = 0.0;
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{std::make_shared<ScriptedProposer>()};
  const RoundState state = run_rounds(run, client_, knowledge_, inputs(proposers));
  EXPECT_TRUE(state.outcomes.empty());
  EXPECT_EQ(run.result.stop_reason, StopReason::TimeLimit);
  EXPECT_EQ(run.result.stop_detail.rfind("time limit reached after ", 0), 0u) << run.result.stop_detail;
}

TEST_F(OptimizerRounds, DeliverVerifiesTheFastestInItsDeliveredForm) {
  RunContext& run = *run_;
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{std::make_shared<ScriptedProposer>()};
  const RoundState state = run_rounds(run, client_, knowledge_, inputs(proposers));
  ASSERT_EQ(state.faster.size(), 4u);
  const std::optional<BestResult> best = deliver(run, client_, facts_, plan_.spec, state.faster);
  ASSERT_TRUE(best);
  EXPECT_TRUE(best->evaluation.passed());
  EXPECT_DOUBLE_EQ(best->speedup, 2.0);
  EXPECT_EQ(best->candidate.id, "c1");  // equal speedups: the first stays first
  EXPECT_EQ(best->delivered_source, best->candidate.source);  // a kernel is delivered as its source
  EXPECT_EQ(best->file, run.result.run_dir / "best.cu");
  EXPECT_TRUE(std::filesystem::exists(best->file));
  EXPECT_FALSE(run.result.best);  // the caller sets it
  int deliveries = 0;
  for (const auto& e : events(run.result.run_dir)) deliveries += e["event"] == "delivery" ? 1 : 0;
  EXPECT_EQ(deliveries, 1);
  run.result.best = best;
  const Ending ending = delivered_ending(run.result);
  EXPECT_EQ(ending.outcome, Outcome::Improved);
  EXPECT_EQ(ending.message, "c1 is 2.00x faster than the reference, verified in its delivered form");
}

TEST_F(OptimizerRounds, DeliverWithNothingFasterDeliversNothing) {
  RunContext& run = *run_;
  EXPECT_FALSE(deliver(run, client_, facts_, plan_.spec, {}));
  const Ending ending = delivered_ending(run.result);
  EXPECT_EQ(ending.outcome, Outcome::NoImprovement);
  EXPECT_EQ(ending.message, "0 candidates tried, 0 correct, none verified faster");
}

TEST_F(OptimizerPhases, FinishWritesTheRunDirectoryAndEndsErrorsWithTheirReason) {
  RunContext& run = start_kernel();
  const OptimizeResult result = finish(run, {Outcome::Error, "it broke"});
  EXPECT_EQ(result.outcome, Outcome::Error);
  EXPECT_EQ(result.stop_reason, StopReason::Error);
  EXPECT_EQ(result.stop_detail, "it broke");
  EXPECT_TRUE(std::filesystem::exists(result.run_dir / "result.json"));
  EXPECT_TRUE(std::filesystem::exists(result.run_dir / "report.md"));
  const auto all = events(result.run_dir);
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all.back()["event"], "done");
  EXPECT_EQ(all[all.size() - 2]["event"], "time");
}

TEST(OptimizerPhaseParts, NextProposerTakesTurnsAndSkipsTheExhausted) {
  const std::vector<std::shared_ptr<propose::Proposer>> proposers{std::make_shared<ScriptedProposer>("a"),
                                                                  std::make_shared<ScriptedProposer>("b")};
  EXPECT_EQ(next_proposer(proposers, 0, {})->name(), "a");
  EXPECT_EQ(next_proposer(proposers, 1, {})->name(), "b");
  EXPECT_EQ(next_proposer(proposers, 2, {})->name(), "a");
  EXPECT_EQ(next_proposer(proposers, 0, {"a"})->name(), "b");
  EXPECT_EQ(next_proposer(proposers, 1, {"b"})->name(), "a");
  EXPECT_EQ(next_proposer(proposers, 0, {"a", "b"}), nullptr);
  EXPECT_EQ(next_proposer({}, 0, {}), nullptr);
}

TEST(OptimizerPhaseParts, CandidatesPerRoundIsTheOptionOrOnePerWorker) {
  OptimizeOptions options;
  EXPECT_EQ(candidates_per_round(options, 4), 4);
  EXPECT_EQ(candidates_per_round(options, 0), 1);
  options.candidates_per_round = 3;
  EXPECT_EQ(candidates_per_round(options, 8), 3);
}

TEST(OptimizerPhaseParts, PromptProfileReadsTheWorkersCountersAndKernels) {
  KernelProfile worker;
  for (int i = 0; i < 10; ++i) worker.kernels.push_back({"k" + std::to_string(i), std::nullopt, std::nullopt, i, 1500 * i, 1500});
  worker.counters = ProfileCounters{81.25, 40.0, 62.5};
  propose::ReferenceProfile profile = prompt_profile(worker);
  ASSERT_TRUE(profile.counters);
  EXPECT_EQ(profile.counters->dram_throughput_pct, 81.25);
  EXPECT_EQ(profile.counters->achieved_occupancy_pct, 62.5);
  ASSERT_EQ(profile.kernels.size(), static_cast<std::size_t>(propose::kPromptKernels));
  EXPECT_EQ(profile.kernels[3].name, "k3");
  EXPECT_EQ(profile.kernels[3].calls, 3);
  EXPECT_EQ(profile.kernels[3].mean_ns, 1500.0);
  KernelProfile unavailable;
  unavailable.metrics_unavailable = "no";
  EXPECT_FALSE(prompt_profile(unavailable).counters);
  EXPECT_TRUE(prompt_profile(KernelProfile{}).kernels.empty());

  profile.reference_ms = 0.25;
  profile.gpu = "NVIDIA H200";
  profile.regions = {{"module", "memory-bound"}};
  profile.kernels.resize(2);
  EXPECT_EQ(propose::profile_text(profile),
            "reference: 0.2500 ms per call on NVIDIA H200\n"
            "- module: memory-bound\n"
            "hardware counters (CUPTI): DRAM throughput 81.2% of peak, SM throughput 40.0%, achieved occupancy 62.5%\n"
            "  kernel k0: 0 calls, mean 1.50 us\n"
            "  kernel k1: 1 calls, mean 1.50 us\n");
}

TEST(OptimizerPhaseParts, ProfileTextListsAtMostThePromptsKernels) {
  propose::ReferenceProfile profile;
  profile.gpu = "cpu";
  for (int i = 0; i < 12; ++i) profile.kernels.push_back({"k", 1, 0.0});
  const std::string text = propose::profile_text(profile);
  std::size_t lines = 0;
  for (std::size_t at = text.find("  kernel "); at != std::string::npos; at = text.find("  kernel ", at + 1)) ++lines;
  EXPECT_EQ(lines, static_cast<std::size_t>(propose::kPromptKernels));
  EXPECT_EQ(text.rfind("reference: 0.0000 ms per call on cpu\n", 0), 0u);
}

}  // namespace
}  // namespace hiera::engine::optimize
