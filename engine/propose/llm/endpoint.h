#pragma once
// One configured LLM endpoint (an OpenAI-compatible or Anthropic server) and
// its parsing from JSON configuration. The API key is never part of it: only
// the name of the environment variable that holds it.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hiera::engine::propose::llm {

enum class Provider {
  OpenAI,     // POST {base_url}/v1/chat/completions: OpenAI, vLLM, llama.cpp, Ollama, SGLang
  Anthropic,  // POST {base_url}/v1/messages
};

std::string_view to_string(Provider provider);  // "openai" | "anthropic"

struct LlmEndpoint {
  std::string name;
  Provider provider = Provider::OpenAI;
  std::string base_url;     // http(s)://host[:port][/prefix], with or without a trailing /v1
  std::string model;
  std::string api_key_env;  // the variable holding the key, read at request time; empty: no key
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  // per HTTP request
  int max_retries = 4;     // retries after the first request, on 429, 5xx and network errors
  int max_concurrent = 4;  // requests in flight at once through one client
  int max_tokens = 8192;
  double temperature = 0.2;
  std::optional<std::filesystem::path> cache_dir;  // replies cached on disk when set
  std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};
  std::size_t max_reply_bytes = std::size_t{1} << 20;
};

// A configuration error; the message names the endpoint and the field and never
// repeats a configured value (one of them could be a misplaced key).
class EndpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// From {"name", "provider": "openai"|"anthropic", "base_url", "model",
// "api_key_env", "timeout_ms", "max_retries", "max_concurrent", "max_tokens",
// "temperature", "cache_dir", "max_backoff_ms", "max_reply_bytes"}; the first
// four are required. Unknown fields are errors (a typo must not be ignored).
LlmEndpoint parse_endpoint(const nlohmann::json& config);

// Throws EndpointError when a field is out of range; parse_endpoint calls it.
void validate(const LlmEndpoint& endpoint);

}  // namespace hiera::engine::propose::llm
