// The real knowledge/ directory: it loads cleanly, covers what the planner
// needs, and answers the queries (find_gpu, recipes_for, prompts, spaces,
// templates) as documented.
#include "engine/knowledge/knowledge_base.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/knowledge/placeholders.h"
#include "engine/knowledge/vocabulary.h"
#include "knowledge_test_dir.h"

namespace hiera::engine::knowledge {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const KnowledgeBase& real() {
  static const KnowledgeBase kb = load_knowledge(testing::source_knowledge_dir());
  return kb;
}

std::vector<std::string> ids(const std::vector<const Recipe*>& recipes) {
  std::vector<std::string> out;
  for (const Recipe* recipe : recipes) out.push_back(recipe->id);
  return out;
}

TEST(KnowledgeBaseTest, RealDirectoryLoadsWithoutProblems) {
  const KnowledgeBase& kb = real();
  for (const auto& problem : kb.problems) ADD_FAILURE() << problem.to_string();
  EXPECT_EQ(kb.problems.size(), 0u);
  EXPECT_GE(kb.recipes.size(), 28u);
  EXPECT_EQ(kb.gpus.size(), 6u);
  EXPECT_EQ(kb.spaces.size(), 3u);
  ASSERT_EQ(kb.prompts.size(), 2u);
  EXPECT_EQ(kb.prompts[0].id, "propose");
  EXPECT_EQ(kb.prompts[1].id, "repair");
  EXPECT_EQ(kb.templates.size(), 24u);
}

TEST(KnowledgeBaseTest, RecipesAreSortedById) {
  const auto& recipes = real().recipes;
  for (std::size_t i = 1; i < recipes.size(); ++i) EXPECT_LT(recipes[i - 1].id, recipes[i].id);
}

// Each pattern family of the engine issue, in every space where it makes sense.
TEST(KnowledgeBaseTest, EveryPatternFamilyIsCoveredInEachSpaceWhereItMakesSense) {
  struct Family {
    std::string name;
    std::vector<std::string> patterns;
    std::vector<Space> spaces;
  };
  const std::vector<Family> families = {
      {"elementwise", {"elementwise_chain"}, {Space::S1, Space::S3}},
      {"reductions and norms", {"reduction", "norm", "softmax"}, {Space::S1, Space::S3}},
      {"gemm and conv epilogues", {"gemm_epilogue", "conv_epilogue"}, {Space::S1, Space::S2, Space::S3}},
      {"batched gemm", {"batched_gemm"}, {Space::S1, Space::S2}},
      {"convolutions", {"conv"}, {Space::S1, Space::S2}},
      {"attention", {"attention"}, {Space::S1, Space::S2, Space::S3}},
      {"stencils", {"stencil"}, {Space::S1, Space::S3}},
      {"launch-bound", {"launch_bound"}, {Space::S1, Space::S2, Space::S3}},
      {"memory layout", {"copy_transpose"}, {Space::S1, Space::S3}},
  };
  for (const Family& family : families) {
    for (const std::string& pattern : family.patterns) {
      for (Space space : family.spaces) {
        const bool covered = std::any_of(real().recipes.begin(), real().recipes.end(), [&](const Recipe& recipe) {
          return recipe.space == space && contains(recipe.patterns, pattern);
        });
        EXPECT_TRUE(covered) << family.name << ": no " << to_string(space) << " recipe for pattern " << pattern;
      }
    }
  }
}

// The techniques the engine issue names, each a recipe of its own.
TEST(KnowledgeBaseTest, TheIssuesTechniquesAreAllPresent) {
  for (const char* id : {"s1_fused_torch_primitives", "s3_elementwise_fusion", "s3_vectorized_16byte_access",
                         "s3_grid_stride_sm_count_grid", "s3_warp_shuffle_row_reduction", "s3_welford_layer_norm",
                         "s3_welford_group_norm", "s3_fused_row_softmax", "s3_fused_logsumexp", "s1_addmm_linear_bias",
                         "s2_cublaslt_epilogue_bias_act", "s1_channels_last_conv", "s2_cudnn_benchmark_algorithm",
                         "s2_tf32_matmul", "s1_batched_matmul_for_loop", "s2_strided_batched_gemm",
                         "s1_scaled_dot_product_attention", "s3_flash_attention_kernel", "s3_stencil2d_shared_tile",
                         "s3_stencil3d_7pt_register_z", "s3_stencil3d_27pt", "s2_cuda_graph_capture",
                         "s3_fuse_small_kernels", "s1_remove_host_sync", "s1_remove_identity_ops",
                         "s1_remove_redundant_casts_copies", "s1_singleton_dim_reductions", "s1_avoid_contiguous_copies",
                         "s3_shared_memory_transpose"}) {
    EXPECT_NE(real().recipe(id), nullptr) << id;
  }
}

TEST(KnowledgeBaseTest, EveryRecipeIsComplete) {
  for (const Recipe& recipe : real().recipes) {
    SCOPED_TRACE(recipe.id);
    EXPECT_FALSE(recipe.title.empty());
    EXPECT_FALSE(recipe.bottlenecks.empty());
    EXPECT_FALSE(recipe.patterns.empty());
    EXPECT_GT(recipe.what.size(), 80u) << "a realistic description, not a label";
    EXPECT_GT(recipe.effect.size(), 60u);
    EXPECT_GE(recipe.expected_speedup_low, 1.0);
    EXPECT_LE(recipe.expected_speedup_low, recipe.expected_speedup_high);
    EXPECT_GE(recipe.pitfalls.size(), 2u);
    // S3 recipes always come with code to fill; S1/S2 ones here all do too.
    ASSERT_TRUE(recipe.template_name.has_value());
    EXPECT_TRUE(real().template_text(*recipe.template_name).has_value()) << *recipe.template_name;
    if (recipe.space == Space::S3) {
      EXPECT_THAT(*recipe.template_name, ::testing::EndsWith(".cu"));
    }
    // The id says its space: s1_..., s2_..., s3_...
    const std::string space = to_string(recipe.space);
    const std::string prefix = {'s', space[1], '_'};
    EXPECT_EQ(recipe.id.substr(0, 3), prefix);
  }
}

TEST(KnowledgeBaseTest, ReducedPrecisionRecipesRequireTheirAllowance) {
  ASSERT_NE(real().recipe("s2_tf32_matmul"), nullptr);
  EXPECT_THAT(real().recipe("s2_tf32_matmul")->requires_allow, ElementsAre("tf32"));
  ASSERT_NE(real().recipe("s1_autocast_reduced_precision_gemm"), nullptr);
  EXPECT_THAT(real().recipe("s1_autocast_reduced_precision_gemm")->requires_allow, ElementsAre("bf16"));
}

TEST(KnowledgeBaseTest, EveryGpuHasEveryField) {
  for (const char* id : {"h100_sxm", "h100_pcie", "h200", "a100_sxm_80gb", "l40s", "rtx_4090"}) {
    SCOPED_TRACE(id);
    const GpuSpec* spec = real().gpu(id);
    ASSERT_NE(spec, nullptr);
    EXPECT_FALSE(spec->name.empty());
    EXPECT_FALSE(spec->match.empty());
    EXPECT_THAT(spec->compute_capability, ::testing::MatchesRegex("[0-9]+\\.[0-9]+"));
    EXPECT_GT(spec->sm_count, 0);
    EXPECT_GT(spec->memory_bandwidth_gbs, 500);
    EXPECT_GE(spec->memory_bytes, std::int64_t{24} << 30);
    EXPECT_GE(spec->l2_bytes, std::int64_t{40} << 20);
    EXPECT_GE(spec->smem_per_sm_bytes, spec->smem_per_block_optin_bytes);
    EXPECT_GT(spec->smem_per_block_optin_bytes, 48 * 1024);
    EXPECT_GE(spec->max_threads_per_sm, 1536);
    EXPECT_GT(spec->boost_clock_mhz, 1000);
    for (const std::string& dtype : peak_rate_dtypes()) EXPECT_GT(spec->peak_tflops.count(dtype), 0u) << dtype;
    // Dense tensor-core rates: TF32 >= FP32 vector, FP16 = BF16 >= TF32, INT8 = 2 x FP16 or more.
    EXPECT_GE(spec->peak_tflops.at("tf32"), spec->peak_tflops.at("float32"));
    EXPECT_DOUBLE_EQ(spec->peak_tflops.at("float16"), spec->peak_tflops.at("bfloat16"));
    EXPECT_GE(spec->peak_tflops.at("float16"), spec->peak_tflops.at("tf32"));
    EXPECT_GE(spec->peak_tflops.at("int8"), 2 * spec->peak_tflops.at("float16") - 1);
    EXPECT_GT(spec->source.size(), 20u);
  }
}

TEST(KnowledgeBaseTest, H200FiguresAreTheDatasheets) {
  const GpuSpec* h200 = real().gpu("h200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->compute_capability, "9.0");
  EXPECT_EQ(h200->sm_count, 132);
  EXPECT_DOUBLE_EQ(h200->memory_bandwidth_gbs, 4800);
  EXPECT_EQ(h200->l2_bytes, 50 * 1024 * 1024);
  EXPECT_EQ(h200->smem_per_block_optin_bytes, 227 * 1024);
  EXPECT_DOUBLE_EQ(h200->peak_tflops.at("float32"), 67.0);
  EXPECT_DOUBLE_EQ(h200->peak_tflops.at("bfloat16"), 989.4);
}

TEST(KnowledgeBaseTest, FindGpuMatchesRealDeviceNames) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA H200", "h200"},
      {"NVIDIA H100 80GB HBM3", "h100_sxm"},
      {"NVIDIA H100 PCIe", "h100_pcie"},
      {"NVIDIA GeForce RTX 4090", "rtx_4090"},
      {"NVIDIA A100-SXM4-80GB", "a100_sxm_80gb"},
      {"NVIDIA L40S", "l40s"},
      {"nvidia h200", "h200"},
  };
  for (const auto& [device, id] : cases) {
    const GpuSpec* spec = real().find_gpu(device);
    ASSERT_NE(spec, nullptr) << device;
    EXPECT_EQ(spec->id, id) << device;
  }
  EXPECT_EQ(real().find_gpu("NVIDIA A100-SXM4-40GB"), nullptr);
  EXPECT_EQ(real().find_gpu("NVIDIA L40"), nullptr);
  EXPECT_EQ(real().find_gpu("Tesla T4"), nullptr);
  EXPECT_EQ(real().find_gpu(""), nullptr);
}

