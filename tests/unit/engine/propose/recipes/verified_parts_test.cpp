// Composition from verified parts: part keys and shapes (identical regions of
// a repeated block share a shape), the evidence the run's attempts give each
// part (passed alone, passed with others, blamed), the stitched set, and the
// knowledge proposer offering the stitched module first and no longer
// offering rewrites that failed, nor their twins.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/recipes/recipe_proposer.h"
#include "engine/propose/recipes/verified_parts.h"
#include "graph_fixtures.h"
#include "kernels/kernel_test_support.h"
#include "engine/graph/normalize.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/rewrites/rewrites.h"
#include "build_paths.h"

namespace {

using namespace hiera::engine;
using namespace hiera::engine::propose::recipes;
using hiera::testing::captured_graph;
using hiera::testing::reference_source;

using Step = hiera::testing::ProposalStep;
constexpr auto step = hiera::testing::proposal_step;

std::vector<propose::Candidate> propose_for(Step& s) {
  s.request.graph = &s.graph;
  RecipeProposer proposer(hiera::testing::source_knowledge());
  return proposer.propose(s.request, {});
}


using Texts = std::vector<std::string>;

propose::Attempt attempt(const propose::Candidate& c, bool correct, std::optional<double> speedup,
                         std::vector<std::string> failures = {}) {
  propose::Attempt a;
  a.candidate = c;
  a.compiled = true;
  a.correct = correct;
  a.speedup = speedup;
  a.failures = std::move(failures);
  return a;
}

propose::Candidate made_of(std::string id, const Texts& keys) {
  propose::Candidate c;
  c.id = std::move(id);
  c.proposer = "knowledge";
  for (const auto& key : keys) c.parts.push_back({key, "r", knowledge::Space::S1, key, "part " + key, std::nullopt, std::nullopt, std::nullopt});
  return c;
}

Texts keys_of(const propose::Candidate& c) {
  Texts out;
  for (const auto& p : c.parts) out.push_back(p.key.substr(0, p.key.rfind(':')));  // without the digest
  return out;
}

// The candidate among `offers` made of exactly the part whose note is `note`.
const propose::Candidate& single(const std::vector<propose::Candidate>& offers, const std::string& note) {
  for (const auto& c : offers) {
    if (c.parts.size() == 1 && c.notes == note) return c;
  }
  throw std::runtime_error("no single-part offer: " + note);
}

TEST(VerifiedParts, IdenticalRegionsShareAShapeButNotAKey) {
  const graph::OpGraph graph = graph::normalize(captured_graph("repeated_blocks")).graph;
  kernels::KernelRewriteOptions options;
  options.knowledge = &hiera::testing::source_knowledge();
  const auto pool = kernels::find_kernel_rewrites(graph, options);
  // Per block: layer norm in registers, layer norm by segments, the GELU chain, the gated residual.
  ASSERT_EQ(pool.size(), 12u);
  std::set<std::string> keys;
  for (const auto& r : pool) keys.insert(part_key(r));
  EXPECT_EQ(keys.size(), 12u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(part_shape(pool[i], graph), part_shape(pool[i + 4], graph)) << pool[i].produces;
    EXPECT_EQ(part_shape(pool[i], graph), part_shape(pool[i + 8], graph)) << pool[i].produces;
    for (std::size_t j = 0; j < 4; ++j) {
      if (j != i) {
        EXPECT_NE(part_shape(pool[i], graph), part_shape(pool[j], graph));
      }
    }
  }
  EXPECT_EQ(pool[0].produces, "blocks_0_norm");
  EXPECT_EQ(pool[4].produces, "blocks_1_norm");
  EXPECT_EQ(part_key(pool[0]).rfind("s3_row_in_registers:blocks_0_norm:", 0), 0u);
  EXPECT_EQ(part_shape(pool[0], graph).rfind("s3_row_in_registers:", 0), 0u);

  // The S1 rewrites the same way: three hand-written GELUs, one shape.
  std::vector<Replacement> gelus;
  for (const auto& rewrite : rewrites::catalog()) {
    for (auto& r : rewrite.find(graph, {})) {
      if (r.recipe == "s1_fused_torch_primitives") gelus.push_back(r);
    }
  }
  ASSERT_EQ(gelus.size(), 3u);
  EXPECT_EQ(part_shape(gelus[0], graph), part_shape(gelus[2], graph));
  EXPECT_NE(part_key(gelus[0]), part_key(gelus[2]));
}

TEST(VerifiedParts, ShapesNumberNodesByFirstUseAndForgetModuleIndicesOnly) {
  graph::OpGraph graph;
  for (const char* name : {"x", "qkv", "q", "k", "add", "add_1", "mul_1", "ln_1", "ln_2"}) {
    graph::Node n;
    n.name = name;
    graph.nodes.push_back(n);
  }
  const auto statement = [](std::string produces, std::string line, std::string kernel = {}) {
    Replacement r;
    r.recipe = "r";
    r.produces = std::move(produces);
    r.covered = {r.produces};
    r.statements = {std::move(line)};
    if (!kernel.empty()) r.kernels = {{"k_" + r.produces, kernel, {}}};
    return r;
  };
  // Module list indices are forgotten; the names are numbered by first use, also inside longer identifiers.
  EXPECT_EQ(part_shape(statement("add", "add = self.blocks[0].fc(x) + _add_scale"), graph),
            part_shape(statement("add_1", "add_1 = self.blocks[1].fc(add) + _add_1_scale"), graph));
  EXPECT_EQ(part_shape(statement("add", "add = self.get_submodule('layers.0.norm')(x)"), graph),
            part_shape(statement("add_1", "add_1 = self.get_submodule('layers.12.norm')(add)"), graph));
  // Which element of a value, whether an input is used twice, and an attribute named like a node all count.
  EXPECT_NE(part_shape(statement("q", "q = qkv[0]"), graph), part_shape(statement("k", "k = qkv[1]"), graph));
  EXPECT_NE(part_shape(statement("add", "add = x - x"), graph), part_shape(statement("add", "add = x - q"), graph));
  EXPECT_EQ(part_shape(statement("add", "add = x - q"), graph), part_shape(statement("add_1", "add_1 = q - k"), graph));
  EXPECT_NE(part_shape(statement("add", "add = x.add"), graph), part_shape(statement("add", "add = x.q"), graph));
  // Two submodules of the model are nodes too (call_module): the same rewrite of ln_1 and of ln_2 is one shape.
  EXPECT_EQ(part_shape(statement("add", "add = f(x, self.ln_1.weight)"), graph),
            part_shape(statement("add_1", "add_1 = f(add, self.ln_2.weight)"), graph));
  // In kernel sources every node name is one `$` (a helper's `float x` is not the node x).
  EXPECT_EQ(part_shape(statement("add", "add = x", "float f(float x) { return add + x; }"), graph),
            part_shape(statement("add_1", "add_1 = x", "float f(float x) { return add_1 + mul_1; }"), graph));
}

TEST(VerifiedParts, EvidenceFromTheRunsAttempts) {
  const Texts keys = {"a", "b", "c", "d", "e", "f"};
  const Texts shapes = {"A", "B", "C", "C", "E", "F"};
  const std::vector<propose::Attempt> history = {
      attempt(made_of("c1", {"a"}), true, 1.4),
      attempt(made_of("c2", {"a", "b"}), true, 1.1),
      attempt(made_of("c3", {"c"}), false, std::nullopt, {"verify: max abs error 3.1e-02 at [0, 7]"}),
      attempt(made_of("c4", {"a", "e"}), false, std::nullopt, {"compile: NVRTC error"}),
      // Two unverified parts: the failure cannot say which one broke it.
      attempt(made_of("c5", {"e", "f"}), false, std::nullopt, {"verify: NaN"}),
      // Never evaluated: says nothing about f.
      [] {
        propose::Candidate c = made_of("c6", {"f"});
        c.rejected = "the emitter refused it";
        return attempt(c, false, std::nullopt, {"proposer: the emitter refused it"});
      }(),
      // Another proposer's candidate carries no parts.
      attempt(propose::Candidate{}, false, std::nullopt, {"verify: wrong"}),
  };
  const auto e = part_evidence(keys, shapes, history);
  ASSERT_EQ(e.size(), 6u);
  EXPECT_TRUE(e[0].passed);
  EXPECT_EQ(e[0].alone, 1.4);
  EXPECT_EQ(e[0].best_with, 1.4);
  EXPECT_FALSE(e[0].blamed);
  EXPECT_TRUE(e[1].passed);
  EXPECT_FALSE(e[1].alone.has_value());
  EXPECT_EQ(e[1].best_with, 1.1);
  EXPECT_TRUE(e[2].blamed);
  EXPECT_EQ(e[2].blame, "c3 of it alone: verify: max abs error 3.1e-02 at [0, 7]");
  // d was never tried; its twin c (same shape) failed alone.
  EXPECT_TRUE(e[3].blamed);
  EXPECT_EQ(e[3].twin, "c");
  EXPECT_EQ(e[3].blame, "the same rewrite of an identical region failed: c3 of it alone: verify: max abs error 3.1e-02 at [0, 7]");
  EXPECT_TRUE(e[4].blamed);
  EXPECT_EQ(e[4].blame, "c4 (its other parts passed elsewhere): compile: NVRTC error");
  EXPECT_FALSE(e[5].blamed);
  EXPECT_FALSE(e[5].passed);

  // A twin that passed alone lends its speedup; the evidence says so.
  const auto lent = part_evidence({"g", "h"}, {"G", "G"}, {attempt(made_of("c7", {"g"}), true, 1.25)});
  EXPECT_EQ(lent[1].alone, 1.25);
  EXPECT_EQ(lent[1].twin, "g");
  EXPECT_FALSE(lent[1].passed);
  EXPECT_EQ(evidence_text(lent[1]), "(as its identical region, 1.25x alone)");
  EXPECT_EQ(evidence_text(lent[0]), "(1.25x alone)");
  EXPECT_EQ(evidence_text(e[1]), "(passed in a 1.10x candidate)");
}

Replacement covering(std::set<std::string> nodes) {
  Replacement r;
  r.recipe = "r";
  r.covered = std::move(nodes);
  r.produces = *r.covered.begin();
  return r;
}

TEST(VerifiedParts, ComposesTheFasterVerifiedPartOfEveryRegion) {
  // 0 and 1 rewrite the same region (node y); 1 was faster alone.
  const std::vector<Replacement> pool = {covering({"x", "y"}), covering({"y"}), covering({"z"}), covering({"w"}),
                                         covering({"v"}), covering({"u"})};
  std::vector<PartEvidence> evidence(pool.size());
  evidence[0].passed = true, evidence[0].alone = 1.3, evidence[0].best_with = 1.3;
  evidence[1].passed = true, evidence[1].alone = 1.5, evidence[1].best_with = 1.5;
  evidence[2].passed = true, evidence[2].best_with = 1.2;  // never alone, in a faster candidate
  evidence[3].passed = true, evidence[3].alone = 0.9, evidence[3].best_with = 1.2;  // slower alone: left out
  evidence[4].blamed = true;
  // 5: no evidence at all.
  EXPECT_EQ(compose_verified(pool, evidence), (std::vector<std::size_t>{1, 2}));
  // Measured alone wins a region over "passed with others", whatever the speedups.
  evidence[1].alone.reset(), evidence[1].best_with = 2.0;
  EXPECT_EQ(compose_verified(pool, evidence), (std::vector<std::size_t>{0, 2}));
  // One part only: nothing to stitch (it was already tried alone).
  evidence[2].passed = false, evidence[2].best_with.reset();
  evidence[1].best_with = 1.0;
  EXPECT_TRUE(compose_verified(pool, evidence).empty());
}

TEST(VerifiedParts, TheProposerStitchesTheVerifiedPartsFirstAndDropsTheFailedOnes) {
  Step s = step("activations", knowledge::Space::S1, 20);
  const auto first = propose_for(s);
  ASSERT_EQ(first.size(), 8u);
  // The full set failed; alone: silu 1.30x, erf GELU 1.10x, tanh GELU 0.90x, softplus failed, log_softmax 1.05x.
  s.request.history.push_back(attempt(first[0], false, std::nullopt, {"verify: max abs error 2.0e-01"}));
  s.request.history.push_back(attempt(single(first, "x * sigmoid(x) of 'x' as F.silu"), true, 1.30));
  s.request.history.push_back(attempt(single(first, "hand-written erf GELU of 'mul' as F.gelu"), true, 1.10));
  s.request.history.push_back(
      attempt(single(first, "hand-written tanh GELU of 'mul_2' as F.gelu(approximate=\"tanh\")"), true, 0.90));
  s.request.history.push_back(
      attempt(single(first, "log(1 + exp(x)) of 'mul_6' as F.softplus"), false, std::nullopt, {"verify: inf"}));
  s.request.history.push_back(attempt(single(first, "log(softmax('log')) as log_softmax"), true, 1.05));
  const auto next = propose_for(s);
  ASSERT_FALSE(next.empty());
  EXPECT_EQ(next[0].notes,
            "stitched from the parts verified in this run: x * sigmoid(x) of 'x' as F.silu (1.30x alone); "
            "hand-written erf GELU of 'mul' as F.gelu (1.10x alone); log(softmax('log')) as log_softmax (1.05x alone)");
  EXPECT_EQ(next[0].recipes, (Texts{"s1_fused_torch_primitives", "s1_fused_softmax_logsumexp"}));
  EXPECT_EQ(next[0].parts.size(), 3u);
  EXPECT_NE(next[0].source.find("torch.nn.functional.silu(x)"), std::string::npos);
  EXPECT_EQ(next[0].source.find("softplus"), std::string::npos);
  // Softplus failed alone: no later offer holds it.
  const propose::CandidatePart softplus = single(first, "log(1 + exp(x)) of 'mul_6' as F.softplus").parts.front();
  EXPECT_EQ(softplus.recipe, "s1_fused_torch_primitives");
  EXPECT_EQ(softplus.region, "log");  // the node whose value it produces
  EXPECT_EQ(softplus.description, "log(1 + exp(x)) of 'mul_6' as F.softplus");
  for (const auto& c : next) {
    EXPECT_EQ(std::find(c.parts.begin(), c.parts.end(), softplus), c.parts.end()) << c.notes;
    for (const auto& old : s.request.history) EXPECT_NE(c.source, old.candidate.source);
  }
  // The stitched module passes: a third proposal no longer offers it, and offers what is left untried.
  s.request.history.push_back(attempt(next[0], true, 1.38));
  for (const auto& c : propose_for(s)) EXPECT_EQ(c.notes.find("stitched"), std::string::npos) << c.notes;
}

TEST(VerifiedParts, ARepeatedBlockIsTriedAloneOnce) {
  Step s = step("repeated_blocks", knowledge::Space::S3, 100);
  const auto first = propose_for(s);
  // The full sets first, then the singles of block 0 and the whole-forward CUDA graph, then block 1 and 2's.
  ASSERT_EQ(first.size(), 19u);
  Texts singles;
  for (const auto& c : first) {
    if (c.parts.size() == 1) singles.push_back(keys_of(c).front());
  }
  EXPECT_EQ(singles, (Texts{"s3_row_in_registers:blocks_0_norm", "s3_welford_layer_norm:blocks_0_norm",
                            "s3_elementwise_fusion:mul_1", "s3_elementwise_fusion:add_1",
                            "s1_fused_torch_primitives:mul_1", "s2_cuda_graph_capture:forward",
                            "s3_row_in_registers:blocks_1_norm", "s3_welford_layer_norm:blocks_1_norm",
                            "s3_elementwise_fusion:mul_4", "s3_elementwise_fusion:add_3",
                            "s3_row_in_registers:blocks_2_norm", "s3_welford_layer_norm:blocks_2_norm",
                            "s3_elementwise_fusion:mul_7", "s3_elementwise_fusion:add_5",
                            "s1_fused_torch_primitives:mul_4", "s1_fused_torch_primitives:mul_7"}));
  // Block 0's singles judged: the register layer norm and the gated residual faster, the GELU kernel failed.
  const auto of = [&](const std::string& prefix) -> const propose::Candidate& {
    for (const auto& c : first) {
      if (c.parts.size() == 1 && c.parts.front().key.rfind(prefix, 0) == 0) return c;
    }
    throw std::runtime_error(prefix);
  };
  s.request.history.push_back(attempt(of("s3_row_in_registers:blocks_0_norm"), true, 1.20));
  s.request.history.push_back(attempt(of("s3_welford_layer_norm:blocks_0_norm"), true, 1.10));
  s.request.history.push_back(attempt(of("s3_elementwise_fusion:add_1"), true, 1.05));
  s.request.history.push_back(
      attempt(of("s3_elementwise_fusion:mul_1"), false, std::nullopt, {"verify: max abs error 1.0e-03"}));
  const auto next = propose_for(s);
  ASSERT_FALSE(next.empty());
  // Every block gets what block 0 showed: the register layer norm and the residual kernel, no GELU kernel.
  EXPECT_EQ(next[0].notes.rfind("stitched from the parts verified in this run: ", 0), 0u);
  EXPECT_EQ(keys_of(next[0]), (Texts{"s3_row_in_registers:blocks_0_norm", "s3_elementwise_fusion:add_1",
                             "s3_row_in_registers:blocks_1_norm", "s3_elementwise_fusion:add_3",
                             "s3_row_in_registers:blocks_2_norm", "s3_elementwise_fusion:add_5"}));
  EXPECT_NE(next[0].notes.find("(as its identical region, 1.20x alone)"), std::string::npos);
  // No block's singles are offered again, and no offer holds a GELU kernel.
  for (const auto& c : next) {
    for (const auto& p : c.parts) EXPECT_EQ(p.key.find("s3_elementwise_fusion:mul_"), std::string::npos) << c.notes;
    if (c.parts.size() == 1) {
      EXPECT_EQ(c.parts.front().key.find("s3_"), std::string::npos) << c.notes;
    }
  }
}

}  // namespace

