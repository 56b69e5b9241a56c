// Malformed knowledge files: each is skipped and reported as exactly one
// problem naming its path and field, while every good file still loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "engine/knowledge/knowledge_base.h"
#include "knowledge_test_dir.h"

namespace hiera::engine::knowledge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::StartsWith;

class KnowledgeProblemsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { reference_ = new KnowledgeBase(load_knowledge(testing::source_knowledge_dir())); }
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
  }

  // A valid recipe with one edit applied, written as recipes/<id>.json.
  fs::path write_recipe(const std::function<void(json&)>& edit, const std::string& id = "zz_test_recipe") {
    json recipe = {{"id", id},
                   {"title", "A test recipe"},
                   {"space", "S1"},
                   {"bottlenecks", {"memory"}},
                   {"patterns", {"elementwise_chain"}},
                   {"what", "does a thing"},
                   {"effect", "makes it faster"},
                   {"expected_speedup", {1.1, 1.5}},
                   {"pitfalls", {"none known"}}};
    edit(recipe);
    return copy_.write("recipes/" + id + ".json", recipe.dump(2));
  }

  json real_gpu(const std::string& id) {
    std::ifstream in(copy_.path() / "gpus" / (id + ".json"));
    return json::parse(in);
  }

  // Loads the copy and expects exactly one problem at `path` and `field`; returns its message.
  std::string single_problem(const fs::path& path, const std::string& field) {
    kb_ = load_knowledge(copy_.path());
    EXPECT_EQ(kb_.problems.size(), 1u);
    if (kb_.problems.size() != 1)
      for (const auto& problem : kb_.problems) ADD_FAILURE() << "problem: " << problem.to_string();
    if (kb_.problems.empty()) return "";
    EXPECT_EQ(kb_.problems[0].path, path);
    EXPECT_EQ(kb_.problems[0].field, field);
    return kb_.problems[0].message;
  }

  void expect_everything_else_loaded(int recipes_delta = 0, int gpus_delta = 0) {
    EXPECT_EQ(kb_.recipes.size(), reference_->recipes.size() + recipes_delta);
    EXPECT_EQ(kb_.gpus.size(), reference_->gpus.size() + gpus_delta);
    EXPECT_EQ(kb_.spaces.size(), 3u);
    EXPECT_EQ(kb_.prompts.size(), reference_->prompts.size());
    EXPECT_EQ(kb_.templates.size(), reference_->templates.size());
  }

  static KnowledgeBase* reference_;
  testing::KnowledgeCopy copy_;
  KnowledgeBase kb_;
};

KnowledgeBase* KnowledgeProblemsTest::reference_ = nullptr;

TEST_F(KnowledgeProblemsTest, TheUntouchedCopyHasNoProblems) {
  kb_ = load_knowledge(copy_.path());
  EXPECT_TRUE(kb_.problems.empty());
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, AValidExtraRecipeLoads) {
  write_recipe([](json&) {});
  kb_ = load_knowledge(copy_.path());
  EXPECT_TRUE(kb_.problems.empty());
  expect_everything_else_loaded(1);
  EXPECT_NE(kb_.recipe("zz_test_recipe"), nullptr);
}

