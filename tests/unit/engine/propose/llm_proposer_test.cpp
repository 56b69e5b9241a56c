// The LLM proposer over real HTTP (libcurl to a loopback server with scripted
// replies standing in for a model): good replies become candidates, bad ones
// rejected candidates with their reason, and the loop never sees an exception.
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "engine/propose/llm_proposer.h"
#include "http_test_server.h"

namespace {

using namespace hiera::engine;
using hiera::testing::HttpTestServer;
using nlohmann::json;

std::string chat_reply(const std::string& content, const std::string& finish = "stop") {
  return json{{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", finish}}}},
              {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 7}}}}
      .dump();
}

knowledge::KnowledgeBase knowledge_with_prompt() {
  knowledge::KnowledgeBase kb;
  kb.prompts.push_back({"propose", "system for {{language}}", "optimize {{task_name}}\n{{failures}}"});
  return kb;
}

std::shared_ptr<propose::llm::LlmClient> client_for(const std::string& base_url) {
  propose::llm::LlmEndpoint endpoint;
  endpoint.name = "test";
  endpoint.base_url = base_url;
  endpoint.model = "m";
  endpoint.max_retries = 0;
  propose::llm::LlmClientOptions options;
  options.log = [](std::string_view) {};
  return std::make_shared<propose::llm::LlmClient>(endpoint, options);
}

TEST(LlmProposer, TurnsRepliesIntoCandidatesAndRejections) {
  HttpTestServer server;
  server.enqueue_json(200, chat_reply("Here:\n```python\nclass ModelNew:\n    pass\n```\n"));
  const auto kb = knowledge_with_prompt();
  propose::LlmProposer proposer(client_for(server.base_url()), kb);
  EXPECT_EQ(proposer.name(), "llm:test");

  propose::ProposalRequest request;
  request.task_name = "m.py::Model";
  request.space = knowledge::Space::S1;
  request.region = "module";
  const auto good = proposer.propose(request, {});
  ASSERT_EQ(good.size(), 1u);
  EXPECT_FALSE(good[0].rejected.has_value());
  EXPECT_EQ(good[0].source, "class ModelNew:\n    pass\n");
  EXPECT_EQ(good[0].proposer, "llm:test");
  EXPECT_EQ(good[0].region, "module");
  EXPECT_EQ(good[0].usage.prompt_tokens, 11);
  EXPECT_EQ(good[0].usage.completion_tokens, 7);
  const json sent = json::parse(server.requests().at(0).body);
  EXPECT_EQ(sent["messages"][0]["content"], "system for Python (a PyTorch module in KernelBench format)");
  EXPECT_EQ(sent["messages"][1]["content"], "optimize m.py::Model\n(none yet)\n");

  server.enqueue_json(200, chat_reply("I would batch the rows, but I am not sure how."));
  const auto none = proposer.propose(request, {});
  ASSERT_EQ(none.size(), 1u);
  ASSERT_TRUE(none[0].rejected.has_value());
  EXPECT_EQ(none[0].rejected->rfind("the reply holds no usable code (no_code_block): ", 0), 0u) << *none[0].rejected;

  server.enqueue_json(200, chat_reply("```python\nclass ModelNew:\n", "length"));
  const auto cut = proposer.propose(request, {});
  ASSERT_TRUE(cut.at(0).rejected.has_value());
  EXPECT_EQ(cut[0].rejected->rfind("the reply holds no usable code (truncated): ", 0), 0u) << *cut[0].rejected;

  server.enqueue_json(500, "{\"error\": \"overloaded\"}");
  const auto failed = proposer.propose(request, {});
  ASSERT_TRUE(failed.at(0).rejected.has_value());
  EXPECT_EQ(failed[0].rejected->rfind("the LLM request failed (http_status): ", 0), 0u) << *failed[0].rejected;
}

TEST(LlmProposer, ADeadEndpointIsARejectedCandidateNotAnError) {
  const auto kb = knowledge_with_prompt();
  propose::LlmProposer proposer(client_for("http://127.0.0.1:" + std::to_string(hiera::testing::closed_port())), kb);
  propose::ProposalRequest request;
  request.count = 2;
  const auto candidates = proposer.propose(request, {});
  ASSERT_EQ(candidates.size(), 2u);
  for (const auto& c : candidates) {
    ASSERT_TRUE(c.rejected.has_value());
    EXPECT_EQ(c.rejected->rfind("the LLM request failed (network): ", 0), 0u) << *c.rejected;
  }
}

TEST(LlmProposer, CudaCandidatesNameTheirKernel) {
  HttpTestServer server;
  server.enqueue_json(200, chat_reply("```cuda\n// hiera: launch grid=(N+255)/256 block=256\n"
                                      "extern \"C\" __global__ void __launch_bounds__(256) saxpy_fast(float* y) {}\n```\n"));
  const auto kb = knowledge_with_prompt();
  propose::LlmProposer proposer(client_for(server.base_url()), kb);
  propose::ProposalRequest request;
  request.language = propose::Language::Cuda;
  const auto candidates = proposer.propose(request, {});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].kernel, "saxpy_fast");
  EXPECT_EQ(propose::first_kernel_name("__global__ void k(int* a) {}"), "k");
  EXPECT_EQ(propose::first_kernel_name("void host() {}"), "");
}

TEST(LlmProposer, AKnowledgeBaseWithoutThePromptIsRefusedAtConstruction) {
  knowledge::KnowledgeBase empty;
  EXPECT_THROW(propose::LlmProposer(client_for("http://127.0.0.1:1"), empty), std::invalid_argument);
}

}  // namespace
