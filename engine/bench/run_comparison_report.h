#pragma once
// What `hiera bench-compare` prints for a RunComparison (run_comparison.h):
// Markdown for people, or the same content as JSON for scripts.
//
// JSON: {a: {dir, problems, wall_s, workers}, b: {...}, wall_ratio,
// identical, problems: [{name, only_in ("A", "B" or null), correct: [a, b],
// outcome: [a, b], speedup_eager: [a, b], verdicts_identical,
// differences: [{what, a, b}]}]}; a side a problem is missing from is null.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bench/run_comparison.h"

namespace hiera::engine::bench {

std::string run_comparison_markdown(const RunComparison& comparison);
nlohmann::json run_comparison_json(const RunComparison& comparison);

}  // namespace hiera::engine::bench
