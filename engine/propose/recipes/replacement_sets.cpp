#include "engine/propose/recipes/replacement_sets.h"

#include <algorithm>
#include <functional>

namespace hiera::engine::propose::recipes {

bool conflict(const Replacement& a, const Replacement& b) {
  for (const auto& name : a.covered) {
    if (b.covered.count(name)) return true;
  }
  for (const auto& [flag, value] : a.settings) {
    for (const auto& [other_flag, other_value] : b.settings) {
      if (flag == other_flag && value != other_value) return true;
    }
  }
  return a.cuda_graph && b.cuda_graph;
}

namespace {

// Takes replacements in `order`, each unless it conflicts with one already taken.
std::vector<std::size_t> greedy(const std::vector<Replacement>& pool, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> chosen;
  for (const auto i : order) {
    bool fits = true;
    for (const auto c : chosen) fits = fits && !conflict(pool[i], pool[c]);
    if (fits) chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<std::size_t> filtered(const std::vector<std::size_t>& order, const std::function<bool(std::size_t)>& keep) {
  std::vector<std::size_t> out;
  std::copy_if(order.begin(), order.end(), std::back_inserter(out), keep);
  return out;
}

}  // namespace

std::vector<std::vector<std::size_t>> replacement_sets(const std::vector<Replacement>& pool,
                                                       const SetPreference& preference) {
  const auto listed = [&](std::size_t i) { return preference.recipes.count(pool[i].recipe) > 0; };
  const auto in_space = [&](std::size_t i) { return pool[i].space == preference.space; };
  // Rank: the step's recipes first, then the step's own space, then the order the rewrites came in.
  std::vector<std::size_t> ranked(pool.size());
  for (std::size_t i = 0; i < pool.size(); ++i) ranked[i] = i;
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    if (listed(a) != listed(b)) return listed(a);
    return in_space(a) && !in_space(b);
  });

  std::vector<std::vector<std::size_t>> sets;
  const auto offer = [&](std::vector<std::size_t> set) {
    if (!set.empty() && std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(std::move(set));
  };
  const std::vector<std::size_t> full = greedy(pool, ranked);
  offer(full);
  if (!preference.recipes.empty()) offer(greedy(pool, filtered(ranked, listed)));
  offer(greedy(pool, filtered(ranked, [&](std::size_t i) { return !pool[i].risky; })));
  offer(greedy(pool, filtered(ranked, in_space)));
  // The rewrites that lost a contest for nodes in the full set, given the first pick.
  std::vector<std::size_t> losers_first =
      filtered(ranked, [&](std::size_t i) { return std::find(full.begin(), full.end(), i) == full.end(); });
  for (const auto i : ranked) {
    if (std::find(full.begin(), full.end(), i) != full.end()) losers_first.push_back(i);
  }
  offer(greedy(pool, losers_first));
  for (const auto i : ranked) offer({i});
  return sets;
}

}  // namespace hiera::engine::propose::recipes
