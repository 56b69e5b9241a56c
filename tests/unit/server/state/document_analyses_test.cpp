#include "server/state/document_analyses.h"

#include <gtest/gtest.h>

#include <thread>

namespace hiera::server {
namespace {

namespace analysis = engine::analysis;

const std::string kTwoKernels =
    "// hiera: size N=1024\n"
    "// hiera: flops=N bytes=8*N\n"
    "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n"
    "__global__ void shift(float* x) { x[threadIdx.x] += 1.0f; }\n";

TEST(DocumentAnalyses, TheSameVersionIsAnalysedOnce) {
  DocumentAnalyses analyses;
  const TextDocument document("file:///k.cu", "cuda", 1, kTwoKernels);
  const auto first = analyses.of(document);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->uri, "file:///k.cu");
  EXPECT_EQ(first->version, 1);
  EXPECT_EQ(first->analysis.language, analysis::Language::Cuda);
  ASSERT_EQ(first->analysis.functions.size(), 2u);
  EXPECT_EQ(analyses.of(document), first);
  EXPECT_EQ(analyses.size(), 1u);
}

TEST(DocumentAnalyses, AnnotationsGiveTheKernelItsWork) {
  DocumentAnalyses analyses;
  const auto result = analyses.of(TextDocument("file:///k.cu", "cuda", 1, kTwoKernels));
  ASSERT_TRUE(result->analysis.functions[0].work);
  EXPECT_EQ(result->analysis.functions[0].work->flops, 1024);
  EXPECT_EQ(result->analysis.functions[0].work->bytes, 8192);
  EXPECT_FALSE(result->analysis.functions[1].work);  // annotations belong to the kernel after them
}

TEST(DocumentAnalyses, ANewVersionIsIncrementalAndEqualsAFreshAnalysis) {
  DocumentAnalyses analyses;
  analyses.of(TextDocument("file:///k.cu", "cuda", 1, kTwoKernels));
  std::string edited = kTwoKernels;
  edited.replace(edited.find("+= 1.0f"), 7, "+= 3.0f");
  const auto second = analyses.of(TextDocument("file:///k.cu", "cuda", 2, edited));
  EXPECT_EQ(second->version, 2);
  EXPECT_EQ(second->analysis.items, 2u);
  EXPECT_EQ(second->analysis.reused, 1u);  // scale is kept, shift analysed again

  DocumentAnalyses fresh;
  const auto expected = fresh.of(TextDocument("file:///k.cu", "cuda", 2, edited));
  EXPECT_EQ(expected->analysis.reused, 0u);
  EXPECT_EQ(second->analysis.functions, expected->analysis.functions);
  EXPECT_EQ(second->analysis.launches, expected->analysis.launches);
  EXPECT_EQ(second->analysis.hints, expected->analysis.hints);
}

TEST(DocumentAnalyses, TheLanguageComesFromTheIdElseTheExtension) {
  DocumentAnalyses analyses;
  EXPECT_EQ(analyses.of(TextDocument("file:///m.py", "python", 1, "import torch\n"))->analysis.language,
            analysis::Language::Python);
  EXPECT_EQ(analyses.of(TextDocument("file:///k.cu", "cpp", 1, "__global__ void k() {}\n"))->analysis.language,
            analysis::Language::Cuda);
  EXPECT_EQ(analyses.of(TextDocument("file:///notes.txt", "plaintext", 1, "__global__ void k() {}\n")), nullptr);
  EXPECT_EQ(analyses.of(TextDocument("file:///host.cpp", "cpp", 1, "int main() {}\n")), nullptr);
}

TEST(DocumentAnalyses, RetainForgetsClosedDocuments) {
  DocumentAnalyses analyses;
  analyses.of(TextDocument("file:///a.cu", "cuda", 1, "__global__ void a() {}\n"));
  analyses.of(TextDocument("file:///b.cu", "cuda", 1, "__global__ void b() {}\n"));
  analyses.retain({"file:///b.cu", "file:///c.cu"});
  EXPECT_EQ(analyses.size(), 1u);
  analyses.retain({});
  EXPECT_EQ(analyses.size(), 0u);
}

TEST(DocumentAnalyses, AReopenedDocumentWithTheSameVersionButNewTextIsAnalysedAgain) {
  DocumentAnalyses analyses;
  const auto first = analyses.of(TextDocument("file:///a.cu", "cuda", 1, "__global__ void a() {}\n"));
  const auto second = analyses.of(TextDocument("file:///a.cu", "cuda", 1, "__global__ void b() {}\n"));
  EXPECT_NE(first, second);
  EXPECT_EQ(second->analysis.functions.at(0).name, "b");
}

TEST(DocumentAnalyses, AnOlderSnapshotDoesNotReplaceANewerAnalysis) {
  DocumentAnalyses analyses;
  const TextDocument newer("file:///a.cu", "cuda", 5, "__global__ void newer() {}\n");
  const auto kept = analyses.of(newer);
  const auto old = analyses.of(TextDocument("file:///a.cu", "cuda", 4, "__global__ void older() {}\n"));
  EXPECT_EQ(old->analysis.functions.at(0).name, "older");  // the caller gets its own version
  EXPECT_EQ(analyses.of(newer), kept);                     // and the store keeps the newer one
}

TEST(DocumentAnalyses, ConcurrentReadersOfManyVersionsAgree) {
  DocumentAnalyses analyses;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&analyses, t] {
      for (int v = 1; v <= 20; ++v) {
        const std::string text = "__global__ void k" + std::to_string(v) + "(float* x) { x[0] = " + std::to_string(t) + "; }\n";
        const auto result = analyses.of(TextDocument("file:///a.cu", "cuda", v * 10 + t, text));
        ASSERT_EQ(result->analysis.functions.at(0).name, "k" + std::to_string(v));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto last = analyses.of(TextDocument("file:///a.cu", "cuda", 203, "__global__ void k20(float* x) { x[0] = 3; }\n"));
  EXPECT_EQ(analyses.of(TextDocument("file:///a.cu", "cuda", 203, "__global__ void k20(float* x) { x[0] = 3; }\n")), last);
}

}  // namespace
}  // namespace hiera::server