TEST(KnowledgeBaseTest, GpuTakesIdsAndTheUsualNamesInAnyCase) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"h200", "h200"},
      {"H200", "h200"},
      {"NVIDIA H200", "h200"},
      {"nvidia-h200", "h200"},
      {"A100", "a100_sxm_80gb"},
      {"a100", "a100_sxm_80gb"},
      {"NVIDIA A100-SXM4-80GB", "a100_sxm_80gb"},
      {"A100_SXM_80GB", "a100_sxm_80gb"},
      {"H100", "h100_sxm"},
      {"h100-pcie", "h100_pcie"},
      {"NVIDIA H100 PCIe", "h100_pcie"},
      {"RTX 4090", "rtx_4090"},
      {"rtx4090", "rtx_4090"},
      {"NVIDIA GeForce RTX 4090", "rtx_4090"},
      {"L40S", "l40s"},
  };
  for (const auto& [name, id] : cases) {
    const GpuSpec* spec = real().gpu(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->id, id) << name;
  }
  for (const char* name : {"", "nvidia", "NVIDIA L40", "L4", "H1", "NVIDIA A100-SXM4-40GB", "tpu9", "Tesla T4"}) {
    EXPECT_EQ(real().gpu(name), nullptr) << name;
  }
  EXPECT_EQ(real().accepted_gpus(),
            "a knowledge GPU id (a100_sxm_80gb, h100_pcie, h100_sxm, h200, l40s, rtx_4090) or a name such as \"H200\" or "
            "\"NVIDIA A100-SXM4-80GB\", in any case");
}

