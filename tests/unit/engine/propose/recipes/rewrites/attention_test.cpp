// s1_scaled_dot_product_attention on the captured attention module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/graph/normalize.h"
#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(AttentionRewrite, HandWrittenAttentionBecomesSdpaWithTheReferencesScale) {
  const auto found = rewrites::find_attention(captured_graph("attention"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s1_scaled_dot_product_attention | add,matmul,matmul_1,mul,softmax,transpose | matmul_1 | "
                   "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, "
                   "scale=truediv) if _HIERA_SDPA_HAS_SCALE else (torch.softmax((((q @ (k.transpose(-2, -1))) * "
                   "truediv) + mask), dim=-1)) @ v | risky"}));
  EXPECT_EQ(found[0].definitions,
            (Texts{"# F.scaled_dot_product_attention takes scale= from torch 2.1 on; older versions keep the "
                   "reference's math.\n_HIERA_SDPA_HAS_SCALE = tuple(int(part) for part in "
                   "torch.__version__.split(\".\")[:2]) >= (2, 1)"}));
}

TEST(AttentionRewrite, ConstantScalesAndDivisionsArePassedAsScale) {
  auto g = captured_graph("attention");
  auto& mul = node_named(g, "mul");
  mul.kind = "div";
  mul.args[1] = Arg{};
  mul.args[1].kind = Arg::Kind::Number;
  mul.args[1].number = 8.0;  // scores / 8.0
  mul.code = "matmul / 8.0";
  const auto found = rewrites::find_attention(g, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].statements[0],
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.125) if "
            "_HIERA_SDPA_HAS_SCALE else (torch.softmax((((q @ (k.transpose(-2, -1))) / 8.0) + mask), dim=-1)) @ v");
}

TEST(AttentionRewrite, LeavesOtherPatternsAlone) {
  const auto without = [](const std::function<void(hiera::engine::graph::OpGraph&)>& change) {
    auto g = captured_graph("attention");
    change(g);
    return rewrites::find_attention(g, {}).empty();
  };
  EXPECT_FALSE(without([](auto&) {}));
  // softmax over another dim than the keys'
  EXPECT_TRUE(without([](auto& g) { node_named(g, "softmax").kwargs["dim"].number = 2; }));
  // the probabilities are also returned
  EXPECT_TRUE(without([](auto& g) { node_named(g, "softmax").users.push_back("output"); }));
  // a mask that broadcasts the scores to a larger shape
  EXPECT_TRUE(without([](auto& g) { node_named(g, "add").meta->shape = {3, 2, 4, 16, 16}; }));
  // k transposed over other dims
  EXPECT_TRUE(without([](auto& g) { node_named(g, "transpose").args[1].number = 1; }));
  // values of another dtype
  EXPECT_TRUE(without([](auto& g) { node_named(g, "v").meta->dtype = "float16"; }));
}

}  // namespace

namespace {

TEST(AttentionRewrite, AnNnSoftmaxModuleToo) {
  auto g = captured_graph("attention");
  auto& softmax = node_named(g, "softmax");
  softmax.op = "call_module";
  softmax.target = "softmax";
  softmax.kwargs.clear();
  softmax.normalized = std::map<std::string, Arg>{{"input", softmax.args[0]}};
  softmax.code = "self.softmax(add)";
  g.submodules["softmax"] = {"Softmax", {{"dim", -1}}};
  EXPECT_EQ(rewrites::find_attention(g, {}).size(), 1u);
  g.submodules["softmax"].attrs["dim"] = 1;
  EXPECT_TRUE(rewrites::find_attention(g, {}).empty());
}

}  // namespace

