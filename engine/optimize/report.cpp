#include "engine/optimize/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/propose/compile_proposer.h"
#include "engine/common/gpu_ceilings.h"
#include "engine/common/number_text.h"

namespace hiera::engine::optimize {

namespace {

// 1e-4, 1.7e-4, 0: tolerances and errors as one writes them.
std::string short_number(double value) {
  if (value == 0.0) return "0";
  char text[64];
  std::snprintf(text, sizeof text, "%.2e", value);
  std::string s = text;
  const std::size_t e = s.find('e');
  if (e == std::string::npos) return s;  // inf, nan
  std::string mantissa = s.substr(0, e);
  std::string exponent = s.substr(e + 1);
  while (mantissa.find('.') != std::string::npos && (mantissa.back() == '0' || mantissa.back() == '.')) {
    const bool dot = mantissa.back() == '.';
    mantissa.pop_back();
    if (dot) break;
  }
  const char sign = exponent.front();
  exponent.erase(0, 1);
  while (exponent.size() > 1 && exponent.front() == '0') exponent.erase(0, 1);
  return mantissa + "e" + (sign == '-' ? "-" : "") + exponent;
}

std::string cell(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '|') c = c == '|' ? '/' : ' ';
  }
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return text;
}

nlohmann::json stats_json(const eval::TimingStats& s) {
  return {{"median_ms", s.median_ms}, {"min_ms", s.min_ms}, {"p10_ms", s.p10_ms}, {"p90_ms", s.p90_ms}, {"trials", s.trials}};
}

nlohmann::json timing_json(const std::optional<eval::Timing>& t) {
  if (!t) return nullptr;
  return {{"reference", stats_json(t->reference)}, {"candidate", stats_json(t->candidate)}, {"speedup", t->speedup}};
}

nlohmann::json trials_json(const std::vector<eval::Trial>& trials) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : trials) {
    nlohmann::json trial = {{"seed", t.seed}, {"distribution", t.distribution}, {"sizes", t.sizes},
                            {"max_abs_error", t.max_abs_error}, {"max_rel_error", t.max_rel_error},
                            {"mismatches", t.mismatches}};
    if (t.float64_arbitrated > 0) {
      trial["float64_arbitrated"] = t.float64_arbitrated;
      if (t.max_abs_error_float64) trial["max_abs_error_float64"] = *t.max_abs_error_float64;
      if (t.reference_error_float64) trial["reference_error_float64"] = *t.reference_error_float64;
    }
    out.push_back(std::move(trial));
  }
  return out;
}

nlohmann::json candidate_json(const propose::Candidate& c) {
  nlohmann::json out = {{"id", c.id}, {"proposer", c.proposer}, {"space", knowledge::to_string(c.space)},
                        {"region", c.region}, {"recipes", c.recipes}, {"notes", c.notes},
                        {"usage", {{"prompt_tokens", c.usage.prompt_tokens}, {"completion_tokens", c.usage.completion_tokens},
                                   {"from_cache", c.usage.from_cache}}}};
  if (!c.kernel.empty()) out["kernel"] = c.kernel;
  if (c.rejected) out["rejected"] = *c.rejected;
  if (!c.parts.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : c.parts) {
      parts.push_back({{"key", p.key}, {"recipe", p.recipe}, {"space", knowledge::to_string(p.space)},
                       {"region", p.region}, {"description", p.description},
                       {"before_ms", p.before_ms ? nlohmann::json(*p.before_ms) : nlohmann::json(nullptr)},
                       {"forward_ms", p.forward_ms ? nlohmann::json(*p.forward_ms) : nlohmann::json(nullptr)},
                       {"least_work", p.least_work ? nlohmann::json{{"flops", p.least_work->flops},
                                                                    {"bytes", p.least_work->bytes},
                                                                    {"peak", p.least_work->peak}}
                                                   : nlohmann::json(nullptr)}});
    }
    out["parts"] = std::move(parts);
    if (c.parts_under_compile) out["parts_under_compile"] = true;
  }
  return out;
}

