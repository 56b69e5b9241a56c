#include "engine/propose/llm/wire_format.h"

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;

int effective_max_tokens(const LlmEndpoint& endpoint, const ChatRequest& request) {
  return request.max_tokens.value_or(endpoint.max_tokens);
}

const json& field(const json& object, const char* name, const char* path) {
  if (!object.is_object() || !object.contains(name)) throw MalformedReply(std::string("missing ") + path);
  return object.at(name);
}

std::int64_t token_count(const json& usage, const char* name) {
  if (!usage.is_object() || !usage.contains(name) || usage.at(name).is_null()) return 0;
  const json& value = usage.at(name);
  if (!value.is_number_integer()) throw MalformedReply(std::string("usage.") + name + " is not an integer");
  return value.get<std::int64_t>();
}

std::string optional_string(const json& object, const char* name, const char* path) {
  if (!object.contains(name) || object.at(name).is_null()) return "";
  const json& value = object.at(name);
  if (!value.is_string()) throw MalformedReply(std::string(path) + " is not a string");
  return value.get<std::string>();
}

WireReply parse_openai(const json& body) {
  const json& choices = field(body, "choices", "choices");
  if (!choices.is_array() || choices.empty()) throw MalformedReply("choices is not a non-empty array");
  const json& choice = choices.at(0);
  const json& message = field(choice, "message", "choices[0].message");
  const json& content = field(message, "content", "choices[0].message.content");
  WireReply reply;
  if (content.is_string()) {
    reply.text = content.get<std::string>();
  } else if (!content.is_null()) {
    throw MalformedReply("choices[0].message.content is not a string");
  }
  reply.finish = optional_string(choice, "finish_reason", "choices[0].finish_reason");
  if (body.contains("usage")) {
    reply.usage.prompt_tokens = token_count(body.at("usage"), "prompt_tokens");
    reply.usage.completion_tokens = token_count(body.at("usage"), "completion_tokens");
  }
  return reply;
}

WireReply parse_anthropic(const json& body) {
  const json& content = field(body, "content", "content");
  if (!content.is_array()) throw MalformedReply("content is not an array");
  WireReply reply;
  for (const json& block : content) {
    if (!block.is_object() || !block.contains("type") || !block.at("type").is_string()) {
      throw MalformedReply("content block without a type");
    }
    if (block.at("type").get<std::string>() != "text") continue;
    const json& text = field(block, "text", "content[].text");
    if (!text.is_string()) throw MalformedReply("content[].text is not a string");
    reply.text += text.get<std::string>();
  }
  reply.finish = optional_string(body, "stop_reason", "stop_reason");
  if (body.contains("usage")) {
    reply.usage.prompt_tokens = token_count(body.at("usage"), "input_tokens");
    reply.usage.completion_tokens = token_count(body.at("usage"), "output_tokens");
  }
  return reply;
}

}  // namespace

std::string normalized_base_url(std::string_view base_url) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string request_url(const LlmEndpoint& endpoint) {
  const std::string base = normalized_base_url(endpoint.base_url);
  return base + (endpoint.provider == Provider::OpenAI ? "/v1/chat/completions" : "/v1/messages");
}

std::vector<std::string> request_headers(Provider provider, const std::string& api_key) {
  std::vector<std::string> headers{"Content-Type: application/json", "Accept: application/json"};
  if (provider == Provider::OpenAI) {
    if (!api_key.empty()) headers.push_back("Authorization: Bearer " + api_key);
  } else {
    if (!api_key.empty()) headers.push_back("x-api-key: " + api_key);
    headers.push_back("anthropic-version: 2023-06-01");
  }
  return headers;
}

json request_body(const LlmEndpoint& endpoint, const ChatRequest& request) {
  json body;
  body["model"] = endpoint.model;
  body["max_tokens"] = effective_max_tokens(endpoint, request);
  body["temperature"] = endpoint.temperature;
  json messages = json::array();
  if (endpoint.provider == Provider::OpenAI) {
    if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
    body["stream"] = false;
  } else if (!request.system.empty()) {
    body["system"] = request.system;
  }
  messages.push_back({{"role", "user"}, {"content", request.user}});
  body["messages"] = std::move(messages);
  return body;
}

WireReply parse_reply(Provider provider, std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw MalformedReply("the body is not JSON");
  if (!parsed.is_object()) throw MalformedReply("the body is not a JSON object");
  return provider == Provider::OpenAI ? parse_openai(parsed) : parse_anthropic(parsed);
}

std::string provider_error_message(std::string_view body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("error")) return "";
  const json& error = parsed.at("error");
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && error.contains("message") && error.at("message").is_string()) {
    return error.at("message").get<std::string>();
  }
  return "";
}

}  // namespace hiera::engine::propose::llm
