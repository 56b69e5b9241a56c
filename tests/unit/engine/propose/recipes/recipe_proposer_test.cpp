// The knowledge proposer on captured graphs: which rewrites each space
// allows, the most complete candidate first, counts, the plan step's
// recipes, history de-duplication, S3 through its seam, and the answers
// without a graph.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/compile_proposer.h"
#include "engine/propose/recipes/recipe_proposer.h"
#include "engine/propose/recipes/module_emitter.h"
#include "graph_fixtures.h"
#include "build_paths.h"

namespace {

using namespace hiera::engine;
using namespace hiera::engine::propose::recipes;
using hiera::testing::captured_graph;
using hiera::testing::reference_source;
using Texts = std::vector<std::string>;

using Step = hiera::testing::ProposalStep;
constexpr auto step = hiera::testing::proposal_step;

// c1: torch.compile of the step's reference, verified `speedup` times faster.
propose::Attempt passed_compile_of_reference(const Step& s, double speedup) {
  propose::Attempt a;
  a.candidate.id = "c1";
  a.candidate.proposer = "torch.compile";
  a.candidate.source = propose::compiled_module(s.request.reference_source, "Model", propose::kCompileModeDefault);
  a.compiled = a.correct = true;
  a.speedup = speedup;
  return a;
}

std::vector<propose::Candidate> propose_for(Step& s, RecipeProposer proposer = RecipeProposer(nullptr)) {
  s.request.graph = &s.graph;
  return proposer.propose(s.request, {});
}

TEST(RecipeProposer, TheMostCompleteCombinationFirstThenVariants) {
  Step s = step("activations", knowledge::Space::S1, 3);
  const auto candidates = propose_for(s);
  ASSERT_EQ(candidates.size(), 3u);
  for (const auto& c : candidates) {
    EXPECT_EQ(c.proposer, "knowledge");
    EXPECT_EQ(c.space, knowledge::Space::S1);
    EXPECT_EQ(c.region, "forward");
    EXPECT_FALSE(c.rejected.has_value());
    EXPECT_EQ(c.source.rfind(s.request.reference_source.substr(0, 40), 0), 0u);
    EXPECT_NE(c.source.find(kGeneratedMarker), std::string::npos);
  }
  EXPECT_EQ(candidates[0].recipes, (Texts{"s1_fused_torch_primitives", "s1_fused_softmax_logsumexp"}));
  EXPECT_EQ(candidates[0].notes,
            "x * sigmoid(x) of 'x' as F.silu; hand-written erf GELU of 'mul' as F.gelu; hand-written tanh GELU of "
            "'mul_2' as F.gelu(approximate=\"tanh\"); log(1 + exp(x)) of 'mul_6' as F.softplus; log(softmax('log')) "
            "as log_softmax; log(sum(exp('log_1'))) as logsumexp");
  EXPECT_NE(candidates[0].source.find("        log_2 = torch.logsumexp(log_1, dim=-1)\n        return log_2\n"),
            std::string::npos);
  // Without the risky ones (softplus, log_softmax, logsumexp differ where the reference overflows).
  EXPECT_EQ(candidates[1].recipes, (Texts{"s1_fused_torch_primitives"}));
  EXPECT_EQ(candidates[1].notes,
            "x * sigmoid(x) of 'x' as F.silu; hand-written erf GELU of 'mul' as F.gelu; hand-written tanh GELU of "
            "'mul_2' as F.gelu(approximate=\"tanh\")");
  EXPECT_EQ(candidates[2].notes, "x * sigmoid(x) of 'x' as F.silu");  // then each rewrite alone
}

TEST(RecipeProposer, ExactCandidateSources) {
  Step casts = step("casts", knowledge::Space::S1, 1);
  const auto s1 = propose_for(casts);
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_EQ(s1[0].source, casts.request.reference_source.substr(0, casts.request.reference_source.size() - 1) +
                              "\n\n\n" + kGeneratedMarker + R"(
import torch


class ModelNew(Model):
    def forward(self, x):
        tanh = torch.tanh(x)
        contiguous = tanh
        to = contiguous
        float_1 = to
        mul = float_1 * 2
        return mul
)");

  Step mlp = step("mlp_epilogue", knowledge::Space::S2, 2);
  const auto s2 = propose_for(mlp);
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s2[1].notes,
            "ReLU of 'fc1' in the cuBLASLt epilogue (torch._addmm_activation); tanh-GELU of 'fc2' in the cuBLASLt "
            "epilogue (torch._addmm_activation)");
  const std::string generated = s2[1].source.substr(s2[1].source.find(kGeneratedMarker));
  EXPECT_EQ(generated, std::string(kGeneratedMarker) + R"(
import torch


# torch._addmm_activation (cuBLASLt bias + activation epilogue) is private: use it only where it exists.
_HIERA_HAS_ADDMM_ACTIVATION = hasattr(torch, "_addmm_activation")


class ModelNew(Model):
    def forward(self, x):
        relu = torch._addmm_activation(self.fc1.bias, x, self.fc1.weight.t()) if _HIERA_HAS_ADDMM_ACTIVATION else torch.relu((self.fc1(x)))
        gelu = torch._addmm_activation(self.fc2.bias, relu, self.fc2.weight.t(), use_gelu=True) if _HIERA_HAS_ADDMM_ACTIVATION and relu.is_cuda else torch.nn.functional.gelu((self.fc2(relu)), approximate='tanh')
        return gelu
)");
}