namespace {

TEST(VerifiedParts, BisectsTheLatestFailureOverItsUnjudgedParts) {
  const std::vector<Replacement> pool = {covering({"a"}), covering({"b"}), covering({"c"}), covering({"d"}),
                                         covering({"e"}), covering({"f"})};
  const Texts keys = {"a", "b", "c", "d", "e", "f"};
  const auto judged = [&](const std::vector<propose::Attempt>& history) {
    return part_evidence(keys, keys, history);
  };
  // c1 (a..f) failed: the first half of its six.
  std::vector<propose::Attempt> history = {attempt(made_of("c1", keys), false, std::nullopt, {"verify: wrong"})};
  auto b = bisect_failure(pool, keys, judged(history), history);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->set, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(b->failed, "c1");
  EXPECT_EQ(b->tried, 3u);
  EXPECT_EQ(b->unjudged, 6u);
  // a, b, c passed faster: d, e, f are left; the next set is them verified plus d.
  history.push_back(attempt(made_of("c2", {"a", "b", "c"}), true, 1.2));
  b = bisect_failure(pool, keys, judged(history), history);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->set, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(b->unjudged, 3u);
  // That failed: d is the one unjudged part of c3, so d is blamed, and c1's unjudged are e and f.
  history.push_back(attempt(made_of("c3", {"a", "b", "c", "d"}), false, std::nullopt, {"verify: wrong"}));
  const auto e = judged(history);
  EXPECT_TRUE(e[3].blamed);
  b = bisect_failure(pool, keys, e, history);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->failed, "c1");
  EXPECT_EQ(b->set, (std::vector<std::size_t>{0, 1, 2, 4}));
  // e passed too. d (blamed) explains c1's failure: f, its last unjudged part, is not blamed for it,
  // and one unjudged part is nothing to bisect (the plain sets try it).
  history.push_back(attempt(made_of("c4", {"a", "b", "c", "e"}), true, 1.3));
  EXPECT_FALSE(judged(history)[5].blamed);
  EXPECT_FALSE(bisect_failure(pool, keys, judged(history), history));
  // With risky rewrites among the unjudged, the first split is the safe ones (the set without the risky ones).
  std::vector<Replacement> risky_first = pool;
  risky_first[0].risky = risky_first[1].risky = true;
  history = {attempt(made_of("c1", keys), false, std::nullopt, {"verify: wrong"})};
  EXPECT_EQ(bisect_failure(risky_first, keys, judged(history), history)->set, (std::vector<std::size_t>{2, 3, 4, 5}));
  // Those passed: the two risky ones are halved.
  history.push_back(attempt(made_of("c2", {"c", "d", "e", "f"}), true, 1.1));
  EXPECT_EQ(bisect_failure(risky_first, keys, judged(history), history)->set, (std::vector<std::size_t>{0, 2, 3, 4, 5}));
  // A failure made of rewrites outside the pool (another space's) is not bisected here.
  history = {attempt(made_of("c9", {"x", "y", "z"}), false, std::nullopt, {"verify: wrong"})};
  EXPECT_FALSE(bisect_failure(pool, keys, judged(history), history));
}