// The best speedup this run measured for a candidate made of `part` only.
std::optional<double> alone_speedup(const OptimizeResult& r, const propose::CandidatePart& part) {
  std::optional<double> best;
  for (const auto& a : r.attempts) {
    const auto& c = a.attempt.candidate;
    // A compiled composition's speedup is torch.compile's with the part, not the part's alone.
    if (!a.attempt.correct || !a.attempt.speedup || c.parts.size() != 1 || c.parts.front().key != part.key ||
        c.parts_under_compile)
      continue;
    if (!best || *a.attempt.speedup > *best) best = a.attempt.speedup;
  }
  return best;
}

// A region's least work at the ceilings the plan used (its "ceilings": bandwidth and peaks by dtype): the
// slower of moving its bytes and computing its flops, or nullopt without ceilings or a peak for its flops.
std::optional<double> region_speed_of_light_ms(const nlohmann::json& plan, const graph::RegionWork& work) {
  if (!plan.is_object() || !plan.contains("ceilings")) return std::nullopt;
  const auto& c = plan["ceilings"];
  const double bandwidth = c.value("bandwidth_gbs", 0.0);
  double peak = 0.0;
  if (c.contains("tflops") && c["tflops"].is_object()) {
    peak = c["tflops"].value(work.peak, 0.0);
    if (work.peak == "float32") {  // float32's accuracy as 3xTF32 where that is faster (gpu_ceilings.h)
      std::map<std::string, double> peaks;
      for (const auto& [name, rate] : c["tflops"].items())
        if (rate.is_number()) peaks[name] = rate.get<double>();
      peak = float32_accurate_tflops(peaks);
    }
  }
  if (bandwidth <= 0.0 || (work.flops > 0.0 && peak <= 0.0)) return std::nullopt;
  const double byte_ms = work.bytes / (bandwidth * 1e9) * 1e3;
  const double flop_ms = work.flops > 0.0 ? work.flops / (peak * 1e12) * 1e3 : 0.0;
  const double sol = std::max(byte_ms, flop_ms);
  return sol > 0.0 ? std::optional<double>(sol) : std::nullopt;
}

// The other candidates of the run that passed with `part` among theirs ("c1, c4"), "-" when none: where a
// stitched module's parts were verified before it.
std::string verified_in(const OptimizeResult& r, const propose::CandidatePart& part, const std::string& best_id) {
  std::string ids;
  for (const auto& a : r.attempts) {
    const auto& c = a.attempt.candidate;
    if (!a.attempt.correct || c.id == best_id) continue;
    const bool has = std::any_of(c.parts.begin(), c.parts.end(), [&](const auto& q) { return q.key == part.key; });
    if (has) ids += (ids.empty() ? "" : ", ") + c.id;
  }
  return ids.empty() ? "-" : ids;
}

// What each region of the delivered module got: one row per part, with what that part alone measured.
std::string parts_markdown(const OptimizeResult& r, const BestResult& best) {
  const auto& parts = best.candidate.parts;
  if (parts.empty()) return {};
  std::string md = "What each region got (a region is named by the graph node it produces; \"before\" is the "
                   "reference's time in the nodes it replaces: their share of the capture's per-node profile, of the "
                   "reference's timed run; \"alone\" the "
                   "best verified speedup of a candidate made of that rewrite only, in this run, and \"after alone\" "
                   "the time before less what it saved alone; \"of speed of light\" the region's least work at the "
                   "GPU's ceilings against its time after alone, left out where that estimate is beyond 100% (the "
                   "two measurements' error); \"also verified in\" the other candidates of this run "
                   "that passed with it):\n\n"
                   "| region | space | recipe | change | before | alone | time saved alone | after alone | of speed of light "
                   "| also verified in |\n|---|---|---|---|---|---|---|---|---|---|\n";
  const auto& timing = best.evaluation.timing;
  const auto ms = [](std::optional<double> v) { return v ? fixed(*v, 4) + " ms" : std::string("-"); };
  for (const auto& p : parts) {
    const auto alone = alone_speedup(r, p);
    std::optional<double> saved, after, before = p.before_ms;
    // The profile's share of the forward, in the timer's milliseconds: saved is in those.
    if (before && p.forward_ms && *p.forward_ms > 0.0 && timing) before = *before / *p.forward_ms * timing->reference.median_ms;
    if (alone && timing) saved = timing->reference.median_ms * (1.0 - 1.0 / *alone);
    if (saved && before) after = std::max(0.0, *before - *saved);
    std::string share = "-";
    const auto sol = p.least_work ? region_speed_of_light_ms(r.plan, *p.least_work) : std::nullopt;
    if (sol && after && *after > 0.0 && *sol <= *after) share = fixed(100.0 * *sol / *after, 1) + "%";
    md += "| " + cell(p.region) + " | " + knowledge::to_string(p.space) + " | " + p.recipe + " | " + cell(p.description) +
          " | " + ms(before) + " | " + (alone ? fixed(*alone, 2) + "x" : std::string("-")) + " | " + ms(saved) +
          " | " + ms(after) + " | " + share + " | " + verified_in(r, p, best.candidate.id) + " |\n";
  }
  return md + "\n";
}

