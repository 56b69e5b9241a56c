// Recipe and GpuSpec from JSON, the Space/Bottleneck spellings, and
// Recipe::applies.
#include "engine/knowledge/recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/knowledge/field_error.h"
#include "engine/knowledge/gpu_spec.h"

namespace hiera::engine::knowledge {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

TEST(RecipeTest, SpaceAndBottleneckSpellingsRoundTrip) {
  for (Space space : {Space::S1, Space::S2, Space::S3}) EXPECT_EQ(parse_space(to_string(space)), space);
  for (Bottleneck b : {Bottleneck::Memory, Bottleneck::Compute, Bottleneck::Latency}) EXPECT_EQ(parse_bottleneck(to_string(b)), b);
  EXPECT_STREQ(to_string(Space::S2), "S2");
  EXPECT_STREQ(to_string(Bottleneck::Latency), "latency");
  EXPECT_EQ(parse_space("s1"), std::nullopt);
  EXPECT_EQ(parse_space("S4"), std::nullopt);
  EXPECT_EQ(parse_space(""), std::nullopt);
  EXPECT_EQ(parse_bottleneck("Memory"), std::nullopt);
  EXPECT_EQ(parse_bottleneck("bandwidth"), std::nullopt);
}

json full_recipe() {
  return {{"id", "s3_example"},
          {"title", "Example"},
          {"space", "S3"},
          {"bottlenecks", {"memory", "latency"}},
          {"patterns", {"softmax", "reduction"}},
          {"dtypes", {"float16"}},
          {"shape", {{"min_elements", 16}, {"max_elements", 1024}, {"last_dim_multiple_of", 8}}},
          {"what", "what it does"},
          {"effect", "what it gains"},
          {"expected_speedup", {1.2, 3}},
          {"pitfalls", {"one", "two"}},
          {"template", "row_softmax.cu"},
          {"requires_allow", {"fp16"}}};
}

TEST(RecipeTest, FromJsonReadsEveryField) {
  const Recipe recipe = recipe_from_json(full_recipe());
  EXPECT_EQ(recipe.id, "s3_example");
  EXPECT_EQ(recipe.title, "Example");
  EXPECT_EQ(recipe.space, Space::S3);
  EXPECT_THAT(recipe.bottlenecks, ElementsAre(Bottleneck::Memory, Bottleneck::Latency));
  EXPECT_THAT(recipe.patterns, ElementsAre("softmax", "reduction"));
  EXPECT_THAT(recipe.dtypes, ElementsAre("float16"));
  EXPECT_EQ(recipe.shape.min_elements, 16);
  EXPECT_EQ(recipe.shape.max_elements, 1024);
  EXPECT_EQ(recipe.shape.last_dim_multiple_of, 8);
  EXPECT_EQ(recipe.what, "what it does");
  EXPECT_EQ(recipe.effect, "what it gains");
  EXPECT_DOUBLE_EQ(recipe.expected_speedup_low, 1.2);
  EXPECT_DOUBLE_EQ(recipe.expected_speedup_high, 3.0);
  EXPECT_THAT(recipe.pitfalls, ElementsAre("one", "two"));
  EXPECT_EQ(recipe.template_name, "row_softmax.cu");
  EXPECT_THAT(recipe.requires_allow, ElementsAre("fp16"));
}

TEST(RecipeTest, OptionalFieldsDefault) {
  json value = full_recipe();
  for (const char* key : {"dtypes", "shape", "template", "requires_allow"}) value.erase(key);
  const Recipe recipe = recipe_from_json(value);
  EXPECT_TRUE(recipe.dtypes.empty());
  EXPECT_FALSE(recipe.shape.min_elements.has_value());
  EXPECT_FALSE(recipe.shape.max_elements.has_value());
  EXPECT_FALSE(recipe.shape.last_dim_multiple_of.has_value());
  EXPECT_FALSE(recipe.template_name.has_value());
  EXPECT_TRUE(recipe.requires_allow.empty());
}

void expect_field_error(const json& value, const std::string& field, const std::string& message) {
  try {
    recipe_from_json(value);
    ADD_FAILURE() << "accepted " << value.dump();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), field);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(RecipeTest, FromJsonRejectsBadValues) {
  json value = full_recipe();
  value["id"] = "Has Spaces";
  expect_field_error(value, "id", "must be lower-case letters, digits and underscores, got \"Has Spaces\"");
  value = full_recipe();
  value["bottlenecks"] = json::array();
  expect_field_error(value, "bottlenecks", "must not be empty");
  value = full_recipe();
  value["patterns"] = "softmax";
  expect_field_error(value, "patterns", "expected an array of strings, got a string");
  value = full_recipe();
  value["expected_speedup"] = {0, 2};
  expect_field_error(value, "expected_speedup", "low must be positive, got 0.0");
  value = full_recipe();
  value["what"] = "";
  expect_field_error(value, "what", "must not be empty");
  value = full_recipe();
  value["shape"] = {{"min_elements", -1}};
  expect_field_error(value, "shape.min_elements", "must be at least 0, got -1");
  value = full_recipe();
  value["shape"]["max_element"] = 5;
  expect_field_error(value, "shape.max_element", "unknown field");
}

Recipe applies_fixture() {
  Recipe recipe;
  recipe.space = Space::S3;
  recipe.bottlenecks = {Bottleneck::Memory};
  recipe.patterns = {"softmax"};
  recipe.dtypes = {"float16", "bfloat16"};
  recipe.shape.min_elements = 100;
  recipe.shape.max_elements = 200;
  recipe.shape.last_dim_multiple_of = 8;
  return recipe;
}

TEST(RecipeTest, AppliesChecksEveryCondition) {
  const Recipe recipe = applies_fixture();
  EXPECT_TRUE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float16", 150));
  EXPECT_FALSE(recipe.applies(Space::S2, Bottleneck::Memory, "softmax", "float16", 150));
  EXPECT_FALSE(recipe.applies(Space::S3, Bottleneck::Compute, "softmax", "float16", 150));
  EXPECT_FALSE(recipe.applies(Space::S3, Bottleneck::Memory, "norm", "float16", 150));
  EXPECT_FALSE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float32", 150));
  EXPECT_FALSE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float16", 99));
  EXPECT_FALSE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float16", 201));
  EXPECT_TRUE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float16", 100));
  EXPECT_TRUE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "float16", 200));
  EXPECT_TRUE(recipe.applies(Space::S3, Bottleneck::Memory, "softmax", "", -1));
  EXPECT_TRUE(recipe.applies_to_last_dim(64));
  EXPECT_FALSE(recipe.applies_to_last_dim(60));
  EXPECT_TRUE(Recipe{}.applies_to_last_dim(7));
}

