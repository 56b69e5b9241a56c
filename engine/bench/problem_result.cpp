#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

using nlohmann::json;

namespace {

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

std::optional<double> optional_double(const json& value, const char* key) {
  const json& field = value.at(key);
  if (field.is_null()) return std::nullopt;
  return field.get<double>();
}

json time_json(const std::optional<TimeSummary>& t) {
  if (!t) return nullptr;
  return {{"median_ms", t->median_ms}, {"p10_ms", t->p10_ms}, {"p90_ms", t->p90_ms}};
}

std::optional<TimeSummary> time_from_json(const json& value) {
  if (value.is_null()) return std::nullopt;
  return TimeSummary{value.at("median_ms").get<double>(), value.at("p10_ms").get<double>(), value.at("p90_ms").get<double>()};
}

// A field later hieras added: missing and null both read as empty.
const json* present(const json& value, const char* key) {
  const auto it = value.find(key);
  return it == value.end() || it->is_null() ? nullptr : &*it;
}

json verdicts_json(const std::optional<std::vector<CandidateVerdict>>& verdicts) {
  if (!verdicts) return nullptr;
  json out = json::array();
  for (const auto& v : *verdicts) {
    out.push_back({{"id", v.id}, {"recipes", v.recipes}, {"space", v.space}, {"source_sha256", v.source_sha256},
                   {"verdict", v.verdict}});
  }
  return out;
}

std::vector<CandidateVerdict> verdicts_from_json(const json& value) {
  std::vector<CandidateVerdict> out;
  for (const auto& v : value.get<std::vector<json>>()) {  // not an array: type_error
    out.push_back({v.at("id").get<std::string>(), v.at("recipes").get<std::vector<std::string>>(),
                   v.at("space").get<std::string>(), v.at("source_sha256").get<std::string>(),
                   v.at("verdict").get<std::string>()});
  }
  return out;
}

json kernelbench_json(const std::optional<eval::KernelBenchVerdict>& k) {
  if (!k) return nullptr;
  return {{"passed", k->passed}, {"trials", k->trials}, {"atol", k->atol}, {"rtol", k->rtol},
          {"max_abs_error", optional_json(k->max_abs_error)}, {"message", k->message}};
}

eval::KernelBenchVerdict kernelbench_from_json(const json& v) {
  eval::KernelBenchVerdict k;
  k.passed = v.at("passed").get<bool>();
  k.trials = v.at("trials").get<int>();
  k.atol = v.at("atol").get<double>();
  k.rtol = v.at("rtol").get<double>();
  k.max_abs_error = optional_double(v, "max_abs_error");
  k.message = v.at("message").get<std::string>();
  return k;
}

json optional_text(const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); }

// {"total_s", "optimize": optimize::to_json(TimeBreakdown), "measure": {"s", "phases_ms"} or null}.
json time_breakdown_json(const std::optional<ProblemTimeBreakdown>& t) {
  if (!t) return nullptr;
  json measure = nullptr;
  if (t->measure_s) {
    json phases = json::object();
    for (const auto& p : t->measure_phases) phases[p.name] = p.ms;
    measure = {{"s", *t->measure_s}, {"phases_ms", phases}};
  }
  return {{"total_s", t->total_s}, {"optimize", optimize::to_json(t->optimize)}, {"measure", measure}};
}

ProblemTimeBreakdown time_breakdown_from_json(const json& v) {
  ProblemTimeBreakdown t;
  t.total_s = v.at("total_s").get<double>();
  t.optimize = optimize::time_breakdown_from_json(v.at("optimize"));
  if (const json* measure = present(v, "measure")) {
    t.measure_s = measure->at("s").get<double>();
    for (const auto& [name, ms] : measure->at("phases_ms").get<std::map<std::string, double>>()) {
      t.measure_phases.push_back({name, ms});
    }
    eval::order_phases(t.measure_phases);
  }
  return t;
}

}  // namespace