nlohmann::json kernelbench_json(const std::optional<eval::KernelBenchVerdict>& k) {
  if (!k) return nullptr;
  return {{"passed", k->passed}, {"trials", k->trials}, {"atol", k->atol}, {"rtol", k->rtol},
          {"max_abs_error", k->max_abs_error ? nlohmann::json(*k->max_abs_error) : nlohmann::json(nullptr)},
          {"message", k->message}};
}

std::string arbitration_text(const std::vector<eval::Trial>& trials) {
  std::int64_t accepted = 0;
  double worst64 = 0.0, reference64 = 0.0, worst32 = 0.0;
  for (const auto& t : trials) {
    if (t.float64_arbitrated <= 0) continue;
    accepted += t.float64_arbitrated;
    worst32 = std::max(worst32, t.max_abs_error);
    worst64 = std::max(worst64, t.max_abs_error_float64.value_or(0.0));
    reference64 = std::max(reference64, t.reference_error_float64.value_or(0.0));
  }
  if (accepted == 0) return {};
  return std::to_string(accepted) + " element(s) beyond the tolerance against the reference's own output (max abs error " +
         short_number(worst32) + ") were accepted against a float64 run of the reference: max abs error " +
         short_number(worst64) + " against float64, where the reference itself is off by up to " +
         short_number(reference64) + ".\n\n";
}

std::string verdicts_disagree_text(const eval::Evaluation& e) {
  // hiera passed it (the delivered form is verified); KernelBench's allclose against the float32 output did not.
  double worst32 = 0.0;
  std::optional<double> worst64;
  for (const auto& t : e.trials) {
    worst32 = std::max(worst32, t.max_abs_error);
    if (t.max_abs_error_float64) worst64 = std::max(worst64.value_or(0.0), *t.max_abs_error_float64);
  }
  std::string text = "**hiera's verdict and KernelBench's disagree**: hiera passed it; KernelBench's criterion failed";
  if (e.kernelbench->max_abs_error) text += " with a max abs error of " + short_number(*e.kernelbench->max_abs_error);
  text += " against the reference's output. In hiera's trials: " + short_number(worst32) +
          " against the reference's output";
  text += worst64 ? ", " + short_number(*worst64) + " against a float64 run of the reference.\n\n"
                  : " (no element needed the float64 arbiter).\n\n";
  return text;
}

}  // namespace

std::string kernelbench_text(const eval::KernelBenchVerdict& k) {
  const std::string tolerances = k.atol == k.rtol ? "atol=rtol=" + short_number(k.atol)
                                                  : "atol=" + short_number(k.atol) + ", rtol=" + short_number(k.rtol);
  std::string text = "KernelBench criterion (" + std::to_string(k.trials) + " trials, allclose " + tolerances + "): " +
                     (k.passed ? "passed" : "failed");
  if (k.max_abs_error) text += ", max abs error " + short_number(*k.max_abs_error);
  if (!k.passed && !k.message.empty()) text += " (" + k.message + ")";
  return text;
}

std::optional<CompileUse> compile_use(const BestResult& best) {
  const std::string& source = best.delivered_source.empty() ? best.candidate.source : best.delivered_source;
  const std::optional<std::string> mode = propose::torch_compile_mode(source);
  if (!mode) return std::nullopt;
  CompileUse use{*mode, std::nullopt};
  for (const auto& phase : best.evaluation.phases) {
    if (phase.name == "first_call") use.first_call_s = phase.ms / 1e3;
  }
  return use;
}

