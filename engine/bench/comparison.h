#pragma once
// The final side-by-side measurement of one problem, in ONE evaluate job: the
// reference (eager), what hiera hands back as the candidate (the delivered
// source of the best verified candidate, or the reference itself when nothing
// was faster) and, when asked, torch.compile(reference) as a baseline; and the
// ProblemResult made of the optimizer's result and that measurement.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bench/problem.h"
#include "engine/bench/problem_result.h"
#include "engine/eval/evaluation_client.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/optimizer.h"

namespace hiera::engine::bench {

// The worker task of the comparison, from the spec the optimizer built.
// Throws spec::SpecError when that spec does not convert.
nlohmann::json comparison_task(const optimize::Target& target, const optimize::OptimizeResult& result);

// The optimizer's trial counts, fresh inputs (a seed of its own), room for
// torch.compile and for building the delivered kernels, and the baselines
// other than eager (which is the reference side itself); KernelBench's criterion
// too when options.target is a PyTorch module.
// The delivered form's own evaluation when it timed every baseline asked for (the
// optimizer's delivery_baselines): the side-by-side measurement needs no job of its own.
std::optional<eval::Evaluation> delivery_as_comparison(const optimize::OptimizeResult& result,
                                                       const std::vector<std::string>& baselines);

eval::EvaluateOptions comparison_options(const optimize::OptimizeOptions& options, const std::vector<std::string>& baselines,
                                         const CancellationToken& cancel);

// The speed-of-light bound of the whole problem: the sum of its regions'
// bounds in the optimizer's plan; empty when the plan has none.
std::optional<double> plan_bound_ms(const nlohmann::json& plan);

// The spaces of a candidate's recipes (as the knowledge base files them), in
// order S1, S2, S3; the candidate's own space when none of its recipes is known.
std::vector<std::string> recipe_spaces(const propose::Candidate& candidate, const knowledge::KnowledgeBase& knowledge);

// Every candidate the optimizer was given, in proposal order, with its
// verdict and the hash of its code; no timing.
std::vector<CandidateVerdict> candidate_verdicts(const optimize::OptimizeResult& result);

// Everything but the provenance, the times and the pool size. `comparison`: the comparison job's
// evaluation; empty when the job could not be built, with `comparison_error`
// saying why. When the job failed as a job (timeout, crashed worker) the
// optimizer's own evidence stands in and `error` says so; when the delivered
// code failed a check in it, the problem is not correct.
// Where the problem's time went: the optimizer's breakdown, the side-by-side
// job (`measure_s` and its phases_ms; empty when it did not run), the whole.
ProblemTimeBreakdown problem_time_breakdown(const optimize::OptimizeResult& result,
                                            const std::optional<eval::Evaluation>& comparison,
                                            std::optional<double> measure_s, double total_s);

ProblemResult make_problem_result(const Problem& problem, const optimize::OptimizeResult& result,
                                  const std::optional<eval::Evaluation>& comparison, const std::string& comparison_error,
                                  const knowledge::KnowledgeBase& knowledge, bool with_compile);

}  // namespace hiera::engine::bench
