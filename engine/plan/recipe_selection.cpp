// Recipes that fit a region in one space (recipe_selection.h).
#include "engine/plan/recipe_selection.h"

#include <algorithm>

#include "engine/plan/allowance.h"

namespace hiera::engine::plan {

RecipeSelection select_recipes(knowledge::Space space, const Region& region, knowledge::Bottleneck bottleneck,
                               const std::vector<std::string>& allowances,
                               const std::vector<knowledge::Recipe>& recipes) {
  RecipeSelection selection;
  const std::string prefix = region.name + ": " + knowledge::to_string(space) + " recipe ";
  for (const knowledge::Recipe& recipe : recipes) {
    if (recipe.space != space ||
        !recipe.applies(space, bottleneck, region.pattern, region.dtype, region.elements)) {
      continue;
    }
    if (const auto missing = missing_allowance(recipe.requires_allow, allowances)) {
      selection.excluded.push_back(prefix + recipe.id + " excluded: needs \"" + *missing +
                                   "\", which numerics.allow does not grant");
      continue;
    }
    if (region.last_dim && !recipe.applies_to_last_dim(*region.last_dim)) {
      selection.excluded.push_back(prefix + recipe.id + " excluded: needs the last dimension a multiple of " +
                                   std::to_string(recipe.shape.last_dim_multiple_of.value_or(1)) + ", it is " +
                                   std::to_string(*region.last_dim));
      continue;
    }
    selection.applicable.push_back(&recipe);
  }
  std::stable_sort(selection.applicable.begin(), selection.applicable.end(),
                   [](const knowledge::Recipe* a, const knowledge::Recipe* b) {
                     if (a->expected_speedup_high != b->expected_speedup_high) {
                       return a->expected_speedup_high > b->expected_speedup_high;
                     }
                     if (a->expected_speedup_low != b->expected_speedup_low) {
                       return a->expected_speedup_low > b->expected_speedup_low;
                     }
                     return a->id < b->id;
                   });
  return selection;
}

}  // namespace hiera::engine::plan
