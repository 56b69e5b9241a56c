// The rule catalog: every rule explained and linked to a recipe that exists
// in knowledge/recipes.
#include "engine/analysis/hint_rules.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include "build_paths.h"

namespace hiera::engine::analysis {
namespace {

TEST(HintRulesTest, EveryRuleHasAnExplanationAndAnExistingRecipe) {
  const auto recipes = std::filesystem::path(::hiera::testing::source_dir()) / "knowledge" / "recipes";
  std::set<std::string_view> ids;
  for (const auto& rule : hint_rules()) {
    SCOPED_TRACE(std::string(rule.id));
    EXPECT_TRUE(ids.insert(rule.id).second) << "duplicate";
    EXPECT_TRUE(rule.id.rfind("cuda.", 0) == 0 || rule.id.rfind("torch.", 0) == 0);
    EXPECT_GT(rule.explanation.size(), 100u);
    if (rule.recipe.empty()) continue;
    const auto file = recipes / (std::string(rule.recipe) + ".json");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    const auto recipe = nlohmann::json::parse(std::ifstream(file));
    EXPECT_EQ(recipe.at("id").get<std::string>(), rule.recipe);
  }
  // The rules the issues name, nine for CUDA and the PyTorch ones.
  EXPECT_EQ(ids, (std::set<std::string_view>{"cuda.uncoalesced_access", "cuda.missing_restrict", "cuda.shared_bank_conflict",
                                             "cuda.atomic_in_loop", "cuda.block_size", "cuda.missing_bounds_check", "cuda.grid_overrun",
                                             "cuda.double_in_loop", "cuda.launch_in_loop", "torch.fusable_elementwise_chain",
                                             "torch.gemm_epilogue", "torch.float32_gemm", "torch.foldable_batch_norm",
                                             "torch.diagonal_matmul", "torch.dropout_mode",
                                             "torch.handwritten_softmax", "torch.handwritten_attention",
                                             "torch.handwritten_layer_norm", "torch.host_sync", "torch.python_loop",
                                             "torch.contiguous_copy"}));
}

TEST(HintRulesTest, MakeHintCarriesTheCatalogEntry) {
  const Hint h = make_hint("torch.host_sync", {3, 9}, "'.item()' in forward", {{{3, 9}, ""}});
  EXPECT_EQ(h.rule, "torch.host_sync");
  EXPECT_EQ(h.severity, Severity::Warning);
  EXPECT_EQ(h.recipe, "s1_remove_host_sync");
  EXPECT_EQ(h.explanation, hint_rule("torch.host_sync").explanation);
  EXPECT_EQ(h.span, (Span{3, 9}));
  EXPECT_EQ(h.fix.size(), 1u);
  EXPECT_THROW(make_hint("cuda.no_such_rule", {}, ""), std::logic_error);
}

TEST(HintRulesTest, SeverityNamesFollowLsp) {
  EXPECT_STREQ(to_string(Severity::Error), "error");
  EXPECT_STREQ(to_string(Severity::Information), "information");
  EXPECT_EQ(static_cast<int>(Severity::Hint), 4);
}

}  // namespace
}  // namespace hiera::engine::analysis