// Other spellings of attention, as the runner captured them and normalisation left them.
namespace {

using hiera::testing::replacement_text;

std::vector<std::string> attention_on(const std::string& fixture) {
  const auto normalized = hiera::engine::graph::normalize(captured_graph(fixture));
  return replacement_texts(rewrites::find_attention(normalized.graph, {}));
}

TEST(AttentionSpellings, ATrilBufferComparedWithZeroAndEvalDropoutIsCausal) {
  // The mask (self.bias == 0) feeds the pattern alone: is_causal replaces it, and only the fallback builds it.
  EXPECT_EQ(attention_on("attention_causal_buffer"), (Texts{"s1_scaled_dot_product_attention | bias,eq,masked_fill,matmul,matmul_1,mul,softmax,transpose | matmul_1 | mat"
                   "mul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3535533905"
                   "9327373) if _HIERA_SDPA_HAS_SCALE else (torch.nn.functional.softmax((((q @ (k.transpose(-2, -1))) * "
                   "0.35355339059327373).masked_fill(((self.bias) == 0), float('-inf'))), dim=-1, _stacklevel=3, dtype=No"
                   "ne)) @ v | risky"}));
}

// The statement the fixture's one attention rewrite assigns, without its fallback for a torch whose SDPA has no scale.
std::string sdpa_statement(const std::string& fixture) {
  const auto found = rewrites::find_attention(hiera::engine::graph::normalize(captured_graph(fixture)).graph, {});
  if (found.size() != 1) return std::to_string(found.size()) + " rewrites";
  return found[0].statements[0].substr(0, found[0].statements[0].find(" if "));
}

TEST(AttentionSpellings, ATriuMaskBuiltInForwardWithMaskedFillIsCausal) {
  EXPECT_EQ(sdpa_statement("attention_causal_triu"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.35355339059327373)");
  const auto texts = attention_on("attention_causal_triu");
  ASSERT_EQ(texts.size(), 1u);
  // The mask (a constant the tracer made, moved to q's device) is built for this pattern alone: covered, and
  // built only inside the fallback.
  EXPECT_EQ(texts[0].substr(0, texts[0].find(" | matmul_1 = ")),
            "s1_scaled_dot_product_attention | _tensor_constant0,getattr_1,masked_fill,matmul,matmul_1,softmax,to,transpose,"
            "truediv | matmul_1");
  EXPECT_NE(texts[0].find(".masked_fill(((torch.tensor([[False, True, True"), std::string::npos) << texts[0];
}

TEST(AttentionSpellings, ATrilBufferSlicedToTheSequenceLengthIsCausal) {
  // self.bias[:, :, :T, :T] == 0 with T from q.size(), the scale 1 / math.sqrt(k.size(-1)).
  EXPECT_EQ(sdpa_statement("attention_causal_buffer_sliced"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=truediv)");
  EXPECT_THAT(attention_on("attention_causal_buffer_sliced"),
              ::testing::ElementsAre(::testing::StartsWith(
                  "s1_scaled_dot_product_attention | bias,eq,getitem_2,getitem_4,masked_fill,matmul,matmul_1,mul,softmax,"
                  "transpose | ")));
}

TEST(AttentionSpellings, AMaskBuiltForThisLengthFromTorchOnesIsCausal) {
  // torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), diagonal=1) with T = q.size(-2).
  EXPECT_EQ(sdpa_statement("attention_causal_mask_from_sizes"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / sqrt)");
}

TEST(AttentionSpellings, AnAdditiveMaskBuiltForThisLengthAndASoftmaxInFloat32) {
  // LLaMA's spelling: torch.triu(torch.full((T, T), -inf), diagonal=1) added to the scores, then
  // F.softmax(scores.float(), dim=-1).type_as(q): the casts are identities for float32 inputs.
  EXPECT_EQ(sdpa_statement("attention_additive_mask_from_sizes"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / sqrt)");
}

TEST(AttentionSpellings, ASoftmaxInFloat32BetweenCastsFromAndBackToBfloat16) {
  // scores.to(torch.float32) -> softmax -> .to(torch.bfloat16): SDPA's kernels accumulate in float32 themselves.
  EXPECT_EQ(sdpa_statement("attention_bf16_float32_softmax"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=pow_1)");
}

TEST(AttentionSpellings, TorchWhereWithTheLowestValueOfTheScoresDtypeInBfloat16) {
  // torch.where(tril(ones(bool)), scores, torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)),
  // softmax of scores.float(), .to(q.dtype): traced by fx since torch.finfo and torch.tensor take traced values.
  EXPECT_EQ(sdpa_statement("attention_bf16_finfo_where"),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=truediv)");
}

TEST(AttentionSpellings, ScoresFromOneBaddbmmTakeItsBiasAsTheMaskAndAlphaAsTheScale) {
  // ALiBi: self.alibi.baddbmm(q, k.transpose(-2, -1), alpha=scale), softmax, torch.bmm.
  EXPECT_EQ(sdpa_statement("attention_alibi_baddbmm"),
            "bmm = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=alibi, scale=0.5)");
  EXPECT_THAT(attention_on("attention_alibi_baddbmm"),
              ::testing::ElementsAre(::testing::StartsWith(
                  "s1_scaled_dot_product_attention | baddbmm,bmm,softmax,transpose | ")));
  const auto rewrites_after = [](const std::function<void(hiera::engine::graph::OpGraph&)>& change) {
    auto g = hiera::engine::graph::normalize(captured_graph("attention_alibi_baddbmm")).graph;
    change(g);
    return rewrites::find_attention(g, {}).size();
  };
  // beta = 1 is the bias as it is; any other beta scales it: not a mask SDPA adds as it is.
  const auto with_beta = [](double beta) {
    return [beta](hiera::engine::graph::OpGraph& g) {
      hiera::engine::graph::Arg value;
      value.kind = hiera::engine::graph::Arg::Kind::Number;
      value.number = beta;
      node_named(g, "baddbmm").kwargs["beta"] = value;
    };
  };
  EXPECT_EQ(rewrites_after(with_beta(1.0)), 1u);
  EXPECT_EQ(rewrites_after(with_beta(0.5)), 0u);
  // A bias shared over the batch (broadcast by baddbmm) is left alone.
  EXPECT_EQ(rewrites_after([](auto& g) { node_named(g, "alibi").meta->shape = {8, 8}; }), 0u);
}

TEST(AttentionSpellings, CastsThatChangeWhatTheProductReadsAreNotFolded) {
  const auto rewrites_after = [](const std::function<void(hiera::engine::graph::OpGraph&)>& change) {
    auto g = hiera::engine::graph::normalize(captured_graph("attention_bf16_float32_softmax")).graph;
    change(g);
    return rewrites::find_attention(g, {}).size();
  };
  EXPECT_EQ(rewrites_after([](auto&) {}), 1u);
  // The probabilities stay in float32 (no cast back): the product is not the scores' dtype's.
  EXPECT_EQ(rewrites_after([](auto& g) { node_named(g, "to_1").meta->dtype = "float32"; }), 0u);
  // The softmax in float64: more than SDPA's float32 accumulation.
  EXPECT_EQ(rewrites_after([](auto& g) {
              node_named(g, "to").meta->dtype = "float64";
              node_named(g, "softmax").meta->dtype = "float64";
            }),
            0u);
  // A cast that also moves the value (x.to("cuda", torch.float32)) is not a cast alone.
  EXPECT_EQ(rewrites_after([](auto& g) {
              Arg device;
              device.kind = Arg::Kind::String;
              device.text = "cuda";
              node_named(g, "to").args.insert(node_named(g, "to").args.begin() + 1, device);
            }),
            0u);
  // x.to(torch.float32, copy=True) copies: not a cast alone.
  EXPECT_EQ(rewrites_after([](auto& g) { node_named(g, "to").kwargs["copy"] = Arg{}; }), 0u);
}

TEST(AttentionSpellings, BmmWithEvalDropoutBetweenSoftmaxAndValues) {
  EXPECT_EQ(attention_on("attention_bmm_dropout"), (Texts{"s1_scaled_dot_product_attention | bmm,bmm_1,mul,softmax,transpose | bmm_1 | bmm_1 = torch.nn.functio"
                   "nal.scaled_dot_product_attention(q, k, v, scale=0.3535533905932738) if _HIERA_SDPA_HAS_SCALE else to"
                   "rch.bmm((torch.softmax(((torch.bmm(q, (k.transpose(1, 2)))) * 0.3535533905932738), dim=-1)), v) | ri"
                   "sky"}));
}

TEST(AttentionSpellings, AnAdditiveCausalBufferAndPermutedKeys) {
  EXPECT_EQ(attention_on("attention_additive_causal"), (Texts{"s1_scaled_dot_product_attention | add,mask,matmul,matmul_1,mul,permute,softmax | matmul_1 | matmul_1 = to"
                   "rch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125) if _HIERA_SDPA_"
                   "HAS_SCALE else torch.matmul((torch.softmax((((torch.matmul(q, (k.permute(0, 1, 3, 2)))) * 0.125) + ("
                   "self.mask)), dim=-1)), v) | risky"}));
}

TEST(AttentionSpellings, EinsumScoresAndValues) {
  EXPECT_EQ(attention_on("attention_einsum"), (Texts{"s1_scaled_dot_product_attention | einsum,einsum_1,einsum_k_t,mul,softmax | einsum_1 | einsum_1 = tor"
                   "ch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3535533905932738) if _HIERA_SDPA_HAS_"
                   "SCALE else torch.matmul((((torch.matmul(q, (k.transpose(-2, -1)))) * 0.3535533905932738).softmax(dim"
                   "=-1)), v) | risky"}));
}

TEST(AttentionSpellings, TorchWhereOverAKeptTrilBufferIsCausal) {
  const auto found = rewrites::find_attention(hiera::engine::graph::normalize(captured_graph("attention_causal_where")).graph, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].statements[0].substr(0, found[0].statements[0].find(" if ")),
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=truediv)");
  EXPECT_EQ(replacement_text(found[0]).substr(0, 80),
            "s1_scaled_dot_product_attention | keep,matmul,matmul_1,mul,softmax,transpose,whe");
}

TEST(AttentionSpellings, AMaskThatIsNotCausalStaysAMask) {
  auto g = captured_graph("attention_additive_causal");
  node_named(g, "mask").facts.mask.clear();
  const auto found = rewrites::find_attention(hiera::engine::graph::normalize(g).graph, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].statements[0].find("attn_mask=mask"), std::string::npos);
  EXPECT_EQ(found[0].statements[0].find("is_causal"), std::string::npos);
  // A bool mask that is not known to be causal is not matched at all (masked_fill is no additive mask).
  auto triu = captured_graph("attention_causal_triu");
  node_named(triu, "to").facts.mask = "causal_kept";
  EXPECT_TRUE(rewrites::find_attention(triu, {}).empty());
}

}  // namespace
