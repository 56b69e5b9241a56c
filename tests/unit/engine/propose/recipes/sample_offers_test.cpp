// What the knowledge proposer offers for the fusion samples (their graphs in
// tests/fixtures/graphs/samples, captured at CPU sizes: the CUDA graph
// capture, limited to 16M elements per tensor, drops out at the H200 sizes),
// in order: a float32 2D convolution with an elementwise epilogue runs as the
// TF32 implicit-GEMM kernel with that epilogue in the first S3 candidate and
// channels_last (the epilogue on cuDNN's NHWC tensor) in the next; other
// convolutions run channels_last first. With
// HIERA_PRINT_OFFERS=1 the test prints every offer per sample and space.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "engine/propose/recipes/recipe_proposer.h"
#include "graph_fixtures.h"
#include "kernels/kernel_test_support.h"

namespace {

using namespace hiera::engine;
using namespace hiera::engine::propose::recipes;
using Texts = std::vector<std::string>;

std::vector<propose::Candidate> offers(const std::string& fixture, knowledge::Space space, int count = 9) {
  static std::map<std::string, graph::OpGraph> graphs;
  if (!graphs.count(fixture)) graphs[fixture] = hiera::testing::captured_graph(fixture);
  propose::ProposalRequest request;
  request.space = space;
  request.count = count;
  request.graph = &graphs[fixture];
  request.reference_source = hiera::testing::reference_source(fixture);
  RecipeProposer proposer(hiera::testing::source_knowledge());
  return proposer.propose(request, {});
}

TEST(KnowledgeProposerOnSamples, ConvolutionEpiloguesRunChannelsLastFirst) {
  // 3D, transposed and bfloat16 convolutions: cuDNN in channels_last, the epilogue on its NHWC tensor.
  for (const char* sample : {"13_conv3d_leakyrelu_bias_clamp_gelu", "21_convtranspose2d_bias_tanh",
                             "24_conv2d_bias_relu_scale_bf16"}) {
    const auto candidates = offers(std::string("samples/fusion_") + sample, knowledge::Space::S3);
    ASSERT_FALSE(candidates.empty()) << sample;
    const Texts& recipes = candidates[0].recipes;
    EXPECT_NE(std::find(recipes.begin(), recipes.end(), "s3_channels_last_conv_epilogue"), recipes.end()) << sample;
    EXPECT_NE(candidates[0].source.find(".contiguous(memory_format=torch.channels_last"), std::string::npos) << sample;
  }
  // Float32 2D convolutions: the TF32 implicit-GEMM kernel with the epilogue first, then (without the
  // risky rewrite) channels_last.
  for (const char* sample : {"02_conv2d_batchnorm_relu", "09_conv2d_bias_hardswish_clamp_mul", "12_conv2d_mish_mish"}) {
    const auto candidates = offers(std::string("samples/fusion_") + sample, knowledge::Space::S3);
    ASSERT_GE(candidates.size(), 2u) << sample;
    const Texts& first = candidates[0].recipes;
    EXPECT_NE(std::find(first.begin(), first.end(), "s3_tf32_implicit_gemm_conv"), first.end()) << sample;
    EXPECT_NE(candidates[0].source.find("_hiera_conv_input("), std::string::npos) << sample;
    const Texts& second = candidates[1].recipes;
    EXPECT_NE(std::find(second.begin(), second.end(), "s3_channels_last_conv_epilogue"), second.end()) << sample;
  }
}

TEST(KnowledgeProposerOnSamples, ExactOffersForTheConvEpilogueSample) {
  const auto candidates = offers("samples/fusion_09_conv2d_bias_hardswish_clamp_mul", knowledge::Space::S3);
  Texts notes;
  for (const auto& c : candidates) notes.push_back(c.notes);
  const std::string cudnn = "cuDNN benchmarks its algorithms for the 1 convolution(s)";
  const std::string graph = "the forward's 5 kernel launches captured in one CUDA graph and replayed";
  const std::string nhwc =
      "'conv' in channels_last without its bias, then bias + add + hardswish + clamp + mul fused into one elementwise "
      "kernel on channels_last memory (16-byte vector loads when aligned)";
  const std::string nchw = "add + hardswish + clamp + mul fused into one elementwise kernel (16-byte vector loads when aligned)";
  const std::string tc =
      "'conv' (4 -> 8 channels, 3x3) on TF32 tensor cores with add + hardswish + clamp + mul in its epilogue: the "
      "convolution's output never reaches memory (3xTF32 when cuDNN may not use TF32)";
  EXPECT_EQ(notes, (Texts{cudnn + "; " + graph + "; " + tc, cudnn + "; " + nhwc, tc, cudnn + "; " + graph + "; " + nhwc,
                          nhwc, nchw, cudnn, graph}));
}

TEST(KnowledgeProposerOnSamples, MaskedSoftmaxIsOneRowKernelPerSoftmax) {
  const auto candidates = offers("masked_softmax", knowledge::Space::S3);
  ASSERT_GE(candidates.size(), 2u);
  // The rows of 24 held in registers first; the streaming kernels are an offer of their own.
  EXPECT_EQ(candidates[1].notes,
            "mul + masked_fill + softmax: softmax over the last dimension fused into one kernel (rows of 24 held in "
            "registers, one warp per row); div + where + softmax: softmax over the last dimension fused into one kernel "
            "(rows of 24 held in registers, one warp per row)");
  ASSERT_GE(candidates.size(), 3u);
  EXPECT_EQ(candidates[2].notes,
            "the forward's 6 kernel launches captured in one CUDA graph and replayed; mul + masked_fill + softmax: softmax "
            "over the last dimension fused into one kernel (one warp per segment); div + where + softmax: softmax over the "
            "last dimension fused into one kernel (one warp per segment)");
}

// rotate_half's cat((-x[..., h:], x[..., :h]), -1) is read from q and k in
// place: torch no longer builds the cat, the kernel reads q at i + h or i - h.
TEST(KnowledgeProposerOnSamples, RotaryEmbeddingReadsTheRotationInPlace) {
  const auto candidates = offers("samples/fusion_17_rotary_embedding", knowledge::Space::S3);
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates[1].notes,
            "mul + getitem + neg + getitem + cat + mul + add fused into one elementwise kernel (16-byte vector loads "
            "when aligned); mul + getitem + neg + getitem + cat + mul + add fused into one elementwise kernel (16-byte "
            "vector loads when aligned)");
  const std::string& source = candidates[1].source;
  const std::string forward = source.substr(source.find("class ModelNew"));
  EXPECT_EQ(forward.find("torch.cat("), std::string::npos) << forward;
  EXPECT_NE(forward.find("        assert q.shape[-1] == 16, \"the rotation of q was generated for rows of 16\"\n"),
            std::string::npos);
  EXPECT_NE(source.find("  const int c1 = i % 16;\n  const int at1 = c1 < 8 ? i + 8 : i - 8;\n"
                        "  const float g1 = static_cast<float>(a2[at1]);\n  const float t2 = c1 < 8 ? -g1 : g1;\n"),
            std::string::npos);
}

