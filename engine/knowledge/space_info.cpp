#include "engine/knowledge/space_info.h"

#include <nlohmann/json.hpp>

#include "engine/knowledge/json_fields.h"

namespace hiera::engine::knowledge {

std::string SpaceInfo::rules_text() const {
  std::string out;
  for (const auto& rule : rules) out += "- " + rule + "\n";
  return out;
}

SpaceInfo space_info_from_json(Space space, const nlohmann::json& value) {
  JsonFields fields(value, to_string(space));
  SpaceInfo info;
  info.space = space;
  info.name = fields.text("name");
  info.summary = fields.text("summary");
  info.rules = fields.texts("rules");
  fields.reject_unknown();
  return info;
}

}  // namespace hiera::engine::knowledge