TEST(RecipeProposer, EachSpaceAddsItsRewrites) {
  Step s1 = step("conv_stack", knowledge::Space::S1, 1);
  Step s2 = step("conv_stack", knowledge::Space::S2, 1);
  const auto in_s1 = propose_for(s1);
  const auto in_s2 = propose_for(s2);
  ASSERT_EQ(in_s1.size(), 1u);
  ASSERT_EQ(in_s2.size(), 1u);
  EXPECT_EQ(in_s1[0].recipes, (Texts{"s1_channels_last_conv"}));
  // S2 adds the library rewrites (the risky CUDA graph too: the first candidate is the most complete).
  EXPECT_EQ(in_s2[0].recipes,
            (Texts{"s1_channels_last_conv", "s2_cudnn_benchmark_algorithm", "s2_cuda_graph_capture"}));
  EXPECT_EQ(in_s2[0].space, knowledge::Space::S2);
  // TF32 only where the contract allows it.
  Step tf32 = step("conv_stack", knowledge::Space::S2, 1);
  tf32.request.allowed_precisions = {"tf32"};
  EXPECT_EQ(propose_for(tf32)[0].recipes, (Texts{"s1_channels_last_conv", "s2_cudnn_benchmark_algorithm",
                                                 "s2_tf32_matmul", "s2_cuda_graph_capture"}));
}

TEST(RecipeProposer, Float32ProductsAs3xTf32InS2) {
  Step s = step("fp32_gemms", knowledge::Space::S2, 3);
  const auto candidates = propose_for(s);
  ASSERT_FALSE(candidates.empty());
  // The most complete set: the three products large enough, each through split_tf32 (imported once), and the
  // forward in a CUDA graph (risky: the next candidates leave it out).
  EXPECT_EQ(candidates[0].recipes, (Texts{"s2_split_tf32_gemm", "s2_cuda_graph_capture"}));
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[1].recipes, (Texts{"s2_split_tf32_gemm"}));
  const std::string& source = candidates[0].source;
  EXPECT_NE(source.find("\nfrom hiera_runner import split_tf32 as _split_tf32\n"), std::string::npos);
  EXPECT_EQ(source.find("from hiera_runner import split_tf32"), source.rfind("from hiera_runner import split_tf32"));
  EXPECT_NE(source.find("        fc = _split_tf32.linear(x, self.fc.weight, self.fc.bias)\n"), std::string::npos);
  EXPECT_NE(source.find("        linear = _split_tf32.linear(relu, proj, None)\n"), std::string::npos);
  EXPECT_NE(source.find("        matmul = _split_tf32.matmul(linear, w)\n"), std::string::npos);
  // S1 has none of it.
  Step s1 = step("fp32_gemms", knowledge::Space::S1, 3);
  for (const auto& c : propose_for(s1)) EXPECT_EQ(c.source.find("split_tf32"), std::string::npos) << c.notes;
}

