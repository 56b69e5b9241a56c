#include "server/features/hint_explanation.h"

#include <cstdio>

#include "engine/facade/hints.h"

namespace hiera::server {

namespace {

std::string speedup_range(double low, double high) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f×–%.2f×", low, high);
  return buffer;
}

std::string first_sentence(std::string_view text) {
  const auto end = text.find(". ");
  return std::string(end == std::string_view::npos ? text : text.substr(0, end + 1));
}

}  // namespace

HintExplanation explain_hint(std::string_view rule_id, const engine::analysis::Hint* hint,
                             const engine::knowledge::KnowledgeBase& knowledge) {
  const auto& rule = engine::analysis::hint_rule(rule_id);
  HintExplanation out;
  out.title = "Hint " + std::string(rule.id);
  out.one_line = "hiera " + std::string(rule.id) + ": " + (hint ? hint->message : first_sentence(rule.explanation));
  out.markdown = "### " + std::string(rule.id) + " (" + engine::analysis::to_string(rule.severity) + ")\n\n";
  if (hint) out.markdown += "**" + hint->message + "**\n\n";
  out.markdown += std::string(rule.explanation) + "\n";
  if (rule.recipe.empty()) return out;
  const auto* recipe = knowledge.recipe(rule.recipe);
  if (!recipe) {
    out.markdown += "\nRecipe `" + std::string(rule.recipe) + "` is not in the knowledge base at " + knowledge.dir.string() + ".\n";
    return out;
  }
  out.markdown += "\n#### Recipe: " + recipe->title + "\n\n`" + recipe->id + "` · space " +
                  engine::knowledge::to_string(recipe->space) + " · expected " +
                  speedup_range(recipe->expected_speedup_low, recipe->expected_speedup_high) + "\n\n" + recipe->what +
                  "\n\n" + recipe->effect + "\n";
  if (!recipe->pitfalls.empty()) {
    out.markdown += "\nPitfalls:\n\n";
    for (const auto& pitfall : recipe->pitfalls) out.markdown += "- " + pitfall + "\n";
  }
  return out;
}

}  // namespace hiera::server
