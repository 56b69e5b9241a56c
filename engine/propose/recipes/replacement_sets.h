#pragma once
// Which rewrites go into one candidate: from every replacement found for a
// graph, the non-overlapping combinations worth offering, best first (the
// most complete one, then variants that leave out risky rewrites, keep to the
// plan step's recipes or space, or let the rewrites that lost a contest for
// nodes win, then each rewrite alone).
#include <set>
#include <string>
#include <vector>

#include "engine/knowledge/recipe.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes {

struct SetPreference {
  std::set<std::string> recipes;                  // the plan step's recipes: preferred where rewrites compete
  knowledge::Space space = knowledge::Space::S1;  // the step's space: preferred over lower spaces' rewrites
};

// Two replacements cannot go together: they cover a common node, set the
// same library flag to different values, or both capture a CUDA graph.
bool conflict(const Replacement& a, const Replacement& b);

// Index sets into `pool` (each sorted ascending, non-empty, pairwise distinct,
// free of conflicts), in the order a proposer should offer them.
std::vector<std::vector<std::size_t>> replacement_sets(const std::vector<Replacement>& pool,
                                                       const SetPreference& preference);

}  // namespace hiera::engine::propose::recipes