TEST(VerifiedParts, TheProposerBisectsAFailedFullSetBeforeTryingEachRewriteAlone) {
  Step s = step("activations", knowledge::Space::S1, 2);
  const auto first = propose_for(s);
  ASSERT_EQ(first[0].parts.size(), 6u);
  const auto with_id = [](propose::Candidate c, std::string id) {
    c.id = std::move(id);
    return c;
  };
  s.request.history.push_back(attempt(with_id(first[0], "c1"), false, std::nullopt, {"verify: max abs error 2.0e-01"}));
  const auto second = propose_for(s);
  ASSERT_FALSE(second.empty());
  EXPECT_EQ(second[0].notes,
            "bisecting c1's failure (3 of its 6 rewrites not yet judged, with those verified faster): "
            "x * sigmoid(x) of 'x' as F.silu (not yet judged); hand-written erf GELU of 'mul' as F.gelu (not yet judged); "
            "hand-written tanh GELU of 'mul_2' as F.gelu(approximate=\"tanh\") (not yet judged)");
  // The half passed: the other half is bisected on top of it.
  s.request.history.push_back(attempt(with_id(second[0], "c2"), true, 1.25));
  const auto third = propose_for(s);
  ASSERT_FALSE(third.empty());
  EXPECT_EQ(third[0].notes.rfind("bisecting c1's failure (1 of its 3 rewrites not yet judged", 0), 0u) << third[0].notes;
  EXPECT_EQ(third[0].parts.size(), 4u);
  EXPECT_NE(third[0].notes.find("x * sigmoid(x) of 'x' as F.silu (passed in a 1.25x candidate)"), std::string::npos);
}

}  // namespace