TEST(KnowledgeBaseTest, RecipesForOnRealData) {
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Memory, "softmax", "float32", 1 << 20, {})),
              ElementsAre("s3_flash_attention_kernel", "s3_fused_logsumexp", "s3_fused_row_softmax",
                          "s3_row_in_registers"));
  // 3xTF32 needs no allowance (float32's accuracy); TF32 itself does. With both, the rewrite of 3xTF32 offers
  // nothing (split_tf32.cpp): plain TF32 is cheaper.
  EXPECT_THAT(ids(real().recipes_for(Space::S2, Bottleneck::Compute, "gemm", "float32", 1 << 24, {})),
              ElementsAre("s2_split_tf32_gemm", "s2_strided_batched_gemm"));
  EXPECT_THAT(ids(real().recipes_for(Space::S2, Bottleneck::Compute, "gemm", "float32", 1 << 24, {"tf32"})),
              ElementsAre("s2_split_tf32_gemm", "s2_strided_batched_gemm", "s2_tf32_matmul"));
  EXPECT_THAT(ids(real().recipes_for(Space::S2, Bottleneck::Compute, "gemm", "bfloat16", 1 << 24, {"tf32"})),
              ElementsAre("s2_strided_batched_gemm"));
  // Vectorising needs >= 65536 elements, the SM-count grid >= 2^20, fusing small kernels <= 2^20.
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Memory, "elementwise_chain", "float32", 1000, {})),
              ElementsAre("s3_elementwise_fusion"));
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Memory, "elementwise_chain", "float32", 1 << 20, {})),
              ElementsAre("s3_elementwise_fusion", "s3_grid_stride_sm_count_grid", "s3_vectorized_16byte_access"));
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Memory, "elementwise_chain", "float16", 1 << 20, {})),
              ElementsAre("s3_elementwise_fusion", "s3_grid_stride_sm_count_grid"));
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Latency, "elementwise_chain", "float32", 1 << 24, {})),
              ElementsAre("s3_elementwise_fusion", "s3_grid_stride_sm_count_grid"));
  EXPECT_THAT(ids(real().recipes_for(Space::S3, Bottleneck::Latency, "elementwise_chain", "float32", 4096, {})),
              ElementsAre("s3_elementwise_fusion", "s3_fuse_small_kernels"));
}

