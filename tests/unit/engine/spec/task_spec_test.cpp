// TaskSpec: precedence of sources with what each clause overrode, typed
// getters, the JSON round trip and the Markdown table.
#include "engine/spec/task_spec.h"

#include <gtest/gtest.h>

#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {
namespace {

using nlohmann::json;

TaskSpec small_spec() {
  TaskSpec spec;
  spec.target = "model.py::Model";
  spec.kind = TargetKind::Pytorch;
  spec.apply("numerics.atol", json{{"float32", 1e-4}, {"float16", 1e-2}}, Source::Default, "default");
  spec.apply("numerics.atol", 1e-3, Source::Configuration, "settings: hiera.numerics.atol");
  spec.apply("numerics.atol", json{{"float16", 5e-3}}, Source::Annotation, "line 3");
  spec.apply("environment.spaces", json{"S1", "S2"}, Source::Default, "default");
  spec.apply("performance.reference_ms", 0.25, Source::Probe, "reference run on NVIDIA H200");
  return spec;
}

TEST(TaskSpecTest, HigherSourceReplacesAndRemembersWhatItOverrode) {
  TaskSpec spec;
  spec.kind = TargetKind::Pytorch;
  spec.apply("numerics.deterministic", true, Source::Default, "default");
  spec.apply("numerics.deterministic", true, Source::Configuration, "settings: hiera.numerics.deterministic");
  spec.apply("numerics.deterministic", false, Source::Probe, "reference run on NVIDIA H200");
  const Clause& clause = spec.apply("numerics.deterministic", true, Source::Annotation, "line 7");
  EXPECT_EQ(clause, (Clause{"numerics.deterministic", Family::Numerics, true, Source::Annotation, "line 7", "determinism",
                            {{true, Source::Default, "default"},
                             {true, Source::Configuration, "settings: hiera.numerics.deterministic"},
                             {false, Source::Probe, "reference run on NVIDIA H200"}}}));
  EXPECT_EQ(spec.clauses.size(), 1u);
}

TEST(TaskSpecTest, LowerSourceLosesAndJoinsTheOverrides) {
  TaskSpec spec;
  spec.apply("environment.candidate_budget", 10, Source::Annotation, "line 2");
  spec.apply("environment.candidate_budget", 32, Source::Default, "default");
  spec.apply("environment.candidate_budget", 20, Source::Configuration, "settings: hiera.budget.candidates");
  const Clause* clause = spec.find("environment.candidate_budget");
  ASSERT_NE(clause, nullptr);
  EXPECT_EQ(clause->value, 10);
  EXPECT_EQ(clause->source, Source::Annotation);
  EXPECT_EQ(clause->overrides, (std::vector<Override>{{32, Source::Default, "default"},
                                                      {20, Source::Configuration, "settings: hiera.budget.candidates"}}));
}

TEST(TaskSpecTest, PerDtypeTolerancesMergeOverWhatTheyReplace) {
  const TaskSpec spec = small_spec();
  const Clause* atol = spec.find("numerics.atol");
  ASSERT_NE(atol, nullptr);
  // The configuration's 1e-3 for every dtype replaced the defaults whole; the
  // annotation's float16 entry merged over it.
  EXPECT_EQ(atol->value, json::parse(R"({"*": 0.001, "float16": 0.005})"));
  EXPECT_EQ(spec.atol("float16"), 0.005);
  EXPECT_EQ(spec.atol("float32"), 0.001);
  EXPECT_EQ(spec.rtol("float32"), std::nullopt);

  TaskSpec defaults;
  defaults.apply("numerics.rtol", json{{"float32", 1e-4}, {"float16", 1e-2}}, Source::Default, "default");
  defaults.apply("numerics.rtol", json{{"bfloat16", 2e-2}}, Source::Configuration, "settings: hiera.numerics.rtol");
  EXPECT_EQ(defaults.find("numerics.rtol")->value,
            json::parse(R"({"float32": 0.0001, "float16": 0.01, "bfloat16": 0.02})"));
  EXPECT_EQ(defaults.rtol("float64"), std::nullopt);
  // {"*": x} alone is written x.
  defaults.apply("numerics.rtol", json{{"*", 1e-3}}, Source::Annotation, "line 1");
  EXPECT_EQ(defaults.find("numerics.rtol")->value, 1e-3);
}

TEST(TaskSpecTest, ClausesStayInRegistryOrder) {
  TaskSpec spec;
  spec.apply("environment.time_budget_s", 600, Source::Default, "default");
  spec.apply("numerics.allow", json::array(), Source::Default, "default");
  spec.apply("interface.inplace", json::array(), Source::Default, "default");
  spec.apply("numerics.atol", 1e-4, Source::Default, "default");
  std::vector<std::string> names;
  for (const Clause& c : spec.clauses) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"interface.inplace", "numerics.atol", "numerics.allow",
                                             "environment.time_budget_s"}));
}

