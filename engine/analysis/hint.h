#pragma once
// A static hint: something in the source that is likely slow (or wrong), with
// where it is, how sure we are, one line to show, the longer why, the
// knowledge recipe that fixes it and, when the fix is mechanical, the edit.
#include <string>
#include <vector>

#include "engine/analysis/source_span.h"

namespace hiera::engine::analysis {

// LSP DiagnosticSeverity numbering (1..4).
enum class Severity { Error = 1, Warning = 2, Information = 3, Hint = 4 };
const char* to_string(Severity severity);  // "error", "warning", "information", "hint"

struct Hint {
  std::string rule;         // "cuda.uncoalesced_access": hint_rules.h lists them
  Severity severity = Severity::Warning;
  Span span;
  std::string message;      // one line, naming what is at the span
  std::string explanation;  // the rule's why (hint_rules.h)
  std::string recipe;       // knowledge/recipes/<id>.json; "" when no recipe applies
  std::vector<TextEdit> fix;  // empty when there is no mechanical fix
  bool operator==(const Hint&) const = default;
};

}  // namespace hiera::engine::analysis
