// Every rule for taking code out of an LLM reply.
#include "engine/propose/llm/code_extraction.h"

#include <gtest/gtest.h>

namespace hiera::engine::propose::llm {
namespace {

constexpr const char* kModule = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";
constexpr const char* kKernel = "__global__ void k(float* x) { x[0] = 1; }\n";

std::string fenced(std::string_view tag, std::string_view code, std::string_view fence = "```") {
  return std::string(fence) + std::string(tag) + "\n" + std::string(code) + std::string(fence) + "\n";
}

RejectReason reason(const ExtractionResult& result) {
  EXPECT_FALSE(result.ok());
  return result.rejection ? result.rejection->reason : RejectReason::Empty;
}

TEST(LlmCodeExtractionTest, OnePythonBlock) {
  const auto result = extract_code("Here it is:\n" + fenced("python", kModule) + "Done.", "stop", Language::Python);
  ASSERT_TRUE(result.ok()) << result.rejection->message;
  EXPECT_EQ(result.code, kModule);
}

TEST(LlmCodeExtractionTest, OneCudaBlock) {
  const auto result = extract_code(fenced("cuda", kKernel), "end_turn", Language::Cuda);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, kKernel);
}

TEST(LlmCodeExtractionTest, EmptyReply) {
  for (const char* reply : {"", "  \n\t\r\n"}) {
    const auto result = extract_code(reply, "stop", Language::Python);
    EXPECT_EQ(reason(result), RejectReason::Empty);
    EXPECT_EQ(result.rejection->message, "the reply is empty");
  }
}

TEST(LlmCodeExtractionTest, TruncatedByFinishReason) {
  const auto openai = extract_code(fenced("python", kModule), "length", Language::Python);
  EXPECT_EQ(reason(openai), RejectReason::Truncated);
  EXPECT_EQ(openai.rejection->message, "the reply was cut off at the token limit (finish \"length\")");
  const auto anthropic = extract_code(fenced("python", kModule), "max_tokens", Language::Python);
  EXPECT_EQ(reason(anthropic), RejectReason::Truncated);
  EXPECT_EQ(anthropic.rejection->message, "the reply was cut off at the token limit (finish \"max_tokens\")");
}

TEST(LlmCodeExtractionTest, TruncatedByAnUnclosedFence) {
  const auto result =
      extract_code("Intro\n\n```python\nclass ModelNew(nn.Module):\n    def forward(self", "stop", Language::Python);
  EXPECT_EQ(reason(result), RejectReason::Truncated);
  EXPECT_EQ(result.rejection->message, "the code block opened on line 3 is never closed");
}

TEST(LlmCodeExtractionTest, NoFencedBlock) {
  const auto result = extract_code("class ModelNew(nn.Module):\n    pass\n", "stop", Language::Python);
  EXPECT_EQ(reason(result), RejectReason::NoCodeBlock);
  EXPECT_EQ(result.rejection->message, "the reply has no fenced code block");
}

TEST(LlmCodeExtractionTest, InlineTripleBackticksAreNotAFence) {
  const auto result = extract_code("Use ```x``` here", "stop", Language::Python);
  EXPECT_EQ(reason(result), RejectReason::NoCodeBlock);
}

TEST(LlmCodeExtractionTest, WrongKindOfBlock) {
  const auto python = extract_code(fenced("python", "class Model(nn.Module):\n    pass\n"), "stop", Language::Python);
  EXPECT_EQ(reason(python), RejectReason::WrongKind);
  EXPECT_EQ(python.rejection->message, "no code block is Python code that defines `class ModelNew` (1 block read)");
  const auto cuda = extract_code(fenced("cuda", "__device__ int f();\n") + fenced("", "x\n"), "stop", Language::Cuda);
  EXPECT_EQ(reason(cuda), RejectReason::WrongKind);
  EXPECT_EQ(cuda.rejection->message, "no code block is CUDA code that contains a `__global__` kernel (2 blocks read)");
}

TEST(LlmCodeExtractionTest, RulesNeedWholeWords) {
  EXPECT_EQ(reason(extract_code(fenced("python", "class ModelNewer:\n    pass\n"), "stop", Language::Python)),
            RejectReason::WrongKind);
  EXPECT_EQ(reason(extract_code(fenced("python", "# see class ModelNew below\n"), "stop", Language::Python)),
            RejectReason::WrongKind);
  EXPECT_EQ(reason(extract_code(fenced("cuda", "void my__global__x();\n"), "stop", Language::Cuda)),
            RejectReason::WrongKind);
  EXPECT_TRUE(extract_code(fenced("python", "if True:\n    class ModelNew:\n        pass\n"), "stop", Language::Python)
                  .ok());
}

TEST(LlmCodeExtractionTest, TooLarge) {
  const std::string big = std::string(kModule) + std::string(300, '#') + "\n";
  const auto result = extract_code(fenced("python", big), "stop", Language::Python, 100);
  EXPECT_EQ(reason(result), RejectReason::TooLarge);
  EXPECT_EQ(result.rejection->message, "the code block is " + std::to_string(big.size()) + " bytes, over the limit of 100");
  EXPECT_TRUE(extract_code(fenced("python", big), "stop", Language::Python, big.size()).ok());
}

TEST(LlmCodeExtractionTest, PrefersTheBlockTaggedWithTheLanguage) {
  const std::string untagged_longer = std::string(kModule) + "# a longer untagged block\n";
  const std::string reply = fenced("", untagged_longer) + fenced("py", kModule);
  const auto result = extract_code(reply, "stop", Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, kModule);
}

TEST(LlmCodeExtractionTest, EveryLanguageTagCounts) {
  for (const char* tag : {"python", "py", "Python3"}) {
    const auto result = extract_code(fenced("", std::string(kModule) + "# longer\n") + fenced(tag, kModule), "stop",
                                     Language::Python);
    EXPECT_EQ(result.code, kModule) << tag;
  }
  for (const char* tag : {"cuda", "cpp", "c++", "cu", "CUDA", "c"}) {
    const auto result =
        extract_code(fenced("", std::string(kKernel) + "// longer\n") + fenced(tag, kKernel), "stop", Language::Cuda);
    EXPECT_EQ(result.code, kKernel) << tag;
  }
}

TEST(LlmCodeExtractionTest, OnlyBlocksSatisfyingTheRuleAreCandidates) {
  // The tagged block fails the rule; the untagged one that passes wins.
  const std::string reply = fenced("python", "import torch\n# sketch only\n") + fenced("", kModule);
  const auto result = extract_code(reply, "stop", Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, kModule);
}

TEST(LlmCodeExtractionTest, LongestAmongEquallyTaggedBlocks) {
  const std::string longer = std::string(kKernel) + "__global__ void k2() {}\n";
  const auto result = extract_code(fenced("cuda", kKernel) + fenced("cuda", longer) + fenced("cuda", kKernel), "stop",
                                   Language::Cuda);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, longer);
  // On a tie the first wins.
  const auto tie = extract_code(fenced("", "__global__ void a() {}\n") + fenced("", "__global__ void b() {}\n"), "stop",
                                Language::Cuda);
  EXPECT_EQ(tie.code, "__global__ void a() {}\n");
}