std::string compile_use_text(const CompileUse& use) {
  std::string text = "The delivered module calls torch.compile (mode " + use.mode + "); its first call ";
  if (use.first_call_s) {
    text += "took " + fixed(*use.first_call_s, *use.first_call_s < 1.0 ? 2 : 1) + " s (compilation)";
  } else {
    text += "compiles (its time was not measured)";
  }
  return text + ", later calls are timed.";
}

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::Improved: return "improved";
    case Outcome::NoImprovement: return "no_improvement";
    case Outcome::Cancelled: return "cancelled";
    case Outcome::Error: return "error";
  }
  return "?";
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::BudgetSpent: return "budget_spent";
    case StopReason::TimeLimit: return "time_limit";
    case StopReason::PlanExhausted: return "plan_exhausted";
    case StopReason::NearSpeedOfLight: return "near_speed_of_light";
    case StopReason::Cancelled: return "cancelled";
    case StopReason::MeasureOnly: return "measure_only";
    case StopReason::NoProposer: return "no_proposer";
    case StopReason::Error: return "error";
  }
  return "?";
}

const char* describe(StopReason reason) {
  switch (reason) {
    case StopReason::BudgetSpent: return "the candidate budget was spent";
    case StopReason::TimeLimit: return "the time limit was reached";
    case StopReason::PlanExhausted: return "the plan was exhausted";
    case StopReason::NearSpeedOfLight: return "the result is near the speed of light";
    case StopReason::Cancelled: return "it was cancelled";
    case StopReason::MeasureOnly: return "only the reference was to be measured";
    case StopReason::NoProposer: return "there is no proposer";
    case StopReason::Error: return "of an error";
  }
  return "?";
}

std::string timing_text(const eval::TimingStats& s) {
  return fixed(s.median_ms, 4) + " ms (p10 " + fixed(s.p10_ms, 4) + ", p90 " + fixed(s.p90_ms, 4) + ", " +
         std::to_string(s.trials) + " trials)";
}

// Which worker evaluated which candidate, and the runs lost with a worker
// (requeued, elsewhere or on the restarted worker); empty when no attempt reached a worker.
static std::string workers_markdown(const OptimizeResult& r) {
  std::map<int, std::vector<std::string>> commands;
  std::map<int, std::vector<std::string>> evaluated;
  std::vector<std::string> lost;
  for (const auto& a : r.attempts) {
    if (a.worker >= 0) {
      commands.emplace(a.worker, a.worker_command);
      evaluated[a.worker].push_back(a.attempt.candidate.id);
    }
    for (const auto& l : a.lost) {
      commands.emplace(l.worker, l.worker_command);
      lost.push_back(a.attempt.candidate.id + " on worker " + std::to_string(l.worker) + ": " + l.failure.message);
    }
  }
  if (commands.empty()) return "";
  std::string md = "\n## Workers\n\n| worker | command | evaluated |\n|---|---|---|\n";
  for (const auto& [index, command] : commands) {
    std::string line;
    for (const auto& word : command) line += (line.empty() ? "" : " ") + word;
    std::string ids;
    for (const auto& id : evaluated[index]) ids += (ids.empty() ? "" : ", ") + id;
    md += "| " + std::to_string(index) + " | `" + cell(line) + "` | " + (ids.empty() ? std::string("-") : ids) + " |\n";
  }
  md += "\nEach speed-up is the candidate and the reference timed side by side in one job on one worker's GPU; "
        "absolute times are compared only between runs on the same GPU model.\n";
  if (!lost.empty()) {
    md += "\nLost with their worker and run again (on another worker, or on the same one once restarted):\n\n";
    for (const auto& l : lost) md += "- " + cell(l) + "\n";
  }
  return md;
}

namespace {

// What isolated the candidates, as the worker reported it for the first candidate process.
nlohmann::json isolation_json(const OptimizeResult& r) {
  if (r.candidate_isolation.empty()) return nullptr;
  nlohmann::json protections = nlohmann::json::object();
  for (const auto& p : r.candidate_isolation) protections[p.name] = p.state;
  return {{"candidate", r.candidate_isolation_of}, {"protections", protections}};
}

std::string isolation_markdown(const OptimizeResult& r) {
  if (r.candidate_isolation.empty()) return "";  // no candidate reached a worker
  std::size_t missing = 0;
  for (const auto& p : r.candidate_isolation) missing += p.in_force() ? 0 : 1;
  std::string md = "## Candidate isolation\n\nEach candidate ran in a process of its own; what was in force for the first (" +
                   r.candidate_isolation_of + "): " +
                   (missing == 0 ? std::string("every protection") :
                                   std::to_string(missing) + " of " + std::to_string(r.candidate_isolation.size()) +
                                       " protections not in force") +
                   ".\n\n| protection | state |\n|---|---|\n";
  for (const auto& p : r.candidate_isolation) md += "| " + p.name + " | " + p.state + " |\n";
  return md + "\n";
}

}  // namespace