// torch.compile calls the same float32 cuBLAS GEMM: once it passed, S2 first offers the model compiled around the
// 3xTF32 products (split_tf32 stays out of inductor's graphs), inductor fusing the rest.
TEST(RecipeProposer, AfterTorchCompilePassedS2FirstCompilesTheModelAroundThe3xTf32Products) {
  Step s = step("fp32_gemms", knowledge::Space::S2, 2);
  s.request.graph = &s.graph;
  s.request.torch_version = "2.11.0+cu130";
  s.request.history = {passed_compile_of_reference(s, 1.2)};
  const auto after = RecipeProposer(nullptr).propose(s.request, {});
  ASSERT_EQ(after.size(), 2u);
  const propose::Candidate& c = after[0];
  ASSERT_EQ(propose::torch_compile_mode(c.source), std::optional<std::string>("default")) << c.notes;
  EXPECT_TRUE(c.parts_under_compile);
  EXPECT_EQ(c.recipes, (Texts{"s2_split_tf32_gemm"}));
  EXPECT_EQ(c.parts.size(), 3u);
  EXPECT_NE(c.source.find("\nfrom hiera_runner import split_tf32 as _split_tf32\n"), std::string::npos);
  EXPECT_NE(c.source.find("        fc = _split_tf32.linear(x, self.fc.weight, self.fc.bias)\n"), std::string::npos);
  EXPECT_FALSE(propose::torch_compile_mode(after[1].source).has_value());
}

TEST(RecipeProposer, PrefersThePlanStepsRecipes) {
  knowledge::Recipe logsumexp;
  logsumexp.id = "s1_fused_softmax_logsumexp";
  Step s = step("activations", knowledge::Space::S1, 2);
  s.request.recipes = {&logsumexp};
  const auto candidates = propose_for(s);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].recipes, (Texts{"s1_fused_torch_primitives", "s1_fused_softmax_logsumexp"}));
  EXPECT_EQ(candidates[1].recipes, (Texts{"s1_fused_softmax_logsumexp"}));  // only the step's recipes
}

TEST(RecipeProposer, NeverProposesASourceOfTheRunsHistoryAgain) {
  Step s = step("activations", knowledge::Space::S1, 2);
  const auto first = propose_for(s);
  for (const auto& c : first) s.request.history.push_back({c, true, true, 1.2, {}, {}});
  const auto second = propose_for(s);
  ASSERT_EQ(second.size(), 2u);
  for (const auto& c : second) {
    for (const auto& old : first) EXPECT_NE(c.source, old.source);
  }
  EXPECT_NE(second[0].source, second[1].source);

  // Once every combination was tried there is nothing new: an empty answer (the optimizer moves on).
  Step small = step("mlp_epilogue", knowledge::Space::S2, 10);
  const auto all = propose_for(small);
  ASSERT_FALSE(all.empty());
  for (const auto& c : all) small.request.history.push_back({c, true, false, std::nullopt, {}, {}});
  EXPECT_TRUE(propose_for(small).empty());
}

TEST(RecipeProposer, ReturnsAtMostCountCandidates) {
  Step one = step("identity_ops", knowledge::Space::S1, 1);
  EXPECT_EQ(propose_for(one).size(), 1u);
  Step many = step("identity_ops", knowledge::Space::S1, 100);
  const auto all = propose_for(many);
  // The full set, then the 5 single rewrites: normalisation already removed the p=0 dropout and the
  // nn.Identity, which every candidate then lists under s1_remove_identity_ops.
  EXPECT_EQ(all.size(), 6u);
  for (const auto& c : all) {
    EXPECT_NE(std::find(c.recipes.begin(), c.recipes.end(), "s1_remove_identity_ops"), c.recipes.end());
    EXPECT_NE(c.notes.find("removed before matching: drop (dropout with p=0), ident (nn.Identity)"), std::string::npos);
  }
  Step zero = step("identity_ops", knowledge::Space::S1, 0);
  EXPECT_EQ(propose_for(zero).size(), 1u);  // a step always gets at least one
}