TEST(GpuSpecTest, FromJsonReadsEveryField) {
  const json value = {{"id", "g"},
                      {"name", "G"},
                      {"match", {"G1", "G 1"}},
                      {"compute_capability", "12.0"},
                      {"sm_count", 10},
                      {"memory_bandwidth_gbs", 100.5},
                      {"memory_bytes", 1000},
                      {"l2_bytes", 100},
                      {"smem_per_sm_bytes", 50},
                      {"smem_per_block_optin_bytes", 40},
                      {"max_threads_per_sm", 1024},
                      {"boost_clock_mhz", 1500},
                      {"peak_tflops", {{"float32", 1.5}, {"int8", 8}}},
                      {"source", "a datasheet"},
                      {"notes", "anything"}};
  const GpuSpec spec = gpu_spec_from_json(value);
  EXPECT_EQ(spec.id, "g");
  EXPECT_EQ(spec.name, "G");
  EXPECT_THAT(spec.match, ElementsAre("G1", "G 1"));
  EXPECT_EQ(spec.compute_capability, "12.0");
  EXPECT_EQ(spec.sm_count, 10);
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth_gbs, 100.5);
  EXPECT_EQ(spec.memory_bytes, 1000);
  EXPECT_EQ(spec.l2_bytes, 100);
  EXPECT_EQ(spec.smem_per_sm_bytes, 50);
  EXPECT_EQ(spec.smem_per_block_optin_bytes, 40);
  EXPECT_EQ(spec.max_threads_per_sm, 1024);
  EXPECT_DOUBLE_EQ(spec.boost_clock_mhz, 1500);
  EXPECT_EQ(spec.peak_tflops, (std::map<std::string, double>{{"float32", 1.5}, {"int8", 8.0}}));
  EXPECT_EQ(spec.source, "a datasheet");

  json empty_peaks = value;
  empty_peaks["peak_tflops"] = json::object();
  try {
    gpu_spec_from_json(empty_peaks);
    ADD_FAILURE() << "accepted empty peak_tflops";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "peak_tflops");
    EXPECT_STREQ(e.what(), "must not be empty");
  }
}

}  // namespace
}  // namespace hiera::engine::knowledge
