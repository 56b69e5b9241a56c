#pragma once
// A replacement in one line, for tests that compare what a rewrite found with
// what it should have found: "recipe | covered | produces | statements".
#include <string>
#include <vector>

#include "engine/propose/recipes/replacement.h"

namespace hiera::testing {

inline std::string replacement_text(const engine::propose::recipes::Replacement& r) {
  std::string covered;
  for (const auto& name : r.covered) covered += (covered.empty() ? "" : ",") + name;
  std::string statements;
  for (const auto& s : r.statements) statements += (statements.empty() ? "" : "; ") + s;
  for (const auto& [flag, value] : r.settings) statements += (statements.empty() ? "" : "; ") + flag + " := " + value;
  if (r.cuda_graph) statements += (statements.empty() ? "" : "; ") + std::string("<cuda graph>");
  return r.recipe + " | " + covered + " | " + r.produces + " | " + statements + (r.risky ? " | risky" : "");
}

inline std::vector<std::string> replacement_texts(
    const std::vector<engine::propose::recipes::Replacement>& replacements) {
  std::vector<std::string> out;
  for (const auto& r : replacements) out.push_back(replacement_text(r));
  return out;
}

}  // namespace hiera::testing