TEST(RecipeProposer, S3ComesFromTheKernelRewrites) {
  // A stand-in for find_kernel_rewrites: one kernel over the silu's nodes.
  int calls = 0;
  RecipeProposer proposer([&calls](const graph::OpGraph&, const propose::ProposalRequest& request) {
    ++calls;
    EXPECT_EQ(request.space, knowledge::Space::S3);
    Replacement r;
    r.recipe = "s3_elementwise_fusion";
    r.space = knowledge::Space::S3;
    r.description = "silu kernel";
    r.covered = {"sigmoid", "mul"};
    r.produces = "mul";
    r.statements = {"mul = torch.empty_like(x)",
                    "_kernel(\"silu\")((_grid(x.numel(), 256),), (256,), mul, x, x.numel())"};
    r.kernels = {{"silu", "extern \"C\" __global__ void silu(float* y, const float* x, int n) {}", {}}};
    return std::vector<Replacement>{r};
  });
  Step s1 = step("activations", knowledge::Space::S1, 1);
  propose_for(s1, proposer);
  EXPECT_EQ(calls, 0);  // S1 and S2 steps never ask for kernels

  Step s3 = step("activations", knowledge::Space::S3, 20);
  const auto candidates = propose_for(s3, proposer);
  EXPECT_EQ(calls, 1);
  ASSERT_GE(candidates.size(), 3u);
  // The step's own space wins the contest for the silu's nodes in the first candidate.
  EXPECT_EQ(candidates[0].recipes, (Texts{"s1_fused_torch_primitives", "s1_fused_softmax_logsumexp",
                                          "s2_cuda_graph_capture", "s3_elementwise_fusion"}));
  EXPECT_NE(candidates[0].notes.find("silu kernel"), std::string::npos);
  EXPECT_EQ(candidates[0].notes.find("as F.silu"), std::string::npos);
  EXPECT_NE(candidates[0].source.find("from hiera_runner import nvrtc_runtime"), std::string::npos);
  // A later variant lets the S1 rewrite have them.
  bool s1_silu = false;
  for (const auto& c : candidates) s1_silu = s1_silu || c.notes.find("as F.silu") != std::string::npos;
  EXPECT_TRUE(s1_silu);
}

TEST(RecipeProposer, AFailingKernelSourceLeavesTheOtherSpaces) {
  RecipeProposer broken([](const graph::OpGraph&, const propose::ProposalRequest&) -> std::vector<Replacement> {
    throw std::invalid_argument("no template row_softmax.cu");
  });
  Step s3 = step("activations", knowledge::Space::S3, 1);
  const auto candidates = propose_for(s3, broken);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_FALSE(candidates[0].rejected.has_value());

  Step nothing = step("mlp_epilogue", knowledge::Space::S1, 1);
  EXPECT_TRUE(propose_for(nothing, broken).empty());  // nothing applies in S1: no candidate, no problem
}

TEST(RecipeProposer, WithoutAGraphOnlyTheWholeModuleCudaGraph) {
  Step s1 = step("data_dependent", knowledge::Space::S1, 2);
  EXPECT_TRUE(propose_for(s1).empty());  // the one whole-module rewrite (CUDA graph capture) is S2's
  Step s2 = step("data_dependent", knowledge::Space::S2, 2);
  const auto in_s2 = propose_for(s2);
  ASSERT_EQ(in_s2.size(), 1u);
  EXPECT_EQ(in_s2[0].recipes, (Texts{"s2_cuda_graph_capture"}));
  EXPECT_NE(in_s2[0].source.find("        return super().forward(x)\n"), std::string::npos);

  Step missing = step("casts", knowledge::Space::S1, 1);
  RecipeProposer proposer(nullptr);
  EXPECT_TRUE(proposer.propose(missing.request, {}).empty());  // request.graph left null: nothing in S1
}

