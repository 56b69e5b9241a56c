#include "engine/knowledge/recipe.h"

#include <algorithm>
#include <climits>
#include <regex>

#include <nlohmann/json.hpp>

#include "engine/knowledge/json_fields.h"
#include "engine/knowledge/vocabulary.h"

namespace hiera::engine::knowledge {

const char* to_string(Space space) {
  switch (space) {
    case Space::S1: return "S1";
    case Space::S2: return "S2";
    case Space::S3: return "S3";
  }
  return "?";
}

const char* to_string(Bottleneck bottleneck) {
  switch (bottleneck) {
    case Bottleneck::Memory: return "memory";
    case Bottleneck::Compute: return "compute";
    case Bottleneck::Latency: return "latency";
  }
  return "?";
}

std::optional<Space> parse_space(std::string_view text) {
  for (Space space : {Space::S1, Space::S2, Space::S3})
    if (text == to_string(space)) return space;
  return std::nullopt;
}

std::optional<Bottleneck> parse_bottleneck(std::string_view text) {
  for (Bottleneck bottleneck : {Bottleneck::Memory, Bottleneck::Compute, Bottleneck::Latency})
    if (text == to_string(bottleneck)) return bottleneck;
  return std::nullopt;
}

bool Recipe::applies(Space query_space, Bottleneck bottleneck, std::string_view pattern, std::string_view dtype,
                     std::int64_t elements) const {
  if (space != query_space) return false;
  if (std::find(bottlenecks.begin(), bottlenecks.end(), bottleneck) == bottlenecks.end()) return false;
  if (!contains(patterns, pattern)) return false;
  if (!dtype.empty() && !dtypes.empty() && !contains(dtypes, dtype)) return false;
  if (elements >= 0) {
    if (shape.min_elements && elements < *shape.min_elements) return false;
    if (shape.max_elements && elements > *shape.max_elements) return false;
  }
  return true;
}

bool Recipe::applies_to_last_dim(std::int64_t last_dim) const {
  return !shape.last_dim_multiple_of || last_dim % *shape.last_dim_multiple_of == 0;
}

namespace {

// Each item of a string array must be in the vocabulary; the error names the item.
void require_known(JsonFields& fields, std::string_view key, const std::vector<std::string>& items,
                   const std::vector<std::string>& vocabulary, std::string_view what) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!contains(vocabulary, items[i]))
      throw FieldError(fields.path(key) + "[" + std::to_string(i) + "]",
                       "unknown " + std::string(what) + " \"" + items[i] + "\" (known: " + join(vocabulary) + ")");
  }
}

ShapeCondition shape_from_json(const nlohmann::json& value) {
  JsonFields fields(value, "shape");
  ShapeCondition shape;
  shape.min_elements = fields.optional_integer("min_elements", 0, INT64_MAX);
  shape.max_elements = fields.optional_integer("max_elements", 0, INT64_MAX);
  if (auto multiple = fields.optional_integer("last_dim_multiple_of", 1, INT_MAX)) shape.last_dim_multiple_of = static_cast<int>(*multiple);
  if (shape.min_elements && shape.max_elements && *shape.min_elements > *shape.max_elements)
    throw FieldError("shape", "min_elements " + std::to_string(*shape.min_elements) + " is above max_elements " +
                                  std::to_string(*shape.max_elements));
  fields.reject_unknown();
  return shape;
}

std::string format_number(double value) {
  nlohmann::json number = value;
  return number.dump();
}

}  // namespace

Recipe recipe_from_json(const nlohmann::json& value) {
  JsonFields fields(value, "");
  Recipe recipe;
  recipe.id = fields.text("id");
  static const std::regex kId("[a-z0-9_]+");
  if (!std::regex_match(recipe.id, kId))
    throw FieldError("id", "must be lower-case letters, digits and underscores, got \"" + recipe.id + "\"");
  recipe.title = fields.text("title");

  const std::string space = fields.text("space");
  const auto parsed_space = parse_space(space);
  if (!parsed_space) throw FieldError("space", "unknown space \"" + space + "\" (known: S1, S2, S3)");
  recipe.space = *parsed_space;

  const std::vector<std::string> bottlenecks = fields.texts("bottlenecks");
  for (std::size_t i = 0; i < bottlenecks.size(); ++i) {
    const auto bottleneck = parse_bottleneck(bottlenecks[i]);
    if (!bottleneck)
      throw FieldError("bottlenecks[" + std::to_string(i) + "]",
                       "unknown bottleneck \"" + bottlenecks[i] + "\" (known: memory, compute, latency)");
    recipe.bottlenecks.push_back(*bottleneck);
  }

  recipe.patterns = fields.texts("patterns");
  require_known(fields, "patterns", recipe.patterns, pattern_vocabulary(), "pattern");
  recipe.dtypes = fields.optional_texts("dtypes");
  require_known(fields, "dtypes", recipe.dtypes, tensor_dtypes(), "dtype");
  if (const nlohmann::json* shape = fields.optional("shape")) recipe.shape = shape_from_json(*shape);

  recipe.what = fields.text("what");
  recipe.effect = fields.text("effect");

  const nlohmann::json speedup = fields.required("expected_speedup");  // a copy: two numbers
  if (!speedup.is_array() || speedup.size() != 2 || !speedup[0].is_number() || !speedup[1].is_number())
    throw FieldError("expected_speedup", "expected [low, high], two numbers, got " + speedup.dump());
  recipe.expected_speedup_low = speedup[0].get<double>();
  recipe.expected_speedup_high = speedup[1].get<double>();
  if (!(recipe.expected_speedup_low > 0))
    throw FieldError("expected_speedup", "low must be positive, got " + format_number(recipe.expected_speedup_low));
  if (recipe.expected_speedup_low > recipe.expected_speedup_high)
    throw FieldError("expected_speedup", "low " + format_number(recipe.expected_speedup_low) + " is above high " +
                                             format_number(recipe.expected_speedup_high));

  recipe.pitfalls = fields.texts("pitfalls");
  recipe.template_name = fields.optional_text("template");
  if (recipe.template_name &&
      (recipe.template_name->find('/') != std::string::npos || recipe.template_name->front() == '.'))
    throw FieldError("template", "must be a file name under templates/, got \"" + *recipe.template_name + "\"");
  recipe.requires_allow = fields.optional_texts("requires_allow");
  require_known(fields, "requires_allow", recipe.requires_allow, numerics_allowances(), "numerics allowance");
  fields.reject_unknown();
  return recipe;
}

}  // namespace hiera::engine::knowledge
