#include "engine/optimize/time_breakdown.h"
#include "engine/common/number_text.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace hiera::engine::optimize {

using nlohmann::json;

namespace {

std::string share(double seconds, double total_s) {
  if (total_s <= 0.0) return "-";
  return fixed(seconds / total_s * 100.0, 1) + "%";
}

std::string label(const std::string& phase) {
  if (phase == "probe") return "probe of the device";
  if (phase == "reference_baseline") return "reference baseline (against itself)";
  if (phase == "reference_profile") return "reference profile";
  if (phase == "capture") return "op graph capture";
  if (phase == "planning") return "spec and plan";
  if (phase == "proposing") return "proposing (every proposer call)";
  if (phase == "candidates") return "candidate evaluations";
  if (phase == "delivery") return "delivery (verified again in its delivered form)";
  return phase;
}

json phases_json(const std::vector<eval::PhaseTime>& phases) {
  json out = json::object();
  for (const auto& p : phases) out[p.name] = p.ms;
  return out;
}

std::vector<eval::PhaseTime> phases_from_json(const json& value) {
  std::vector<eval::PhaseTime> out;
  for (const auto& [name, ms] : value.get<std::map<std::string, double>>()) out.push_back({name, ms});  // type_error if not
  eval::order_phases(out);
  return out;
}

const eval::PhaseTime* find_phase(const std::vector<eval::PhaseTime>& phases, const std::string& name) {
  const auto it = std::find_if(phases.begin(), phases.end(), [&](const eval::PhaseTime& p) { return p.name == name; });
  return it == phases.end() ? nullptr : &*it;
}

}  // namespace

TimeBreakdown::TimeBreakdown() {
  for (const char* phase : kEnginePhases) engine.push_back({phase, 0.0});
}

double TimeBreakdown::seconds(const std::string& phase) const {
  for (const auto& p : engine) {
    if (p.name == phase) return p.seconds;
  }
  return 0.0;
}

double TimeBreakdown::other_s() const {
  double covered = 0.0;
  for (const auto& p : engine) covered += p.seconds;
  return std::max(0.0, total_s - covered);
}

void add_phases(std::vector<eval::PhaseTime>& sums, const std::vector<eval::PhaseTime>& phases) {
  bool added = false;
  for (const auto& p : phases) {
    const auto it = std::find_if(sums.begin(), sums.end(), [&](const eval::PhaseTime& s) { return s.name == p.name; });
    if (it != sums.end()) {
      it->ms += p.ms;
    } else {
      sums.push_back(p);
      added = true;
    }
  }
  if (added) eval::order_phases(sums);
}

void PhaseClock::enter(const char* phase) {
  leave();
  current_ = phase;
  started_ = std::chrono::steady_clock::now();
}

void PhaseClock::leave() {
  if (!current_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  for (auto& p : breakdown_.engine) {
    if (p.name == current_) p.seconds += elapsed;
  }
  current_ = nullptr;
}

void PhaseClock::reference(const eval::Evaluation& evaluation) { add_phases(breakdown_.reference_phases, evaluation.phases); }

void PhaseClock::candidate(const eval::Evaluation& evaluation) {
  add_phases(breakdown_.candidate_phases, evaluation.phases);
  ++breakdown_.candidate_evaluations;
}

void PhaseClock::delivery(const eval::Evaluation& evaluation) { add_phases(breakdown_.delivery_phases, evaluation.phases); }

TimeBreakdown PhaseClock::finish(double total_s) {
  leave();
  breakdown_.total_s = total_s;
  return breakdown_;
}

json to_json(const TimeBreakdown& b) {
  json phases = json::array();
  for (const auto& p : b.engine) phases.push_back({{"phase", p.name}, {"s", p.seconds}});
  return {{"total_s", b.total_s},
          {"phases", phases},
          {"other_s", b.other_s()},
          {"reference_phases_ms", phases_json(b.reference_phases)},
          {"candidate_evaluations", b.candidate_evaluations},
          {"candidate_phases_ms", phases_json(b.candidate_phases)},
          {"delivery_phases_ms", phases_json(b.delivery_phases)}};
}

TimeBreakdown time_breakdown_from_json(const json& v) {
  TimeBreakdown b;
  b.total_s = v.at("total_s").get<double>();
  b.engine.clear();
  for (const auto& p : v.at("phases").get<std::vector<json>>()) {
    b.engine.push_back({p.at("phase").get<std::string>(), p.at("s").get<double>()});
  }
  b.reference_phases = phases_from_json(v.at("reference_phases_ms"));
  b.candidate_evaluations = v.at("candidate_evaluations").get<int>();
  b.candidate_phases = phases_from_json(v.at("candidate_phases_ms"));
  b.delivery_phases = phases_from_json(v.at("delivery_phases_ms"));
  return b;
}

std::string time_breakdown_markdown(const TimeBreakdown& b) {
  std::string md = "## Where the time went\n\n| phase | seconds | share of the run |\n|---|---|---|\n";
  for (const auto& p : b.engine) {
    md += "| " + label(p.name) + " | " + fixed(p.seconds, 2) + " | " + share(p.seconds, b.total_s) + " |\n";
  }
  md += "| other (task spec, run log, report) | " + fixed(b.other_s(), 2) + " | " + share(b.other_s(), b.total_s) + " |\n";
  md += "| **total** | " + fixed(b.total_s, 2) + " | " + (b.total_s > 0.0 ? "100.0%" : "-") + " |\n";

  // The worker's own phases inside those jobs, every name any of them reported, in the runner's order.
  std::vector<eval::PhaseTime> names;
  for (const auto* list : {&b.reference_phases, &b.candidate_phases, &b.delivery_phases}) {
    for (const auto& p : *list) add_phases(names, {{p.name, 0.0}});
  }
  if (names.empty()) return md;
  const auto seconds_of = [](const std::vector<eval::PhaseTime>& list, const std::string& name) {
    const eval::PhaseTime* p = find_phase(list, name);
    return p ? fixed(p->ms / 1e3, 3) : std::string("-");
  };
  md += "\nInside the jobs, the worker's own phases (phases_ms, in seconds; the candidates' summed over " +
        std::to_string(b.candidate_evaluations) + " evaluation" + (b.candidate_evaluations == 1 ? "" : "s") + "):\n\n";
  md += "| worker phase | reference baseline | candidates | delivery |\n|---|---|---|---|\n";
  for (const auto& n : names) {
    md += "| " + n.name + " | " + seconds_of(b.reference_phases, n.name) + " | " + seconds_of(b.candidate_phases, n.name) +
          " | " + seconds_of(b.delivery_phases, n.name) + " |\n";
  }
  return md;
}

}  // namespace hiera::engine::optimize
