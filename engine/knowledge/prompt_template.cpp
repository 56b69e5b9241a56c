#include "engine/knowledge/prompt_template.h"

#include <nlohmann/json.hpp>

#include "engine/knowledge/json_fields.h"
#include "engine/knowledge/placeholders.h"
#include "engine/knowledge/vocabulary.h"

namespace hiera::engine::knowledge {

PromptTemplate::Messages PromptTemplate::render(const std::map<std::string, std::string, std::less<>>& values) const {
  return {fill_placeholders(system, values), fill_placeholders(user, values)};
}

PromptTemplate prompt_template_from_json(const nlohmann::json& value) {
  JsonFields fields(value, "");
  PromptTemplate prompt;
  prompt.id = fields.text("id");
  prompt.system = fields.text_or_lines("system");
  prompt.user = fields.text_or_lines("user");
  for (const auto& [field, text] : {std::pair{"system", &prompt.system}, std::pair{"user", &prompt.user}}) {
    if (auto problem = check_placeholders(*text, prompt_placeholders())) throw FieldError(field, *problem);
  }
  fields.reject_unknown();
  return prompt;
}

}  // namespace hiera::engine::knowledge
