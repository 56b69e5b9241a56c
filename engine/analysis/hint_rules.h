#pragma once
// The catalog of hint rules: id, default severity, explanation and the
// knowledge recipe each links to. The rule checks (cuda_hints.h,
// torch_hints.h) make hints only through make_hint, so every hint carries its
// rule's catalog entry.
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/hint.h"

namespace hiera::engine::analysis {

struct HintRule {
  std::string_view id;
  Severity severity;
  std::string_view recipe;       // "" when no recipe applies
  std::string_view explanation;
};

const std::vector<HintRule>& hint_rules();
// Throws std::logic_error for an id not in the catalog (a programming error).
const HintRule& hint_rule(std::string_view id);

// A hint of `rule` with its catalog severity, explanation and recipe.
Hint make_hint(std::string_view rule, Span span, std::string message, std::vector<TextEdit> fix = {});

}  // namespace hiera::engine::analysis