nlohmann::json to_json(const OptimizeResult& r) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : r.attempts) {
    nlohmann::json item = candidate_json(a.attempt.candidate);
    item["verdict"] = a.verdict;
    item["step"] = a.step;
    item["compiled"] = a.attempt.compiled;
    item["correct"] = a.attempt.correct;
    item["speedup"] = a.attempt.speedup ? nlohmann::json(*a.attempt.speedup) : nlohmann::json(nullptr);
    item["failures"] = a.attempt.failures;
    item["timing"] = timing_json(a.timing);
    item["trials"] = trials_json(a.trials);
    item["worker"] = a.worker;
    item["worker_command"] = a.worker_command;
    nlohmann::json lost = nlohmann::json::array();
    for (const auto& l : a.lost) {
      lost.push_back({{"worker", l.worker}, {"worker_command", l.worker_command}, {"reason", l.failure.message},
                      {"ran_ms", l.ran.count()}});
    }
    item["lost"] = std::move(lost);
    attempts.push_back(std::move(item));
  }
  nlohmann::json best = nullptr;
  if (r.best) {
    best = candidate_json(r.best->candidate);
    best["speedup"] = r.best->speedup;
    best["delivered_source"] = r.best->delivered_source;
    best["file"] = r.best->file.string();
    best["timing"] = timing_json(r.best->evaluation.timing);
    best["trials"] = trials_json(r.best->evaluation.trials);
    best["speed_of_light_ms"] = r.best->evaluation.speed_of_light_ms ? nlohmann::json(*r.best->evaluation.speed_of_light_ms)
                                                                     : nlohmann::json(nullptr);
    best["kernelbench"] = kernelbench_json(r.best->evaluation.kernelbench);
    best["torch_compile"] = nullptr;
    if (const auto use = compile_use(*r.best)) {
      best["torch_compile"] = {{"mode", use->mode},
                               {"first_call_s", use->first_call_s ? nlohmann::json(*use->first_call_s) : nlohmann::json(nullptr)},
                               {"note", compile_use_text(*use)}};
    }
  }
  const Figures& f = r.figures;
  return {{"outcome", to_string(r.outcome)},
          {"message", r.message},
          {"stopped", r.stop_reason ? nlohmann::json{{"reason", to_string(*r.stop_reason)}, {"detail", r.stop_detail}}
                                    : nlohmann::json(nullptr)},
          {"target", r.target},
          {"gpu", r.gpu},
          {"spec", r.spec},
          {"plan", r.plan},
          {"decisions", r.decisions},
          {"reference_timing", timing_json(r.reference_timing)},
          {"best", best},
          {"attempts", attempts},
          {"candidate_isolation", isolation_json(r)},
          {"figures", {{"proposed", f.proposed}, {"rejected", f.rejected}, {"compiled", f.compiled}, {"correct", f.correct},
                       {"faster", f.faster}, {"prompt_tokens", f.prompt_tokens}, {"completion_tokens", f.completion_tokens}}},
          {"wall_s", r.wall_s},
          {"time_breakdown", to_json(r.time_breakdown)},
          {"run_dir", r.run_dir.string()}};
}