TEST(LlmCodeExtractionTest, TildeFences) {
  const auto result = extract_code(fenced("python", kModule, "~~~"), "stop", Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, kModule);
}

TEST(LlmCodeExtractionTest, AFenceClosesOnlyWithItsOwnKindAndLength) {
  // ``` inside a ~~~~ block, and a shorter ~~~ run, are content.
  const std::string code = std::string(kModule) + "```\n~~~\n";
  const auto result = extract_code("~~~~python\n" + code + "~~~~~\n", "stop", Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, code);
}

TEST(LlmCodeExtractionTest, IndentedFencesUpToThreeSpaces) {
  const auto result = extract_code("1. The code:\n   ```python\nclass ModelNew:\n    pass\n   ```\n", "stop",
                                   Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, "class ModelNew:\n    pass\n");
  // Four spaces make an indented code line, not a fence.
  EXPECT_EQ(reason(extract_code("    ```python\nclass ModelNew:\n    ```\n", "stop", Language::Python)),
            RejectReason::NoCodeBlock);
}

TEST(LlmCodeExtractionTest, CrlfLineEnds) {
  const auto result = extract_code("Text\r\n```python\r\nimport torch\r\nclass ModelNew:\r\n    pass\r\n```\r\n", "stop",
                                   Language::Python);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, "import torch\nclass ModelNew:\n    pass\n");
}

TEST(LlmCodeExtractionTest, LastFenceWithoutNewline) {
  const auto result = extract_code("```cuda\n__global__ void k() {}\n```", "stop", Language::Cuda);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.code, "__global__ void k() {}\n");
}

TEST(LlmCodeExtractionTest, ReasonNames) {
  EXPECT_EQ(to_string(RejectReason::Empty), "empty");
  EXPECT_EQ(to_string(RejectReason::Truncated), "truncated");
  EXPECT_EQ(to_string(RejectReason::NoCodeBlock), "no_code_block");
  EXPECT_EQ(to_string(RejectReason::WrongKind), "wrong_kind");
  EXPECT_EQ(to_string(RejectReason::TooLarge), "too_large");
}

}  // namespace
}  // namespace hiera::engine::propose::llm