// HIERA_PRINT_OFFERS=1: the offers, for the lead's H200 runs; =source prints their sources too.
TEST(KnowledgeProposerOnSamples, PrintOffers) {
  if (!std::getenv("HIERA_PRINT_OFFERS")) GTEST_SKIP() << "set HIERA_PRINT_OFFERS=1 to print every sample's offers";
  for (const char* s : {"02_conv2d_batchnorm_relu", "03_conv2d_groupnorm_swish_scale", "06_scale_mask_softmax",
                        "08_conv2d_min_tanh_tanh", "09_conv2d_bias_hardswish_clamp_mul", "11_conv2d_instancenorm_divide",
                        "12_conv2d_mish_mish", "13_conv3d_leakyrelu_bias_clamp_gelu", "14_residual_add_layernorm",
                        "20_conv2d_avgpool_sigmoid_sum", "21_convtranspose2d_bias_tanh", "24_conv2d_bias_relu_scale_bf16",
                        "25_swish_scale_clamp_bias_bf16", "26_linear_log_softmax", "27_conv3d_maxpool_logsumexp_relu"}) {
    for (auto space : {knowledge::Space::S1, knowledge::Space::S2, knowledge::Space::S3}) {
      int k = 0;
      for (const auto& c : offers(std::string("samples/fusion_") + s, space)) {
        std::cout << s << " " << knowledge::to_string(space) << " #" << ++k << ": "
                  << (c.rejected ? "REJECTED " + *c.rejected : c.notes) << "\n";
        if (std::string(std::getenv("HIERA_PRINT_OFFERS")) == "source") std::cout << c.source << "\n";
      }
    }
  }
}

}  // namespace
