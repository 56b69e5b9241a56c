#pragma once
// OUT/report.md: the GPU, date, commit and command; the fast_p table and the
// geometric means; a table per group with every problem (those made no
// faster and those that failed too), linked to its JSON; where the time went
// (a row per problem, when the records have a breakdown); links to the plots.
#include <string>
#include <vector>

#include "engine/bench/problem_result.h"
#include "engine/bench/summary.h"

namespace hiera::engine::bench {

// `suite`: the suite directory's name, for the title.
std::string bench_report_markdown(const std::vector<ProblemResult>& results, const SuiteInfo& info, const std::string& suite);

}  // namespace hiera::engine::bench
