#include "server/features/hint_settings.h"

#include "engine/facade/hints.h"

namespace hiera::server {

namespace analysis = engine::analysis;

namespace {

std::optional<analysis::Severity> parse_severity(const std::string& name) {
  for (auto s : {analysis::Severity::Error, analysis::Severity::Warning, analysis::Severity::Information, analysis::Severity::Hint}) {
    if (name == analysis::to_string(s)) return s;
  }
  return std::nullopt;
}

bool known_rule(const std::string& id) {
  for (const auto& rule : analysis::hint_rules()) {
    if (rule.id == id) return true;
  }
  return false;
}

// "unknown rule \"x\" (known: cuda.uncoalesced_access, ...)": what it accepts, in the rules' order.
std::string unknown_rule(const std::string& id) {
  std::string known;
  for (const auto& rule : analysis::hint_rules()) known += (known.empty() ? "" : ", ") + std::string(rule.id);
  return "unknown rule " + nlohmann::json(id).dump() + " (known: " + known + ")";
}

}  // namespace

bool HintSettings::shows(const analysis::Hint& hint) const { return enabled && !disabled.contains(hint.rule); }

analysis::Severity HintSettings::severity_of(const analysis::Hint& hint) const {
  auto found = severity.find(hint.rule);
  return found == severity.end() ? hint.severity : found->second;
}

HintSettings parse_hint_settings(const nlohmann::json& hints) {
  HintSettings out;
  if (hints.is_null()) return out;
  if (!hints.is_object()) {
    out.problems.push_back("settings: hints must be an object, got " + hints.dump());
    return out;
  }
  if (const auto enabled = hints.find("enabled"); enabled != hints.end() && !enabled->is_null()) {
    if (enabled->is_boolean()) {
      out.enabled = enabled->get<bool>();
    } else {
      out.problems.push_back("settings: hints.enabled must be true or false, got " + enabled->dump());
    }
  }
  if (const auto disabled = hints.find("disabled"); disabled != hints.end() && !disabled->is_null()) {
    if (!disabled->is_array()) {
      out.problems.push_back("settings: hints.disabled must be a list of rule ids, got " + disabled->dump());
    } else {
      for (const auto& id : *disabled) {
        if (!id.is_string()) {
          out.problems.push_back("settings: hints.disabled: " + id.dump() + " is not a rule id");
          continue;
        }
        if (!known_rule(id.get<std::string>())) out.problems.push_back("settings: hints.disabled: " + unknown_rule(id.get<std::string>()));
        out.disabled.insert(id.get<std::string>());
      }
    }
  }
  if (const auto severity = hints.find("severity"); severity != hints.end() && !severity->is_null()) {
    if (!severity->is_object()) {
      out.problems.push_back("settings: hints.severity must map rule ids to severities, got " + severity->dump());
    } else {
      for (const auto& [id, value] : severity->items()) {
        const auto parsed = value.is_string() ? parse_severity(value.get<std::string>()) : std::nullopt;
        if (!parsed) {
          out.problems.push_back("settings: hints.severity." + id + ": " + value.dump() +
                                 " is not one of \"error\", \"warning\", \"information\", \"hint\"");
          continue;
        }
        if (!known_rule(id)) out.problems.push_back("settings: hints.severity: " + unknown_rule(id));
        out.severity[id] = *parsed;
      }
    }
  }
  return out;
}

}  // namespace hiera::server
