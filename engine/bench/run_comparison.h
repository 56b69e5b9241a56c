#pragma once
// Two `hiera bench` outputs side by side (`hiera bench-compare A B`): each
// side's wall time and pool sizes, and per problem (matched by group/name)
// whether the verdicts are identical.
//
// A verdict is a statement of correctness: each candidate's (passed, failed,
// rejected: the optimizer's) and the delivered result's (`correct`). Two
// problems' verdicts are identical when both records list the same candidates
// (same ids, same code hashes), each with the same verdict, and their
// delivered results are both correct or both not. Timings, speed-ups and
// which candidate was faster are not verdicts: they vary from run to run.
// The outcome (improved, no_improvement) rests on timing; it is shown, and
// is not part of the identity.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

// A bench output that cannot be read: no problems/ folder, no record in it,
// or a record that does not parse.
class BenchOutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchOutput {
  std::filesystem::path dir;
  std::vector<ProblemResult> results;  // every record under dir/problems, ordered by group then name (natural_less)
  std::optional<double> wall_s;        // wall_time.h, over all of them
  std::vector<int> workers;
};

// Reads dir/problems/**.json (summary.json is not needed). Throws BenchOutputError.
BenchOutput load_bench_output(const std::filesystem::path& dir);

// One thing the two sides say differently about a problem.
struct VerdictDifference {
  std::string what;  // a candidate id, "delivered result", or "candidate verdicts"
  std::string a;     // what A says: "passed, code 0123456789ab", "absent", "correct", "not recorded"
  std::string b;
  bool operator==(const VerdictDifference&) const = default;
};

struct ProblemComparison {
  std::string id;                 // group/name
  std::optional<ProblemResult> a;  // empty when the problem is on the other side only
  std::optional<ProblemResult> b;
  bool identical = false;          // on both sides, with no difference
  std::vector<VerdictDifference> differences;
};

struct RunComparison {
  BenchOutput a;
  BenchOutput b;
  std::optional<double> wall_ratio;  // A's wall_s / B's: above 1, B took less time
  std::vector<ProblemComparison> problems;  // A's order, then those only in B
  // Every problem is on both sides with identical verdicts.
  bool identical() const;
};

// The differences between two records of one problem, in A's candidate order
// then B's extra candidates, the delivered result last; none when identical.
std::vector<VerdictDifference> verdict_differences(const ProblemResult& a, const ProblemResult& b);

RunComparison compare_runs(BenchOutput a, BenchOutput b);

}  // namespace hiera::engine::bench
