#pragma once
// What hiera.explainHint answers: the rule's explanation and the knowledge
// recipe that fixes it, as Markdown, and a one-line form for showMessage.
#include <optional>
#include <string>

#include "engine/facade/hints.h"
#include "engine/facade/knowledge.h"

namespace hiera::server {

struct HintExplanation {
  std::string title;     // "Hint cuda.missing_restrict"
  std::string markdown;
  std::string one_line;  // "hiera cuda.missing_restrict: 'x' is only read in 'saxpy': ..."
};

// `rule` must be in the catalog (hint_rules.h); `hint` is the occurrence the
// user asked about, when there is one (its message leads).
HintExplanation explain_hint(std::string_view rule, const engine::analysis::Hint* hint,
                             const engine::knowledge::KnowledgeBase& knowledge);

}  // namespace hiera::server