TEST(TaskSpecTest, ApplyRefusesWhatIsNotAContract) {
  TaskSpec spec;
  EXPECT_THROW(spec.apply("numerics.ulp", 1, Source::Annotation, "line 1"), SpecError);
  try {
    spec.apply("interface.layout", "contiguous", Source::Probe, "reference run");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "clause 'interface.layout' is not a contract: no check enforces it (the worker compares shapes and "
                 "values, not strides)");
  }
  EXPECT_TRUE(spec.clauses.empty());
}

TEST(TaskSpecTest, TypedGetters) {
  TaskSpec spec;
  spec.kind = TargetKind::Cuda;
  EXPECT_TRUE(spec.deterministic());
  EXPECT_TRUE(spec.no_input_mutation());
  EXPECT_EQ(spec.nan_inf(), "propagate");
  EXPECT_EQ(spec.target_speedup(), std::nullopt);
  EXPECT_EQ(spec.launch(), std::nullopt);
  spec.apply("numerics.allow", json{"tf32"}, Source::Annotation, "line 1");
  spec.apply("environment.spaces", json{"S2", "S3"}, Source::Configuration, "settings: hiera.spaces");
  spec.apply("environment.libraries", json{"cublas"}, Source::Configuration, "settings: hiera.libraries");
  spec.apply("performance.target_speedup", 1.5, Source::Annotation, "line 1");
  spec.apply("environment.candidate_budget", 40, Source::Annotation, "line 1");
  spec.apply("environment.time_budget_s", 600, Source::Annotation, "line 1");
  spec.apply("environment.compile_budget_s", 30, Source::Annotation, "line 1");
  spec.apply("interface.sizes", json{{"N", 1024}}, Source::Annotation, "line 2");
  spec.apply("invariants.shape_generality", json{{"N", 1001}}, Source::Annotation, "line 2");
  spec.apply("interface.shape_range", json{{"N", {512, 2048}}}, Source::Annotation, "line 2");
  spec.apply("interface.args", json::parse(R"([{"name": "x", "role": "input", "type": "float16", "extent": "N"},
                                                {"name": "y", "role": "output", "type": "bfloat16", "extent": "N"},
                                                {"name": "z", "role": "inout", "type": "float32", "extent": "N"}])"),
             Source::Annotation, "lines 3, 4, 5");
  spec.apply("interface.launch", json::parse(R"({"grid": ["N/256", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"})"),
             Source::Annotation, "line 6");
  spec.apply("performance.reference_ms", 0.5, Source::Probe, "reference run");
  spec.apply("performance.speed_of_light_ms", 0.1, Source::Probe, "reference run");
  EXPECT_EQ(spec.allowed_precisions(), std::vector<std::string>{"tf32"});
  EXPECT_EQ(spec.spaces(), (std::vector<std::string>{"S2", "S3"}));
  EXPECT_EQ(spec.libraries(), std::vector<std::string>{"cublas"});
  EXPECT_EQ(spec.target_speedup(), 1.5);
  EXPECT_EQ(spec.candidate_budget(), 40);
  EXPECT_EQ(spec.time_budget_s(), 600.0);
  EXPECT_EQ(spec.compile_budget_s(), 30.0);
  EXPECT_EQ(spec.sizes(), (SizeMap{{"N", 1024}}));
  EXPECT_EQ(spec.second_sizes(), (SizeMap{{"N", 1001}}));
  EXPECT_EQ(spec.shape_ranges(), (std::map<std::string, std::pair<std::int64_t, std::int64_t>>{{"N", {512, 2048}}}));
  EXPECT_EQ(spec.args().size(), 3u);
  EXPECT_EQ(spec.args()[1].name, "y");
  EXPECT_EQ(spec.launch()->grid[0], "N/256");
  EXPECT_EQ(spec.output_dtypes(), (std::vector<std::string>{"bfloat16", "float32"}));
  EXPECT_EQ(spec.reference_ms(), 0.5);
  EXPECT_EQ(spec.speed_of_light_ms(), 0.1);
}

