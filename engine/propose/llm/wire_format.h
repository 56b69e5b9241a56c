#pragma once
// The two providers' wire formats: the URL, headers and JSON body of a chat
// request, and the reading of a reply body. No I/O here, so both are tested
// as plain functions.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/propose/llm/chat.h"
#include "engine/propose/llm/endpoint.h"

namespace hiera::engine::propose::llm {

// base_url without a trailing "/" or "/v1": "http://h:8000/v1/" -> "http://h:8000".
std::string normalized_base_url(std::string_view base_url);

// {base}/v1/chat/completions (OpenAI) or {base}/v1/messages (Anthropic).
std::string request_url(const LlmEndpoint& endpoint);

// "Name: value" lines; the key goes in Authorization: Bearer (OpenAI) or
// x-api-key (Anthropic), and is left out when empty.
std::vector<std::string> request_headers(Provider provider, const std::string& api_key);

// OpenAI: {model, messages: [{role: system}?, {role: user}], max_tokens, temperature, stream: false}.
// Anthropic: {model, system?, messages: [{role: user}], max_tokens, temperature}.
nlohmann::json request_body(const LlmEndpoint& endpoint, const ChatRequest& request);

struct WireReply {
  std::string text;
  std::string finish;
  Usage usage;
};

// A 2xx body that is not the documented JSON, or lacks the reply's fields.
class MalformedReply : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// OpenAI: choices[0].message.content (null reads as ""), choices[0].finish_reason,
// usage.{prompt,completion}_tokens. Anthropic: the "text" content blocks joined
// (other blocks, such as "thinking", skipped), stop_reason, usage.{input,output}_tokens.
// A missing usage reads as zero; local servers often leave it out.
WireReply parse_reply(Provider provider, std::string_view body);

// The provider's own explanation in an error body ({"error": {"message": ...}}
// for both providers, or {"error": "..."}), or empty when there is none.
std::string provider_error_message(std::string_view body);

}  // namespace hiera::engine::propose::llm