TEST(KnowledgeBaseTest, PromptsUseThePlaceholdersTheProposerFills) {
  const PromptTemplate* propose = real().prompt("propose");
  ASSERT_NE(propose, nullptr);
  EXPECT_THAT(find_placeholders(propose->user),
              ElementsAre("task_name", "language", "gpu", "spec", "space", "space_rules", "current_code", "profile",
                          "recipes", "failures"));
  EXPECT_THAT(propose->system, HasSubstr("ModelNew"));
  EXPECT_THAT(propose->system, HasSubstr("one fenced code block"));
  const PromptTemplate* repair = real().prompt("repair");
  ASSERT_NE(repair, nullptr);
  EXPECT_THAT(find_placeholders(repair->user), ::testing::Contains("failures"));
  EXPECT_THAT(repair->system, HasSubstr("unwritten_output"));
  EXPECT_EQ(real().prompt("nope"), nullptr);

  std::map<std::string, std::string, std::less<>> values;
  for (const std::string& name : prompt_placeholders()) values[name] = "<" + name + ">";
  const PromptTemplate::Messages messages = propose->render(values);
  EXPECT_EQ(messages.user.substr(0, 61), "Task: <task_name>\nLanguage: <language>\nTarget GPU: <gpu>\n\n## ");
  EXPECT_THAT(messages.user, HasSubstr("```\n<current_code>\n```"));
  EXPECT_TRUE(find_placeholders(messages.user).empty());
  values.erase("task_name");
  EXPECT_THROW(
      {
        try {
          propose->render(values);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "no value for placeholder {{task_name}}");
          throw;
        }
      },
      std::invalid_argument);
}

TEST(KnowledgeBaseTest, SpacesCarryTheirRules) {
  ASSERT_NE(real().space(Space::S1), nullptr);
  EXPECT_EQ(real().space(Space::S1)->name, "PyTorch operators");
  EXPECT_THAT(real().space(Space::S1)->rules_text(), HasSubstr("no custom CUDA"));
  ASSERT_NE(real().space(Space::S2), nullptr);
  EXPECT_THAT(real().space(Space::S2)->rules_text(), HasSubstr("cuBLASLt"));
  ASSERT_NE(real().space(Space::S3), nullptr);
  const std::string s3 = real().space(Space::S3)->rules_text();
  EXPECT_THAT(s3, HasSubstr("hiera_runner.nvrtc_runtime"));
  EXPECT_THAT(s3, HasSubstr("Never use torch.utils.cpp_extension.load_inline"));
  EXPECT_EQ(s3.substr(0, 2), "- ");
  EXPECT_EQ(std::count(s3.begin(), s3.end(), '\n'), static_cast<long>(real().space(Space::S3)->rules.size()));
}

TEST(KnowledgeBaseTest, TemplateTextByName) {
  const auto text = real().template_text("row_softmax.cu");
  ASSERT_TRUE(text.has_value());
  EXPECT_THAT(*text, HasSubstr("extern \"C\" __global__"));
  EXPECT_THAT(real().templates.at("row_softmax.cu").placeholders,
              ElementsAre("includes", "scalar_t", "block_size", "log", "kernel_name"));
  EXPECT_FALSE(real().template_text("missing.cu").has_value());
}

// knowledge/template_examples/<template>.json fills every placeholder of its
// template and nothing else (the examples were compiled with NVRTC, see README).
TEST(KnowledgeBaseTest, EveryTemplateHasAnExampleThatFillsExactlyItsPlaceholders) {
  for (const auto& [name, code] : real().templates) {
    SCOPED_TRACE(name);
    std::ifstream in(testing::source_knowledge_dir() / "template_examples" / (name + ".json"));
    ASSERT_TRUE(in) << "no example for " << name;
    const nlohmann::json example = nlohmann::json::parse(in);
    EXPECT_EQ(example.at("template").get<std::string>(), name);
    std::map<std::string, std::string, std::less<>> values;
    for (const auto& [key, value] : example.at("values").items()) values[key] = value.get<std::string>();
    std::set<std::string> keys;
    for (const auto& [key, value] : values) keys.insert(key);
    EXPECT_EQ(keys, std::set<std::string>(code.placeholders.begin(), code.placeholders.end()));
    const std::string filled = fill_placeholders(code.text, values);
    EXPECT_TRUE(find_placeholders(filled).empty());
  }
}

