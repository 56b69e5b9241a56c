// The OpenAI and Anthropic wire formats as plain functions: URLs, headers,
// request bodies, and reading replies (well-formed and not).
#include "engine/propose/llm/wire_format.h"

#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;

LlmEndpoint endpoint(Provider provider, std::string base_url) {
  LlmEndpoint result;
  result.name = "e";
  result.provider = provider;
  result.base_url = std::move(base_url);
  result.model = "m1";
  result.max_tokens = 100;
  result.temperature = 0.5;
  return result;
}

std::string malformed(Provider provider, std::string_view body) {
  return hiera::testing::thrown_message<MalformedReply>([&] { parse_reply(provider, body); }, "(parsed)");
}

TEST(LlmWireFormatTest, BaseUrlWithOrWithoutV1) {
  EXPECT_EQ(normalized_base_url("http://h:8000"), "http://h:8000");
  EXPECT_EQ(normalized_base_url("http://h:8000/"), "http://h:8000");
  EXPECT_EQ(normalized_base_url("http://h:8000/v1"), "http://h:8000");
  EXPECT_EQ(normalized_base_url("http://h:8000/v1/"), "http://h:8000");
  EXPECT_EQ(normalized_base_url("http://h/api/v1"), "http://h/api");
  EXPECT_EQ(normalized_base_url("http://h/v10"), "http://h/v10");
  EXPECT_EQ(request_url(endpoint(Provider::OpenAI, "https://api.openai.com/v1")),
            "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(request_url(endpoint(Provider::Anthropic, "https://api.anthropic.com")),
            "https://api.anthropic.com/v1/messages");
}

TEST(LlmWireFormatTest, Headers) {
  EXPECT_EQ(request_headers(Provider::OpenAI, "k1"),
            (std::vector<std::string>{"Content-Type: application/json", "Accept: application/json",
                                      "Authorization: Bearer k1"}));
  EXPECT_EQ(request_headers(Provider::OpenAI, ""),
            (std::vector<std::string>{"Content-Type: application/json", "Accept: application/json"}));
  EXPECT_EQ(request_headers(Provider::Anthropic, "k2"),
            (std::vector<std::string>{"Content-Type: application/json", "Accept: application/json",
                                      "x-api-key: k2", "anthropic-version: 2023-06-01"}));
}

TEST(LlmWireFormatTest, OpenAIBody) {
  const json body = request_body(endpoint(Provider::OpenAI, "http://h"), ChatRequest{"sys", "usr", std::nullopt});
  EXPECT_EQ(body, json::parse(R"({"model": "m1", "max_tokens": 100, "temperature": 0.5, "stream": false,
      "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "usr"}]})"));
  const json no_system = request_body(endpoint(Provider::OpenAI, "http://h"), ChatRequest{"", "usr", 7});
  EXPECT_EQ(no_system, json::parse(R"({"model": "m1", "max_tokens": 7, "temperature": 0.5, "stream": false,
      "messages": [{"role": "user", "content": "usr"}]})"));
}

TEST(LlmWireFormatTest, AnthropicBody) {
  const json body = request_body(endpoint(Provider::Anthropic, "http://h"), ChatRequest{"sys", "usr", 9});
  EXPECT_EQ(body, json::parse(R"({"model": "m1", "max_tokens": 9, "temperature": 0.5, "system": "sys",
      "messages": [{"role": "user", "content": "usr"}]})"));
  const json no_system = request_body(endpoint(Provider::Anthropic, "http://h"), ChatRequest{"", "usr", {}});
  EXPECT_FALSE(no_system.contains("system"));
}

TEST(LlmWireFormatTest, OpenAIReply) {
  const WireReply reply = parse_reply(Provider::OpenAI, R"({"id": "x", "choices": [{"index": 0,
      "message": {"role": "assistant", "content": "hello"}, "finish_reason": "length"}],
      "usage": {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}})");
  EXPECT_EQ(reply.text, "hello");
  EXPECT_EQ(reply.finish, "length");
  EXPECT_EQ(reply.usage, (Usage{12, 34}));
}

TEST(LlmWireFormatTest, OpenAIReplyWithNullContentAndNoUsage) {
  const WireReply reply =
      parse_reply(Provider::OpenAI, R"({"choices": [{"message": {"content": null}, "finish_reason": null}]})");
  EXPECT_EQ(reply.text, "");
  EXPECT_EQ(reply.finish, "");
  EXPECT_EQ(reply.usage, (Usage{0, 0}));
}

TEST(LlmWireFormatTest, AnthropicReplyJoinsTextBlocks) {
  const WireReply reply = parse_reply(Provider::Anthropic, R"({"type": "message", "content": [
      {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "part one, "},
      {"type": "text", "text": "part two"}], "stop_reason": "end_turn",
      "usage": {"input_tokens": 5, "output_tokens": 6}})");
  EXPECT_EQ(reply.text, "part one, part two");
  EXPECT_EQ(reply.finish, "end_turn");
  EXPECT_EQ(reply.usage, (Usage{5, 6}));
}

TEST(LlmWireFormatTest, MalformedReplies) {
  EXPECT_EQ(malformed(Provider::OpenAI, "<html>"), "the body is not JSON");
  EXPECT_EQ(malformed(Provider::OpenAI, "[1]"), "the body is not a JSON object");
  EXPECT_EQ(malformed(Provider::OpenAI, "{}"), "missing choices");
  EXPECT_EQ(malformed(Provider::OpenAI, R"({"choices": []})"), "choices is not a non-empty array");
  EXPECT_EQ(malformed(Provider::OpenAI, R"({"choices": [{}]})"), "missing choices[0].message");
  EXPECT_EQ(malformed(Provider::OpenAI, R"({"choices": [{"message": {}}]})"), "missing choices[0].message.content");
  EXPECT_EQ(malformed(Provider::OpenAI, R"({"choices": [{"message": {"content": 3}}]})"),
            "choices[0].message.content is not a string");
  EXPECT_EQ(malformed(Provider::OpenAI, R"({"choices": [{"message": {"content": ""}}], "usage": {"prompt_tokens": "1"}})"),
            "usage.prompt_tokens is not an integer");
  EXPECT_EQ(malformed(Provider::Anthropic, R"({"content": "hi"})"), "content is not an array");
  EXPECT_EQ(malformed(Provider::Anthropic, R"({"content": [{"text": "hi"}]})"), "content block without a type");
  EXPECT_EQ(malformed(Provider::Anthropic, R"({"content": [{"type": "text"}]})"), "missing content[].text");
  EXPECT_EQ(malformed(Provider::Anthropic, R"({"stop_reason": "end_turn"})"), "missing content");
}

TEST(LlmWireFormatTest, ProviderErrorMessage) {
  EXPECT_EQ(provider_error_message(R"({"error": {"message": "bad key", "type": "auth"}})"), "bad key");
  EXPECT_EQ(provider_error_message(R"({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})"),
            "busy");
  EXPECT_EQ(provider_error_message(R"({"error": "model not found"})"), "model not found");
  EXPECT_EQ(provider_error_message("Bad Gateway"), "");
  EXPECT_EQ(provider_error_message(R"({"detail": "x"})"), "");
}

}  // namespace
}  // namespace hiera::engine::propose::llm
