#pragma once
// Which recipes fit a region in one implementation space: the recipe's own
// conditions (space, bottleneck, pattern, dtype, element count), its
// last-dimension condition, and the numerics allowances it needs (a TF32
// recipe only where the contract allows TF32). What is left out for a reason
// other than not matching is reported, so the plan can say why.
#include <string>
#include <vector>

#include "engine/knowledge/recipe.h"
#include "engine/plan/roofline.h"

namespace hiera::engine::plan {

struct RecipeSelection {
  // Best first: by expected_speedup_high, then expected_speedup_low (both
  // descending), then id. Pointers into the recipes passed in.
  std::vector<const knowledge::Recipe*> applicable;
  // "gemm: S1 recipe tf32-matmul excluded: needs \"tf32\", which numerics.allow does not grant"
  std::vector<std::string> excluded;
};

// `allowances` are the effective ones (effective_allowances: granted plus the
// region's native precision). A last-dimension condition is checked only when
// the region knows its last dimension.
RecipeSelection select_recipes(knowledge::Space space, const Region& region, knowledge::Bottleneck bottleneck,
                               const std::vector<std::string>& allowances,
                               const std::vector<knowledge::Recipe>& recipes);

}  // namespace hiera::engine::plan
