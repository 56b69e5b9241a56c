#pragma once
// A prompt template for the LLM proposer (knowledge/prompts/*.json): a system
// and a user message with {{placeholders}} from prompt_placeholders().
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace hiera::engine::knowledge {

struct PromptTemplate {
  std::string id;      // "propose", "repair"; equals the file name without .json
  std::string system;  // the system message
  std::string user;    // the user message

  // Both messages with every placeholder filled (fill_placeholders: throws
  // std::invalid_argument naming a placeholder without a value).
  struct Messages {
    std::string system, user;
  };
  Messages render(const std::map<std::string, std::string, std::less<>>& values) const;
};

// A knowledge/prompts/*.json object -> PromptTemplate. "system" and "user" are
// a string or an array of lines. Throws FieldError for a missing or mistyped
// field and for a malformed or unknown placeholder (field "system" or "user").
PromptTemplate prompt_template_from_json(const nlohmann::json& value);

}  // namespace hiera::engine::knowledge