// recipes_for's semantics on a hand-made knowledge base.
Recipe make_recipe(std::string id, Space space, std::vector<Bottleneck> bottlenecks, std::vector<std::string> patterns) {
  Recipe recipe;
  recipe.id = std::move(id);
  recipe.space = space;
  recipe.bottlenecks = std::move(bottlenecks);
  recipe.patterns = std::move(patterns);
  return recipe;
}

TEST(KnowledgeBaseTest, RecipesForFiltersOnEveryCondition) {
  KnowledgeBase kb;
  kb.recipes.push_back(make_recipe("a_any", Space::S1, {Bottleneck::Memory}, {"norm"}));
  kb.recipes.push_back(make_recipe("b_half_only", Space::S1, {Bottleneck::Memory, Bottleneck::Compute}, {"norm"}));
  kb.recipes.back().dtypes = {"float16", "bfloat16"};
  kb.recipes.push_back(make_recipe("c_large", Space::S1, {Bottleneck::Memory}, {"norm", "reduction"}));
  kb.recipes.back().shape.min_elements = 1000;
  kb.recipes.back().shape.max_elements = 2000;
  kb.recipes.push_back(make_recipe("d_tf32", Space::S1, {Bottleneck::Memory}, {"norm"}));
  kb.recipes.back().requires_allow = {"tf32", "fp16"};
  kb.recipes.push_back(make_recipe("e_other_space", Space::S3, {Bottleneck::Memory}, {"norm"}));

  auto query = [&](Bottleneck b, std::string_view pattern, std::string_view dtype, std::int64_t n,
                   std::vector<std::string> allowed) {
    return ids(kb.recipes_for(Space::S1, b, pattern, dtype, n, allowed));
  };
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 1500, {}), ElementsAre("a_any", "c_large"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float16", 1500, {}), ElementsAre("a_any", "b_half_only", "c_large"));
  EXPECT_THAT(query(Bottleneck::Compute, "norm", "float16", 1500, {}), ElementsAre("b_half_only"));
  EXPECT_THAT(query(Bottleneck::Latency, "norm", "float16", 1500, {}), ElementsAre());
  EXPECT_THAT(query(Bottleneck::Memory, "reduction", "float32", 1500, {}), ElementsAre("c_large"));
  // Bounds are inclusive.
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 999, {}), ElementsAre("a_any"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 1000, {}), ElementsAre("a_any", "c_large"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 2000, {}), ElementsAre("a_any", "c_large"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 2001, {}), ElementsAre("a_any"));
  // Unknown dtype ("") and element count (< 0) are not held against a recipe.
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "", -1, {}), ElementsAre("a_any", "b_half_only", "c_large"));
  // Every allowance is needed, in either spelling.
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 10, {"tf32"}), ElementsAre("a_any"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 10, {"tf32", "fp16"}), ElementsAre("a_any", "d_tf32"));
  EXPECT_THAT(query(Bottleneck::Memory, "norm", "float32", 10, {"half", "tf32"}), ElementsAre("a_any", "d_tf32"));
  EXPECT_THAT(ids(kb.recipes_for(Space::S3, Bottleneck::Memory, "norm", "float32", 10, {})), ElementsAre("e_other_space"));
}

TEST(KnowledgeBaseTest, FindGpuPrefersTheLongestMatch) {
  KnowledgeBase kb;
  for (const auto& [id, match] : std::vector<std::pair<std::string, std::string>>{
           {"generic", "H100"}, {"pcie", "H100 PCIe"}, {"same_length", "H100"}}) {
    GpuSpec spec;
    spec.id = id;
    spec.match = {match};
    kb.gpus.push_back(spec);
  }
  ASSERT_NE(kb.find_gpu("NVIDIA H100 PCIe"), nullptr);
  EXPECT_EQ(kb.find_gpu("NVIDIA H100 PCIe")->id, "pcie");
  // Equal lengths: the first in id order.
  EXPECT_EQ(kb.find_gpu("NVIDIA H100 NVL")->id, "generic");
}

}  // namespace
}  // namespace hiera::engine::knowledge
