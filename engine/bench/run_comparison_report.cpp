#include "engine/bench/run_comparison_report.h"

#include <cstdio>

namespace hiera::engine::bench {

using nlohmann::json;

namespace {

std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string fixed(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string seconds(const std::optional<double>& s) { return s ? fixed(*s, "%.1f s") : std::string("not recorded"); }

std::string counts(const std::vector<int>& workers) {
  std::string text;
  for (const int n : workers) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return text.empty() ? "not recorded" : text;
}

// "yes/no", "improved/-": A's then B's, "-" for a side without the problem.
template <typename Show>
std::string both_sides(const ProblemComparison& p, Show show) {
  return (p.a ? show(*p.a) : std::string("-")) + "/" + (p.b ? show(*p.b) : std::string("-"));
}

std::string speedup(const ProblemResult& r) { return r.speedup_eager ? fixed(*r.speedup_eager, "%.2fx") : std::string("-"); }

std::string identity(const ProblemComparison& p) {
  if (!p.a) return "only in B";
  if (!p.b) return "only in A";
  return p.identical ? "yes" : "no";
}

json side_json(const BenchOutput& side) {
  return {{"dir", side.dir.string()},
          {"problems", side.results.size()},
          {"wall_s", side.wall_s ? json(*side.wall_s) : json(nullptr)},
          {"workers", side.workers}};
}

template <typename Value>
json pair_json(const ProblemComparison& p, Value value) {
  return json::array({p.a ? value(*p.a) : json(nullptr), p.b ? value(*p.b) : json(nullptr)});
}

}  // namespace

std::string run_comparison_markdown(const RunComparison& c) {
  std::string out = "# hiera bench-compare\n\n";
  out += "| | A | B |\n|---|---|---|\n";
  out += "| directory | `" + cell(c.a.dir.string()) + "` | `" + cell(c.b.dir.string()) + "` |\n";
  out += "| problems | " + std::to_string(c.a.results.size()) + " | " + std::to_string(c.b.results.size()) + " |\n";
  out += "| wall time | " + seconds(c.a.wall_s) + " | " + seconds(c.b.wall_s) + " |\n";
  out += "| workers | " + counts(c.a.workers) + " | " + counts(c.b.workers) + " |\n\n";
  out += "Wall-time ratio A/B: " +
         (c.wall_ratio ? "**" + fixed(*c.wall_ratio, "%.2fx") + "** (above 1: B took less time)" : std::string("not recorded")) +
         "\n\n";

  int shared = 0, identical = 0, only_a = 0, only_b = 0;
  for (const auto& p : c.problems) {
    shared += p.a && p.b ? 1 : 0;
    identical += p.identical ? 1 : 0;
    only_a += p.a && !p.b ? 1 : 0;
    only_b += !p.a && p.b ? 1 : 0;
  }
  out += "Verdicts identical: " + std::to_string(identical) + " of " + std::to_string(shared) + " shared problem(s); " +
         std::to_string(only_a) + " only in A, " + std::to_string(only_b) + " only in B.\n\n";

  out += "| problem | correct A/B | outcome A/B | verdicts identical | speedup_eager A/B |\n|---|---|---|---|---|\n";
  for (const auto& p : c.problems) {
    out += "| " + cell(p.id) + " | " + both_sides(p, [](const ProblemResult& r) { return std::string(r.correct ? "yes" : "no"); }) +
           " | " + cell(both_sides(p, [](const ProblemResult& r) { return r.outcome; })) + " | " + identity(p) + " | " +
           both_sides(p, speedup) + " |\n";
  }
  std::string differences;
  for (const auto& p : c.problems) {
    for (const auto& d : p.differences) {
      differences += "- " + cell(p.id) + ": " + cell(d.what) + ": A " + cell(d.a) + "; B " + cell(d.b) + "\n";
    }
  }
  if (!differences.empty()) out += "\n## Differences\n\n" + differences;
  return out;
}

json run_comparison_json(const RunComparison& c) {
  json problems = json::array();
  for (const auto& p : c.problems) {
    json differences = json::array();
    for (const auto& d : p.differences) differences.push_back({{"what", d.what}, {"a", d.a}, {"b", d.b}});
    problems.push_back({{"name", p.id},
                        {"only_in", p.a && p.b ? json(nullptr) : json(p.a ? "A" : "B")},
                        {"correct", pair_json(p, [](const ProblemResult& r) { return json(r.correct); })},
                        {"outcome", pair_json(p, [](const ProblemResult& r) { return json(r.outcome); })},
                        {"speedup_eager", pair_json(p, [](const ProblemResult& r) {
                           return r.speedup_eager ? json(*r.speedup_eager) : json(nullptr);
                         })},
                        {"verdicts_identical", p.identical},
                        {"differences", differences}});
  }
  return {{"a", side_json(c.a)},
          {"b", side_json(c.b)},
          {"wall_ratio", c.wall_ratio ? json(*c.wall_ratio) : json(nullptr)},
          {"identical", c.identical()},
          {"problems", problems}};
}

}  // namespace hiera::engine::bench
