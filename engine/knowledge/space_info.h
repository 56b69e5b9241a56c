#pragma once
// What an implementation space is and the rules a candidate in it must follow
// (knowledge/spaces.json): the text the LLM prompt carries as {{space_rules}}.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/knowledge/recipe.h"

namespace hiera::engine::knowledge {

struct SpaceInfo {
  Space space = Space::S1;
  std::string name;                // "PyTorch operators"
  std::string summary;             // one sentence: what changes in this space
  std::vector<std::string> rules;  // each a complete sentence

  // The rules as the prompt shows them: one "- rule" line each.
  std::string rules_text() const;
};

// One entry of spaces.json ({"name", "summary", "rules"}) for `space`; field
// paths in a FieldError are prefixed with the space ("S2.rules[1]").
SpaceInfo space_info_from_json(Space space, const nlohmann::json& value);

}  // namespace hiera::engine::knowledge