std::filesystem::path result_path(const Problem& problem) {
  return (std::filesystem::path("problems") / problem.group / (problem.name + ".json")).lexically_normal();
}

json to_json(const ProblemResult& r) {
  return {{"name", r.name},
          {"group", r.group},
          {"file", r.file.string()},
          {"correct", r.correct},
          {"kernelbench", kernelbench_json(r.kernelbench)},
          {"speedup_eager", optional_json(r.speedup_eager)},
          {"speedup_compile", optional_json(r.speedup_compile)},
          {"times", {{"eager", time_json(r.times.eager)}, {"compile", time_json(r.times.compile)}, {"best", time_json(r.times.best)}}},
          {"sol_ms", optional_json(r.sol_ms)},
          {"sol_fraction", optional_json(r.sol_fraction)},
          {"spaces", r.spaces},
          {"recipes", r.recipes},
          {"candidates", {{"tried", r.candidates.tried}, {"correct", r.candidates.correct}, {"faster", r.candidates.faster}}},
          {"outcome", r.outcome},
          {"run_dir", r.run_dir.string()},
          {"started_at", optional_text(r.started_at)},
          {"finished_at", optional_text(r.finished_at)},
          {"workers", r.workers ? json(*r.workers) : json(nullptr)},
          {"candidate_verdicts", verdicts_json(r.candidate_verdicts)},
          {"time_breakdown", time_breakdown_json(r.time_breakdown)},
          {"error", r.error ? json(*r.error) : json(nullptr)},
          {"baseline_errors", r.baseline_errors},
          {"gpu", r.gpu},
          {"commit", r.commit},
          {"source_sha256", r.source_sha256},
          {"options", r.options}};
}

ProblemResult problem_result_from_json(const json& v) {
  ProblemResult r;
  r.name = v.at("name").get<std::string>();
  r.group = v.at("group").get<std::string>();
  r.file = v.at("file").get<std::string>();
  r.correct = v.at("correct").get<bool>();
  r.speedup_eager = optional_double(v, "speedup_eager");
  r.speedup_compile = optional_double(v, "speedup_compile");
  const json& times = v.at("times");
  r.times.eager = time_from_json(times.at("eager"));
  r.times.compile = time_from_json(times.at("compile"));
  r.times.best = time_from_json(times.at("best"));
  r.sol_ms = optional_double(v, "sol_ms");
  r.sol_fraction = optional_double(v, "sol_fraction");
  r.spaces = v.at("spaces").get<std::vector<std::string>>();
  r.recipes = v.at("recipes").get<std::vector<std::string>>();
  const json& candidates = v.at("candidates");
  r.candidates = {candidates.at("tried").get<int>(), candidates.at("correct").get<int>(), candidates.at("faster").get<int>()};
  r.outcome = v.at("outcome").get<std::string>();
  r.run_dir = v.at("run_dir").get<std::string>();
  if (const json* f = present(v, "started_at")) r.started_at = f->get<std::string>();
  if (const json* f = present(v, "finished_at")) r.finished_at = f->get<std::string>();
  if (const json* f = present(v, "workers")) r.workers = f->get<int>();
  if (const json* f = present(v, "candidate_verdicts")) r.candidate_verdicts = verdicts_from_json(*f);
  if (const json* f = present(v, "kernelbench")) r.kernelbench = kernelbench_from_json(*f);
  if (const json* f = present(v, "time_breakdown")) r.time_breakdown = time_breakdown_from_json(*f);
  if (!v.at("error").is_null()) r.error = v.at("error").get<std::string>();
  r.baseline_errors = v.at("baseline_errors").get<std::map<std::string, std::string>>();
  r.gpu = v.at("gpu").get<std::string>();
  r.commit = v.at("commit").get<std::string>();
  r.source_sha256 = v.at("source_sha256").get<std::string>();
  r.options = v.at("options");
  return r;
}

}  // namespace hiera::engine::bench