TEST_F(KnowledgeProblemsTest, BadJsonNamesItsLine) {
  const auto path = copy_.write("recipes/broken.json", "{\n  \"id\": \"broken\",\n  \"title\":\n}\n");
  EXPECT_THAT(single_problem(path, ""), StartsWith("invalid JSON at line 4, column 1: syntax error while parsing value"));
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, EmptyFileIsBadJson) {
  const auto path = copy_.write("gpus/empty.json", "");
  EXPECT_THAT(single_problem(path, ""), StartsWith("invalid JSON at line 1, column 1:"));
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, TopLevelMustBeAnObject) {
  const auto path = copy_.write("recipes/array.json", "[1, 2]");
  EXPECT_EQ(single_problem(path, ""), "expected a JSON object, got an array");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, MissingField) {
  json gpu = real_gpu("h200");
  gpu["id"] = "h200_copy";
  gpu.erase("sm_count");
  const auto path = copy_.write("gpus/h200_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(path, "sm_count"), "missing required field");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, WrongType) {
  const auto path = write_recipe([](json& r) { r["title"] = 5; });
  EXPECT_EQ(single_problem(path, "title"), "expected a string, got an integer");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, WrongTypeInsideAnArray) {
  const auto path = write_recipe([](json& r) { r["pitfalls"] = {"fine", false}; });
  EXPECT_EQ(single_problem(path, "pitfalls[1]"), "expected a string, got a boolean");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, FractionalIntegerIsAWrongType) {
  json gpu = real_gpu("l40s");
  gpu["id"] = "l40s_copy";
  gpu["sm_count"] = 142.5;
  const auto path = copy_.write("gpus/l40s_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(path, "sm_count"), "expected an integer, got a number");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, UnknownSpace) {
  const auto path = write_recipe([](json& r) { r["space"] = "S4"; });
  EXPECT_EQ(single_problem(path, "space"), "unknown space \"S4\" (known: S1, S2, S3)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, UnknownBottleneck) {
  const auto path = write_recipe([](json& r) { r["bottlenecks"] = {"memory", "bandwidth"}; });
  EXPECT_EQ(single_problem(path, "bottlenecks[1]"), "unknown bottleneck \"bandwidth\" (known: memory, compute, latency)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, UnknownPattern) {
  const auto path = write_recipe([](json& r) { r["patterns"] = {"gemm", "matmul"}; });
  EXPECT_EQ(single_problem(path, "patterns[1]"),
            "unknown pattern \"matmul\" (known: elementwise_chain, reduction, norm, softmax, gemm, gemm_epilogue, "
            "batched_gemm, conv, conv_epilogue, attention, stencil, launch_bound, copy_transpose, whole_module)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, UnknownDtypeAndAllowance) {
  const auto dtype = write_recipe([](json& r) { r["dtypes"] = {"fp32"}; }, "zz_dtype");
  EXPECT_THAT(single_problem(dtype, "dtypes[0]"), StartsWith("unknown dtype \"fp32\" (known: float64, float32,"));
  fs::remove(dtype);
  const auto allowance = write_recipe([](json& r) { r["requires_allow"] = {"tf32", "int4"}; }, "zz_allow");
  EXPECT_EQ(single_problem(allowance, "requires_allow[1]"),
            "unknown numerics allowance \"int4\" (known: tf32, fp16, bf16, fp8, inplace)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, UnknownFieldIsATypo) {
  const auto path = write_recipe([](json& r) { r["tempalte"] = "row_softmax.cu"; });
  EXPECT_EQ(single_problem(path, "tempalte"), "unknown field");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, NotesAreAllowedAnywhere) {
  write_recipe([](json& r) { r["notes"] = "free text"; });
  kb_ = load_knowledge(copy_.path());
  EXPECT_TRUE(kb_.problems.empty());
}

TEST_F(KnowledgeProblemsTest, DuplicateGpuId) {
  json gpu = real_gpu("h200");
  gpu["name"] = "an impostor";
  const auto path = copy_.write("gpus/h200_again.json", gpu.dump());
  EXPECT_EQ(single_problem(path, "id"), "duplicate id \"h200\" (already defined in h200.json)");
  expect_everything_else_loaded();
  ASSERT_NE(kb_.gpu("h200"), nullptr);
  EXPECT_EQ(kb_.gpu("h200")->name, reference_->gpu("h200")->name);
}

TEST_F(KnowledgeProblemsTest, RecipeIdMustBeItsFileName) {
  const auto path = write_recipe([](json& r) { r["id"] = "other_name"; }, "zz_file_name");
  EXPECT_EQ(single_problem(path, "id"),
            "id \"other_name\" does not match the file name zz_file_name.json (the file must be other_name.json)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, TemplateNamedButMissing) {
  const auto path = write_recipe([](json& r) { r["template"] = "missing.cu"; });
  EXPECT_EQ(single_problem(path, "template"),
            "template \"missing.cu\" not found in " + (copy_.path() / "templates").string());
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, TemplateMustBeAPlainFileName) {
  const auto path = write_recipe([](json& r) { r["template"] = "../spaces.json"; });
  EXPECT_EQ(single_problem(path, "template"), "must be a file name under templates/, got \"../spaces.json\"");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, SpeedupLowAboveHigh) {
  const auto path = write_recipe([](json& r) { r["expected_speedup"] = {3.5, 2}; });
  EXPECT_EQ(single_problem(path, "expected_speedup"), "low 3.5 is above high 2.0");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, SpeedupMustBeAPair) {
  const auto path = write_recipe([](json& r) { r["expected_speedup"] = {1.5}; });
  EXPECT_EQ(single_problem(path, "expected_speedup"), "expected [low, high], two numbers, got [1.5]");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, ShapeBoundsMustBeOrdered) {
  const auto path = write_recipe([](json& r) { r["shape"] = {{"min_elements", 10}, {"max_elements", 5}}; });
  EXPECT_EQ(single_problem(path, "shape"), "min_elements 10 is above max_elements 5");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, NestedFieldsAreNamedWithTheirPath) {
  const auto path = write_recipe([](json& r) { r["shape"] = {{"last_dim_multiple_of", 0}}; });
  EXPECT_EQ(single_problem(path, "shape.last_dim_multiple_of"), "must be at least 1, got 0");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, PromptWithAnUnknownPlaceholder) {
  const auto path =
      copy_.write("prompts/extra.json", R"({"id": "extra", "system": "You fix code.", "user": ["Task {{task_name}}", "{{code}}"]})");
  EXPECT_EQ(single_problem(path, "user"),
            "unknown placeholder {{code}} (allowed: task_name, language, gpu, spec, space, space_rules, current_code, "
            "profile, recipes, failures)");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, PromptWithAMalformedPlaceholder) {
  const auto path = copy_.write("prompts/extra.json", R"({"id": "extra", "system": "line one\nsee {{ spec }} here", "user": "u"})");
  EXPECT_EQ(single_problem(path, "system"), "malformed placeholder at line 2: {{ spec }} (expected {{name}})");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, MissingRequiredPrompt) {
  fs::remove(copy_.path() / "prompts" / "repair.json");
  EXPECT_EQ(single_problem(copy_.path() / "prompts" / "repair.json", ""), "missing file");
  EXPECT_EQ(kb_.prompts.size(), 1u);
  EXPECT_EQ(kb_.prompt("repair"), nullptr);
}

TEST_F(KnowledgeProblemsTest, BrokenRequiredPromptIsOneProblem) {
  const auto path = copy_.write("prompts/repair.json", R"({"id": "repair", "system": "s"})");
  EXPECT_EQ(single_problem(path, "user"), "missing required field");
  EXPECT_EQ(kb_.prompt("repair"), nullptr);
  EXPECT_NE(kb_.prompt("propose"), nullptr);
}

TEST_F(KnowledgeProblemsTest, GpuFiguresAreChecked) {
  json gpu = real_gpu("a100_sxm_80gb");
  gpu["id"] = "a100_copy";
  gpu["smem_per_block_optin_bytes"] = gpu["smem_per_sm_bytes"].get<std::int64_t>() + 1;
  const auto path = copy_.write("gpus/a100_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(path, "smem_per_block_optin_bytes"), "must be at most 167936, got 167937");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, GpuPeakRatesAreChecked) {
  json gpu = real_gpu("rtx_4090");
  gpu["id"] = "rtx_copy";
  gpu["peak_tflops"]["fp8"] = 660.6;
  const auto unknown = copy_.write("gpus/rtx_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(unknown, "peak_tflops.fp8"),
            "unknown dtype \"fp8\" (known: float32, tf32, float16, bfloat16, float64, int8)");
  gpu["peak_tflops"].erase("fp8");
  gpu["peak_tflops"]["tf32"] = -1;
  copy_.write("gpus/rtx_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(unknown, "peak_tflops.tf32"), "must be a positive number, got -1");
  gpu["compute_capability"] = "sm_89";
  gpu["peak_tflops"]["tf32"] = 82.6;
  copy_.write("gpus/rtx_copy.json", gpu.dump());
  EXPECT_EQ(single_problem(unknown, "compute_capability"), "expected \"major.minor\" such as \"9.0\", got \"sm_89\"");
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, MissingSpacesFile) {
  fs::remove(copy_.path() / "spaces.json");
  EXPECT_EQ(single_problem(copy_.path() / "spaces.json", ""), "missing file");
  EXPECT_TRUE(kb_.spaces.empty());
  EXPECT_EQ(kb_.recipes.size(), reference_->recipes.size());
}

TEST_F(KnowledgeProblemsTest, BadSpaceEntrySkipsOnlyThatSpace) {
  std::ifstream in(copy_.path() / "spaces.json");
  json spaces = json::parse(in);
  spaces["S2"]["rules"] = "one long string";
  const auto path = copy_.write("spaces.json", spaces.dump());
  EXPECT_EQ(single_problem(path, "S2.rules"), "expected an array of strings, got a string");
  EXPECT_EQ(kb_.spaces.size(), 2u);
  EXPECT_NE(kb_.space(Space::S1), nullptr);
  EXPECT_EQ(kb_.space(Space::S2), nullptr);
  EXPECT_NE(kb_.space(Space::S3), nullptr);
}

TEST_F(KnowledgeProblemsTest, MissingAndUnknownSpaces) {
  std::ifstream in(copy_.path() / "spaces.json");
  json spaces = json::parse(in);
  spaces.erase("S3");
  auto path = copy_.write("spaces.json", spaces.dump());
  EXPECT_EQ(single_problem(path, "S3"), "missing space");
  spaces["S3"] = spaces["S1"];
  spaces["S4"] = spaces["S1"];
  path = copy_.write("spaces.json", spaces.dump());
  EXPECT_EQ(single_problem(path, "S4"), "unknown space \"S4\" (known: S1, S2, S3)");
  EXPECT_EQ(kb_.spaces.size(), 3u);
}

TEST_F(KnowledgeProblemsTest, MissingSubdirectory) {
  fs::remove_all(copy_.path() / "gpus");
  EXPECT_EQ(single_problem(copy_.path() / "gpus", ""), "missing directory");
  EXPECT_TRUE(kb_.gpus.empty());
  EXPECT_EQ(kb_.recipes.size(), reference_->recipes.size());
}

TEST_F(KnowledgeProblemsTest, OtherFilesAreIgnored) {
  copy_.write("recipes/README.md", "# not a recipe");
  copy_.write("recipes/.hidden.json", "{");
  kb_ = load_knowledge(copy_.path());
  EXPECT_TRUE(kb_.problems.empty());
  expect_everything_else_loaded();
}

TEST_F(KnowledgeProblemsTest, SeveralBadFilesAreSeveralProblems) {
  write_recipe([](json& r) { r["space"] = "S9"; }, "zz_one");
  write_recipe([](json& r) { r.erase("what"); }, "zz_two");
  kb_ = load_knowledge(copy_.path());
  ASSERT_EQ(kb_.problems.size(), 2u);
  EXPECT_EQ(kb_.problems[0].to_string(), (copy_.path() / "recipes" / "zz_one.json").string() +
                                             ": space: unknown space \"S9\" (known: S1, S2, S3)");
  EXPECT_EQ(kb_.problems[1].to_string(),
            (copy_.path() / "recipes" / "zz_two.json").string() + ": what: missing required field");
  expect_everything_else_loaded();
}

TEST(KnowledgeLoadTest, MissingDirectoryIsOneProblem) {
  const hiera::testing::TempDirectory scratch;
  const fs::path missing = scratch.path() / "no-such-knowledge";
  const KnowledgeBase kb = load_knowledge(missing);
  ASSERT_EQ(kb.problems.size(), 1u);
  EXPECT_EQ(kb.problems[0].path, missing);
  EXPECT_EQ(kb.problems[0].field, "");
  EXPECT_EQ(kb.problems[0].message, "knowledge directory not found");
  EXPECT_TRUE(kb.gpus.empty());
  EXPECT_TRUE(kb.recipes.empty());
  EXPECT_EQ(kb.find_gpu("NVIDIA H200"), nullptr);
}

TEST(KnowledgeLoadTest, AFileInsteadOfADirectoryIsOneProblem) {
  const hiera::testing::TempDirectory scratch;
  const fs::path file = scratch.path() / "knowledge";
  std::ofstream(file) << "x";
  const KnowledgeBase kb = load_knowledge(file);
  ASSERT_EQ(kb.problems.size(), 1u);
  EXPECT_EQ(kb.problems[0].to_string(), file.string() + ": not a directory");
}

}  // namespace
}  // namespace hiera::engine::knowledge
