#pragma once
// The user's hint settings (`hints` in the "hiera" settings):
// {enabled: bool, disabled: [rule id, ...], severity: {rule id: "error" | "warning" | "information" | "hint"}}.
// What is not understood is ignored, and said in `problems`, so one bad entry
// loses none of the others.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/facade/hints.h"

namespace hiera::server {

struct HintSettings {
  bool enabled = true;
  std::set<std::string, std::less<>> disabled;
  std::map<std::string, engine::analysis::Severity, std::less<>> severity;
  std::vector<std::string> problems;

  bool shows(const engine::analysis::Hint& hint) const;
  // The settings' severity for the hint's rule, else the rule's own.
  engine::analysis::Severity severity_of(const engine::analysis::Hint& hint) const;
};

// `hints` is the settings' value at /hints (null: the defaults).
HintSettings parse_hint_settings(const nlohmann::json& hints);

}  // namespace hiera::server