std::string to_markdown(const OptimizeResult& r) {
  std::string md = "# hiera optimize: " + r.target + "\n\n";
  md += "- Outcome: **" + std::string(to_string(r.outcome)) + "**: " + r.message + "\n";
  if (r.stop_reason) {
    md += "- Stopped because " + std::string(describe(*r.stop_reason)) +
          (r.stop_detail.empty() || r.stop_detail == r.message ? std::string() : ": " + r.stop_detail) + "\n";
  }
  md += "- GPU: " + (r.gpu.empty() ? std::string("(none)") : r.gpu) + "\n";
  md += "- Wall time: " + fixed(r.wall_s, 1) + " s\n";
  if (!r.run_dir.empty()) md += "- Run directory: `" + r.run_dir.string() + "` (run.jsonl holds every event)\n";
  md += "\n## Result\n\n";
  if (r.best) {
    const auto& e = r.best->evaluation;
    md += "Best: **" + r.best->candidate.id + "** (" + r.best->candidate.proposer + ", " +
          knowledge::to_string(r.best->candidate.space) + "), **" + fixed(r.best->speedup, 2) +
          "x** faster, verified again in its delivered form";
    if (!r.best->file.empty()) md += " (`" + r.best->file.filename().string() + "`)";
    md += ".\n\n";
    if (const auto use = compile_use(*r.best)) md += compile_use_text(*use) + "\n\n";
    md += parts_markdown(r, *r.best);
    if (e.timing) {
      md += "| | time |\n|---|---|\n";
      md += "| reference | " + timing_text(e.timing->reference) + " |\n";
      md += "| candidate | " + timing_text(e.timing->candidate) + " |\n";
      if (e.speed_of_light_ms) md += "| speed of light | " + fixed(*e.speed_of_light_ms, 4) + " ms |\n";
      md += "\n";
    }
    md += "Verification trials (delivered form):\n\n| seed | distribution | max abs error | max rel error | mismatches |\n|---|---|---|---|---|\n";
    for (const auto& t : e.trials) {
      char line[256];
      std::snprintf(line, sizeof line, "| %lld | %s | %.3g | %.3g | %lld |\n", static_cast<long long>(t.seed),
                    t.distribution.c_str(), t.max_abs_error, t.max_rel_error, static_cast<long long>(t.mismatches));
      md += line;
    }
    md += "\n";
    md += arbitration_text(e.trials);
    if (e.kernelbench) md += kernelbench_text(*e.kernelbench) + ".\n\n";
    if (e.kernelbench && !e.kernelbench->passed) md += verdicts_disagree_text(e);
  } else {
    md += "No candidate was verified faster than the reference; the source is unchanged.\n\n";
  }
  if (r.reference_timing) md += "Reference timed against itself: " + timing_text(r.reference_timing->reference) + ".\n\n";
  md += isolation_markdown(r);

  const Figures& f = r.figures;
  md += "## Sample efficiency\n\n| proposed | rejected replies | compiled | correct | faster | prompt tokens | completion tokens |\n"
        "|---|---|---|---|---|---|---|\n";
  md += "| " + std::to_string(f.proposed) + " | " + std::to_string(f.rejected) + " | " + std::to_string(f.compiled) + " | " +
        std::to_string(f.correct) + " | " + std::to_string(f.faster) + " | " + std::to_string(f.prompt_tokens) + " | " +
        std::to_string(f.completion_tokens) + " |\n\n";

  md += "## Attempts\n\n| candidate | proposer | step | verdict | speedup | reason |\n|---|---|---|---|---|---|\n";
  for (const auto& a : r.attempts) {
    const auto& c = a.attempt.candidate;
    std::string reason = c.rejected ? *c.rejected : (a.attempt.failures.empty() ? "" : a.attempt.failures.front());
    if (reason.empty() && a.attempt.correct) reason = a.attempt.speedup && *a.attempt.speedup > 1.0 ? "verified" : "verified, not faster";
    md += "| " + c.id + " | " + c.proposer + " | " + cell(a.step) + " | " + a.verdict + " | " +
          (a.attempt.speedup ? fixed(*a.attempt.speedup, 2) + "x" : std::string("-")) + " | " + cell(reason) + " |\n";
  }
  md += workers_markdown(r);
  md += "\n" + time_breakdown_markdown(r.time_breakdown);
  md += "\n## Plan\n\n" + (r.plan_markdown.empty() ? std::string("(no plan)\n") : r.plan_markdown) + "\n";
  if (!r.decisions.empty()) {
    md += "## Decisions\n\n";
    for (const auto& d : r.decisions) md += "- " + d + "\n";
    md += "\n";
  }
  md += "## Task spec\n\n" + (r.spec_markdown.empty() ? std::string("(no spec)\n") : r.spec_markdown) + "\n";
  return md;
}

}  // namespace hiera::engine::optimize
