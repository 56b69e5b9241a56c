// Prompt building: the exact text the model reads, from a proposal request
// and a knowledge base built here (so the test pins the builder, not the data).
#include <gtest/gtest.h>

#include "engine/propose/prompt_builder.h"

namespace {

using namespace hiera::engine;

knowledge::KnowledgeBase small_knowledge() {
  knowledge::KnowledgeBase kb;
  kb.spaces.push_back({knowledge::Space::S1, "PyTorch operators", "torch only", {"Use torch only.", "Keep the parameters."}});
  kb.prompts.push_back({"propose", "You optimize {{language}} code for {{gpu}}.",
                        "Task {{task_name}} in {{space}}.\nRules:\n{{space_rules}}Spec:\n{{spec}}\nCode:\n{{current_code}}\n"
                        "Profile:\n{{profile}}Recipes:\n{{recipes}}Failures:\n{{failures}}"});
  return kb;
}

knowledge::Recipe fuse_recipe() {
  knowledge::Recipe r;
  r.id = "s1-batch-rows";
  r.title = "Batch a per-row loop";
  r.space = knowledge::Space::S1;
  r.what = "Replace a Python loop over rows with one batched op.";
  r.effect = "one launch instead of one per row";
  r.expected_speedup_low = 2;
  r.expected_speedup_high = 50;
  r.pitfalls = {"keep the row order", "mind broadcasting"};
  return r;
}

propose::Attempt failed_attempt() {
  propose::Attempt a;
  a.candidate.id = "c1";
  a.candidate.space = knowledge::Space::S1;
  a.candidate.notes = "proposal 1 of 1";
  a.compiled = true;
  a.failures = {"values: trial 0: 12 of 100 elements differ"};
  return a;
}

TEST(PromptBuilder, FillsEveryPlaceholderWithItsExactText) {
  const auto kb = small_knowledge();
  const auto recipe = fuse_recipe();
  propose::ProposalRequest request;
  request.task_name = "m.py::Model";
  request.spec = "| numerics | numerics.atol | 1e-05 |\n";
  request.gpu = "NVIDIA H200";
  request.reference_source = "class Model: pass\n";
  request.profile = "reference: 1.0000 ms\n";
  request.recipes = {&recipe};
  request.history = {failed_attempt()};
  const auto prompt = propose::build_prompt(*kb.prompt("propose"), request, kb, 1, 1);
  EXPECT_EQ(prompt.system, "You optimize Python (a PyTorch module in KernelBench format) code for NVIDIA H200.");
  EXPECT_EQ(prompt.user,
            "Task m.py::Model in S1 (PyTorch operators).\n"
            "Rules:\n- Use torch only.\n- Keep the parameters.\n"
            "Spec:\n| numerics | numerics.atol | 1e-05 |\n\n"
            "Code:\nclass Model: pass\n\n"
            "Profile:\nreference: 1.0000 ms\n"
            "Recipes:\n- s1-batch-rows (S1): Batch a per-row loop\n"
            "  What: Replace a Python loop over rows with one batched op.\n"
            "  Expected: one launch instead of one per row (2-50x)\n"
            "  Pitfalls: keep the row order; mind broadcasting\n"
            "Failures:\n- c1 (S1, proposal 1 of 1): failed verification\n"
            "  values: trial 0: 12 of 100 elements differ\n");
}

TEST(PromptBuilder, SeveralProposalsAtOnceAreToldApart) {
  const auto kb = small_knowledge();
  propose::ProposalRequest request;
  request.count = 3;
  const auto second = propose::build_prompt(*kb.prompt("propose"), request, kb, 2, 3);
  EXPECT_NE(second.user.find("\n\nThis is proposal 2 of 3 for this step: take a different approach from the other proposals.\n"),
            std::string::npos);
  const auto third = propose::build_prompt(*kb.prompt("propose"), request, kb, 3, 3);
  EXPECT_NE(second.user, third.user);
}

TEST(PromptBuilder, CurrentCodeIsTheBestSoFarOnceThereIsOne) {
  const auto kb = small_knowledge();
  propose::ProposalRequest request;
  request.reference_source = "REFERENCE";
  EXPECT_EQ(propose::prompt_values(request, kb).at("current_code"), "REFERENCE");
  request.current_best_source = "BEST";
  EXPECT_EQ(propose::prompt_values(request, kb).at("current_code"), "BEST");
}

TEST(PromptBuilder, FailuresListRejectionsCompileLogsAndSlowCandidatesButNotWinners) {
  std::vector<propose::Attempt> history;
  propose::Attempt rejected;
  rejected.candidate.id = "c1";
  rejected.candidate.rejected = "the reply holds no usable code (no_code_block): no fenced block";
  history.push_back(rejected);
  propose::Attempt broken;
  broken.candidate.id = "c2";
  broken.candidate.space = knowledge::Space::S3;
  broken.failures = {"compile: line 3: expected a ';'"};
  broken.compile_log = "candidate.cu(3): error: expected a \";\"\n1 error detected";
  history.push_back(broken);
  propose::Attempt slow;
  slow.candidate.id = "c3";
  slow.compiled = slow.correct = true;
  slow.speedup = 0.5;
  history.push_back(slow);
  propose::Attempt winner;
  winner.candidate.id = "c4";
  winner.compiled = winner.correct = true;
  winner.speedup = 3.0;
  history.push_back(winner);
  EXPECT_EQ(propose::failures_text(history),
            "- c1 (S1): no usable code: the reply holds no usable code (no_code_block): no fenced block\n"
            "- c2 (S3): did not compile\n"
            "  compile: line 3: expected a ';'\n"
            "  candidate.cu(3): error: expected a \";\"\n"
            "  1 error detected\n"
            "- c3 (S1): correct but not faster (0.50x)\n");
  EXPECT_EQ(propose::failures_text({}), "(none yet)\n");
}

TEST(PromptBuilder, OnlyTheMostRecentFailuresAreRepeated) {
  std::vector<propose::Attempt> history;
  for (int i = 1; i <= 10; ++i) {
    propose::Attempt a;
    a.candidate.id = "c" + std::to_string(i);
    history.push_back(a);
  }
  const std::string text = propose::failures_text(history);
  EXPECT_EQ(text.find("- c4 "), std::string::npos);
  EXPECT_NE(text.find("- c5 "), std::string::npos);
  EXPECT_NE(text.find("- c10 "), std::string::npos);
}

TEST(PromptBuilder, ATemplatePlaceholderWithoutAValueIsAnError) {
  auto kb = small_knowledge();
  kb.prompts.front().user = "{{no_such_value}}";
  EXPECT_THROW(propose::build_prompt(kb.prompts.front(), {}, kb, 1, 1), std::invalid_argument);
}

}  // namespace
