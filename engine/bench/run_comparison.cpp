#include "engine/bench/run_comparison.h"

#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/bench/problem_discovery.h"
#include "engine/bench/wall_time.h"

namespace hiera::engine::bench {

namespace fs = std::filesystem;

namespace {

std::string describe(const CandidateVerdict& v) { return v.verdict + ", code " + v.source_sha256.substr(0, 12); }

const CandidateVerdict* find_candidate(const std::vector<CandidateVerdict>& list, const std::string& id) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const CandidateVerdict& v) { return v.id == id; });
  return it == list.end() ? nullptr : &*it;
}

}  // namespace

BenchOutput load_bench_output(const fs::path& dir) {
  BenchOutput out;
  out.dir = dir;
  const fs::path problems = dir / "problems";
  std::error_code ec;
  if (!fs::is_directory(problems, ec)) {
    throw BenchOutputError(dir.string() + ": not a hiera bench output (no problems/ folder in it)");
  }
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(problems, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  }
  if (ec) throw BenchOutputError(problems.string() + ": cannot be read: " + ec.message());
  std::map<std::string, fs::path> seen;  // id -> file, so that two files claiming one problem are caught
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw BenchOutputError(file.string() + ": cannot be read");
    try {
      ProblemResult r = problem_result_from_json(nlohmann::json::parse(in));
      if (const auto [it, fresh] = seen.emplace(r.id(), file); !fresh) {
        throw BenchOutputError(file.string() + ": the same problem (" + r.id() + ") as " + it->second.string());
      }
      out.results.push_back(std::move(r));
    } catch (const nlohmann::json::exception& e) {
      throw BenchOutputError(file.string() + ": not a problem record: " + e.what());
    }
  }
  if (out.results.empty()) throw BenchOutputError(problems.string() + ": no problem records in it");
  std::sort(out.results.begin(), out.results.end(), [](const ProblemResult& x, const ProblemResult& y) {
    if (x.group != y.group) return natural_less(x.group, y.group);
    return natural_less(x.name, y.name);
  });
  out.wall_s = wall_seconds(out.results);
  out.workers = worker_counts(out.results);
  return out;
}

std::vector<VerdictDifference> verdict_differences(const ProblemResult& a, const ProblemResult& b) {
  std::vector<VerdictDifference> diffs;
  if (!a.candidate_verdicts || !b.candidate_verdicts) {
    const auto said = [](const ProblemResult& r) {
      return r.candidate_verdicts ? std::to_string(r.candidate_verdicts->size()) + " candidate(s)" : std::string("not recorded");
    };
    diffs.push_back({"candidate verdicts", said(a), said(b)});
  } else {
    const auto& as = *a.candidate_verdicts;
    const auto& bs = *b.candidate_verdicts;
    for (const auto& va : as) {
      const CandidateVerdict* vb = find_candidate(bs, va.id);
      if (!vb) diffs.push_back({va.id, describe(va), "absent"});
      else if (va.verdict != vb->verdict || va.source_sha256 != vb->source_sha256) diffs.push_back({va.id, describe(va), describe(*vb)});
    }
    for (const auto& vb : bs) {
      if (!find_candidate(as, vb.id)) diffs.push_back({vb.id, "absent", describe(vb)});
    }
  }
  if (a.correct != b.correct) {
    const auto said = [](bool correct) { return std::string(correct ? "correct" : "not correct"); };
    diffs.push_back({"delivered result", said(a.correct), said(b.correct)});
  }
  return diffs;
}

bool RunComparison::identical() const {
  return std::all_of(problems.begin(), problems.end(), [](const ProblemComparison& p) { return p.identical; });
}

RunComparison compare_runs(BenchOutput a, BenchOutput b) {
  RunComparison c;
  if (a.wall_s && b.wall_s && *b.wall_s > 0) c.wall_ratio = *a.wall_s / *b.wall_s;
  for (const auto& ra : a.results) {
    ProblemComparison p;
    p.id = ra.id();
    p.a = ra;
    const auto rb = std::find_if(b.results.begin(), b.results.end(), [&](const ProblemResult& r) { return r.id() == p.id; });
    if (rb != b.results.end()) {
      p.b = *rb;
      p.differences = verdict_differences(ra, *rb);
      p.identical = p.differences.empty();
    }
    c.problems.push_back(std::move(p));
  }
  for (const auto& rb : b.results) {
    const bool shared = std::any_of(a.results.begin(), a.results.end(), [&](const ProblemResult& r) { return r.id() == rb.id(); });
    if (shared) continue;
    ProblemComparison p;
    p.id = rb.id();
    p.b = rb;
    c.problems.push_back(std::move(p));
  }
  c.a = std::move(a);
  c.b = std::move(b);
  return c;
}

}  // namespace hiera::engine::bench