TEST(RecipeProposer, CudaKernelTasksGetNothingYet) {
  Step s = step("casts", knowledge::Space::S3, 2);
  s.request.language = propose::Language::Cuda;
  EXPECT_TRUE(propose_for(s).empty());
}

TEST(RecipeProposer, HonoursCancellation) {
  Step s = step("casts", knowledge::Space::S1, 2);
  s.request.graph = &s.graph;
  CancellationToken cancel;
  cancel.cancel();
  RecipeProposer proposer(nullptr);
  EXPECT_THROW(proposer.propose(s.request, cancel), Cancelled);
  EXPECT_EQ(proposer.name(), "knowledge");
}

}  // namespace

namespace {

TEST(RecipeProposer, S3UsesTheGeneratedKernelsOfTheKnowledgeBase) {
  const auto kb = hiera::engine::knowledge::load_knowledge(::hiera::testing::source_dir() + "/knowledge");
  RecipeProposer proposer(kb);
  Step s = step("activations", knowledge::Space::S3, 1);
  s.request.graph = &s.graph;
  const auto candidates = proposer.propose(s.request, {});
  ASSERT_EQ(candidates.size(), 1u);
  ASSERT_FALSE(candidates[0].rejected.has_value()) << *candidates[0].rejected;
  const auto& recipes = candidates[0].recipes;
  EXPECT_TRUE(std::any_of(recipes.begin(), recipes.end(), [](const std::string& r) { return r.rfind("s3_", 0) == 0; }))
      << candidates[0].notes;
  EXPECT_NE(candidates[0].source.find("_KERNEL_COMPILERS = {"), std::string::npos);
  EXPECT_NE(candidates[0].source.find("\"--fmad=false\""), std::string::npos);  // eager's rounding, op by op
  EXPECT_NE(candidates[0].source.find("from hiera_runner import nvrtc_runtime"), std::string::npos);
}

// Once torch.compile passed in the run, S3 first offers the model compiled by torch.compile with the kernels for
// what torch.compile leaves to a library poorly (learned depthwise convs, cuDNN's GEMM of one channel), each an
// opaque region; their verdict is torch.compile's, so it is no evidence about the parts alone.
TEST(RecipeProposer, AfterTorchCompilePassedS3FirstCompilesTheModelAroundTheLibraryGapKernels) {
  const auto kb = hiera::engine::knowledge::load_knowledge(::hiera::testing::source_dir() + "/knowledge");
  RecipeProposer proposer(kb);
  Step s = step("depthwise_convs", knowledge::Space::S3, 2);
  s.request.graph = &s.graph;
  s.request.torch_version = "2.11.0+cu130";
  const auto is_compiled = [](const propose::Candidate& c) { return propose::torch_compile_mode(c.source).has_value(); };
  // No torch.compile attempt yet: eager kernel modules only.
  const auto before = proposer.propose(s.request, {});
  ASSERT_EQ(before.size(), 2u);
  EXPECT_FALSE(is_compiled(before[0]) || is_compiled(before[1]));

  const propose::Attempt compiled_reference = passed_compile_of_reference(s, 1.4);
  s.request.history = {compiled_reference};
  s.request.current_best_source = compiled_reference.candidate.source;
  const auto after = proposer.propose(s.request, {});
  ASSERT_EQ(after.size(), 2u);
  const propose::Candidate& c = after[0];
  ASSERT_TRUE(is_compiled(c)) << c.notes;
  EXPECT_EQ(*propose::torch_compile_mode(c.source), "default");
  EXPECT_FALSE(propose::launches_nvrtc_kernels(c.source));
  EXPECT_TRUE(c.parts_under_compile);
  EXPECT_EQ(c.recipes, (Texts{"s3_depthwise_conv2d"}));
  ASSERT_EQ(c.parts.size(), 4u);
  EXPECT_EQ(c.parts[0].region, "dwconv");
  EXPECT_EQ(c.notes.rfind("torch.compile (mode default) of the model with hiera's kernels where torch.compile calls a "
                          "library that is poor at the op, each run as it is: conv2d with one channel per group and "
                          "learned 7x7 coefficients as one depthwise kernel",
                          0),
            0u)
      << c.notes;
  for (const char* region : {"dwconv(self, x)", "down(self, dwconv)", "conv2d(self, pointwise, shift, taps)",
                             "smooth(self, conv2d)"})
    EXPECT_NE(c.source.find(std::string("@_hiera_eager\ndef _hiera_region_") + region + ":\n"), std::string::npos) << region;
  EXPECT_NE(c.source.find("        pointwise = self.pointwise(down)\n"), std::string::npos);  // inductor's, between regions
  EXPECT_FALSE(is_compiled(after[1]));

  // Its verdict is not evidence about the parts: nothing is stitched from it, and its failure blames none of them.
  propose::Attempt composition;
  composition.candidate = c;
  composition.candidate.id = "c2";
  composition.compiled = composition.correct = true;
  composition.speedup = 1.9;
  s.request.history.push_back(composition);
  s.request.current_best_source = c.source;
  for (const auto& next : proposer.propose(s.request, {})) {
    EXPECT_FALSE(is_compiled(next));
    EXPECT_EQ(next.notes.find("stitched"), std::string::npos) << next.notes;
  }
  s.request.history.back().correct = false;
  s.request.history.back().speedup.reset();
  const auto after_failure = proposer.propose(s.request, {});
  ASSERT_FALSE(after_failure.empty());
  // Not blamed: still offered (with the S2 rewrites an S3 step also takes).
  const auto& kept = after_failure[0].recipes;
  EXPECT_NE(std::find(kept.begin(), kept.end(), "s3_depthwise_conv2d"), kept.end()) << after_failure[0].notes;

  // A torch without torch.compile: nothing compiled, whatever the history says.
  s.request.torch_version = "1.13.0";
  s.request.history = {compiled_reference};
  for (const auto& next : proposer.propose(s.request, {})) EXPECT_FALSE(is_compiled(next));
}

}  // namespace