namespace {

TEST(VerifiedParts, AWholeBlockGetsTheBestVerifiedRewriteOfEachRegionAcrossSpaces) {
  // A pre-norm decoder block: no plain set pairs SDPA (S1) with the kernels (S3), whose softmax kernel
  // takes the attention's softmax in the full sets. The singles decide instead.
  Step s = step("transformer_block", knowledge::Space::S3, 100);
  const auto first = propose_for(s);
  const auto of = [&](const std::string& prefix) -> propose::Candidate {
    for (const auto& c : first) {
      if (c.parts.size() == 1 && c.parts.front().key.rfind(prefix, 0) == 0) return c;
    }
    throw std::runtime_error(prefix);
  };
  // ln_2's rewrites are twins of ln_1's (the same kernel over another LayerNorm): offered last.
  EXPECT_EQ(keys_of(first[first.size() - 2]), (Texts{"s3_row_in_registers:ln_2"}));
  EXPECT_EQ(keys_of(first.back()), (Texts{"s3_welford_layer_norm:ln_2"}));
  s.request.history = {
      attempt(of("s3_row_in_registers:ln_1"), true, 1.10),       attempt(of("s3_welford_layer_norm:ln_1"), true, 1.05),
      attempt(of("s3_row_in_registers:softmax"), true, 1.05),    attempt(of("s1_scaled_dot_product_attention"), true, 1.60),
      attempt(of("s3_elementwise_fusion:mul_4"), true, 1.20),    attempt(of("s1_fused_torch_primitives:mul_4"), true, 1.02),
      attempt(of("s2_cuda_graph_capture"), false, std::nullopt, {"verify: the capture failed"}),
  };
  const auto next = propose_for(s);
  ASSERT_FALSE(next.empty());
  Texts stitched = keys_of(next[0]);
  std::sort(stitched.begin(), stitched.end());
  EXPECT_EQ(stitched, (Texts{"s1_scaled_dot_product_attention:matmul_1", "s3_elementwise_fusion:mul_4",
                             "s3_row_in_registers:ln_1", "s3_row_in_registers:ln_2"}));
  EXPECT_NE(next[0].notes.find("as F.scaled_dot_product_attention (1.60x alone)"), std::string::npos) << next[0].notes;
  EXPECT_NE(next[0].notes.find("(as its identical region, 1.10x alone)"), std::string::npos) << next[0].notes;
  // No offer holds the CUDA graph capture again.
  for (const auto& c : next) {
    for (const auto& p : c.parts) EXPECT_NE(p.recipe, "s2_cuda_graph_capture") << c.notes;
  }
}

// A part's "before" is the reference's measured time in the nodes it replaces (the capture's per-node profile).
TEST(VerifiedParts, APartCarriesTheTimeOfTheNodesItReplaces) {
  Step s = step("activations", knowledge::Space::S1, 20);
  hiera::testing::node_named(s.graph, "sigmoid").time_ms = 0.25;
  hiera::testing::node_named(s.graph, "mul").time_ms = 0.5;   // x * sigmoid(x): the silu rewrite's two nodes
  hiera::testing::node_named(s.graph, "x").time_ms = 4.0;     // an input the rewrite reads, does not replace
  const auto offers = propose_for(s);
  const propose::CandidatePart silu = single(offers, "x * sigmoid(x) of 'x' as F.silu").parts.front();
  EXPECT_EQ(silu.before_ms, 0.75);
  EXPECT_EQ(silu.forward_ms, 4.75);  // every timed node of the forward, the input's read too: its share's denominator
  // The erf GELU replaces none of the timed nodes: no time, not zero.
  EXPECT_FALSE(single(offers, "hand-written erf GELU of 'mul' as F.gelu").parts.front().before_ms);
}

}  // namespace