TEST(TaskSpecTest, ToJsonExactly) {
  EXPECT_EQ(small_spec().to_json(), json::parse(R"({
    "target": "model.py::Model", "kind": "pytorch",
    "clauses": [
      {"name": "numerics.atol", "family": "numerics", "value": {"*": 0.001, "float16": 0.005},
       "source": "annotation", "origin": "line 3", "enforced_by": "values",
       "overrides": [{"value": {"float32": 0.0001, "float16": 0.01}, "source": "default", "origin": "default"},
                     {"value": 0.001, "source": "configuration", "origin": "settings: hiera.numerics.atol"}]},
      {"name": "performance.reference_ms", "family": "performance", "value": 0.25, "source": "probe",
       "origin": "reference run on NVIDIA H200", "enforced_by": "speedup"},
      {"name": "environment.spaces", "family": "environment", "value": ["S1", "S2"], "source": "default",
       "origin": "default", "enforced_by": "space"}]})"));
}

TEST(TaskSpecTest, JsonRoundTrip) {
  const TaskSpec spec = small_spec();
  EXPECT_EQ(TaskSpec::from_json(spec.to_json()), spec);
  EXPECT_EQ(TaskSpec::from_json(json::parse(spec.to_json().dump())).to_json(), spec.to_json());
}

TEST(TaskSpecTest, FromJsonChecksEveryClauseAgain) {
  auto error = [](json value) {
    try {
      TaskSpec::from_json(value);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json spec = small_spec().to_json();
  json unknown = spec;
  unknown["clauses"][0]["name"] = "numerics.ulp";
  EXPECT_EQ(error(unknown), "clause 'numerics.ulp' is not a contract: no check enforces it");
  json wrong_check = spec;
  wrong_check["clauses"][1]["enforced_by"] = "values";
  EXPECT_EQ(error(wrong_check), "clause 'performance.reference_ms': enforced_by must be speedup");
  json twice = spec;
  twice["clauses"].push_back(spec["clauses"][1]);
  EXPECT_EQ(error(twice), "clause 'performance.reference_ms' appears twice");
  json bad_source = spec;
  bad_source["clauses"][2]["source"] = "guess";
  EXPECT_EQ(error(bad_source), "clause 'environment.spaces': source must be default, configuration, probe or annotation");
  json bad_kind = spec;
  bad_kind["kind"] = "triton";
  EXPECT_EQ(error(bad_kind), "task spec: kind must be cuda or pytorch");
  EXPECT_EQ(error(json::array()), "task spec: must be an object");
}

TEST(TaskSpecTest, MarkdownTable) {
  EXPECT_EQ(small_spec().to_markdown(),
            "**Task spec** `model.py::Model` (pytorch)\n"
            "\n"
            "| family | clause | value | source | enforced by |\n"
            "|---|---|---|---|---|\n"
            "| numerics | `numerics.atol` | `{\"*\":0.001,\"float16\":0.005}` | annotation (line 3) | values |\n"
            "| performance | `performance.reference_ms` | `0.25` | probe (reference run on NVIDIA H200) | speedup |\n"
            "| environment | `environment.spaces` | `[\"S1\",\"S2\"]` | default | space |\n"
            "\n"
            "Overrides:\n"
            "\n"
            "- `numerics.atol`: annotation (line 3) overrides `0.001` from configuration (settings: "
            "hiera.numerics.atol), `{\"float16\":0.01,\"float32\":0.0001}` from default\n");
}

TEST(TaskSpecTest, MarkdownGroupsFamiliesEscapesPipesAndShortensLongValues) {
  TaskSpec spec;
  spec.target = "k.cu::k";
  spec.kind = TargetKind::Cuda;
  spec.apply("numerics.allow", json::array(), Source::Default, "default");
  spec.apply("numerics.nan_inf", "propagate", Source::Default, "default");
  json regions = json::array();
  for (int i = 0; i < 10; ++i) regions.push_back({{"name", "kernel_" + std::to_string(i) + "|x"}});
  spec.apply("performance.regions", regions, Source::Probe, "reference run");
  EXPECT_EQ(spec.to_markdown(),
            "**Task spec** `k.cu::k` (cuda)\n"
            "\n"
            "| family | clause | value | source | enforced by |\n"
            "|---|---|---|---|---|\n"
            "| numerics | `numerics.allow` | `[]` | default | static |\n"
            "|  | `numerics.nan_inf` | `\"propagate\"` | default | nan_inf |\n"
            "| performance | `performance.regions` | `[{\"name\":\"kernel_0\\|x\"},{\"name\":\"kernel_1\\|x\"},"
            "{\"name\":\"kernel_2\\|x\"},{\"name\":\"kernel_3\\|x\"},{\"name\":...` | probe "
            "(reference run) | speedup |\n");
}

}  // namespace
}  // namespace hiera::engine::spec