namespace {

// The forward of the first candidate whose recipes include `recipe`, or "".
std::string forward_with(const std::vector<propose::Candidate>& candidates, const std::string& recipe) {
  for (const auto& c : candidates) {
    if (std::find(c.recipes.begin(), c.recipes.end(), recipe) == c.recipes.end()) continue;
    const auto at = c.source.find("class ModelNew");
    return at == std::string::npos ? c.source : c.source.substr(at);
  }
  return "";
}

TEST(KnowledgeProposerSpellings, AttentionInOtherSpellingsGetsSdpa) {
  for (const char* fixture : {"attention_causal_triu", "attention_causal_buffer", "attention_causal_buffer_sliced",
                              "attention_causal_mask_from_sizes", "attention_bmm_dropout", "attention_additive_causal", "attention_einsum",
                              "attention_causal_where", "attention_additive_mask_from_sizes",
                              "attention_bf16_float32_softmax", "attention_bf16_finfo_where"}) {
    SCOPED_TRACE(fixture);
    Step s = step(fixture, knowledge::Space::S1, 4);
    const std::string forward = forward_with(propose_for(s), "s1_scaled_dot_product_attention");
    EXPECT_NE(forward.find("torch.nn.functional.scaled_dot_product_attention(q, k, v"), std::string::npos) << forward;
    const bool causal = std::string(fixture) != "attention_bmm_dropout" && std::string(fixture) != "attention_einsum";
    EXPECT_EQ(forward.find("is_causal=True") != std::string::npos, causal) << forward;
    EXPECT_EQ(forward.find("dropout("), std::string::npos) << forward;  // eval-mode dropout normalised away
  }
}

}  // namespace
