#include "engine/optimize/run_context.h"

#include <cstdio>

#include "engine/optimize/report.h"
#include "engine/spec/annotations.h"
#include "engine/spec/worker_task.h"
#include "engine/common/number_text.h"

namespace hiera::engine::optimize {

using nlohmann::json;

void RunContext::report(const std::string& phase, const std::string& message) {
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

void RunContext::decide(const std::string& decision) {
  result.decisions.push_back(decision);
  if (log) log->write("decision", {{"text", decision}});
}

bool RunContext::out_of_time() const { return seconds_since(start) >= time_limit_s; }

std::optional<Ending> open_run_log(RunContext& run, std::size_t workers, const std::vector<std::string>& proposers) {
  const Target& target = run.options.target;
  try {
    run.log = std::make_unique<RunLog>(new_run_directory(run.options.runs_dir, target.file.stem().string(), target.symbol));
    run.result.run_dir = run.log->directory();
  } catch (const std::exception& e) {
    return Ending{Outcome::Error, e.what()};
  }
  run.log->write("start", {{"target", run.result.target}, {"file", target.file.string()},
                           {"kind", spec::to_string(target.kind)}, {"workers", workers}, {"proposers", proposers}});
  return std::nullopt;
}

OptimizeResult finish(RunContext& run, Ending ending) {
  OptimizeResult& result = run.result;
  const Outcome outcome = ending.outcome;
  result.outcome = outcome;
  result.message = std::move(ending.message);
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
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string failure_text(const eval::CheckFailure& f) { return f.check + ": " + f.message; }

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

}  // namespace hiera::engine::optimize
