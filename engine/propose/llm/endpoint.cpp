#include "engine/propose/llm/endpoint.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;

std::string where(std::string_view endpoint_name, std::string_view field) {
  std::string text = "LLM endpoint";
  if (!endpoint_name.empty()) text += " '" + std::string(endpoint_name) + "'";
  return text + ": field '" + std::string(field) + "'";
}

[[noreturn]] void fail(std::string_view endpoint_name, std::string_view field, std::string_view problem) {
  throw EndpointError(where(endpoint_name, field) + " " + std::string(problem));
}

std::string type_name(const json& value) { return value.type_name(); }

std::string get_string(const json& config, std::string_view name, const char* field) {
  const json& value = config.at(field);
  if (!value.is_string()) fail(name, field, "must be a string, got " + type_name(value));
  return value.get<std::string>();
}

std::int64_t get_integer(const json& config, std::string_view name, const char* field, std::int64_t min,
                         std::int64_t max) {
  const json& value = config.at(field);
  if (!value.is_number_integer()) fail(name, field, "must be an integer, got " + type_name(value));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    fail(name, field, "must be at most " + std::to_string(max));
  }
  const auto number = value.get<std::int64_t>();
  if (number < min) fail(name, field, "must be at least " + std::to_string(min));
  if (number > max) fail(name, field, "must be at most " + std::to_string(max));
  return number;
}

constexpr const char* kFields[] = {"name",        "provider",    "base_url",      "model",
                                   "api_key_env", "timeout_ms",  "max_retries",   "max_concurrent",
                                   "max_tokens",  "temperature", "cache_dir",     "max_backoff_ms",
                                   "max_reply_bytes"};

}  // namespace

std::string_view to_string(Provider provider) {
  switch (provider) {
    case Provider::OpenAI: return "openai";
    case Provider::Anthropic: return "anthropic";
  }
  return "unknown";
}

void validate(const LlmEndpoint& endpoint) {
  const std::string& name = endpoint.name;
  if (name.empty()) fail(name, "name", "must not be empty");
  static const std::regex kUrl(R"(https?://[^/\s?#]+(/[^\s?#]*)?)", std::regex::icase);
  if (!std::regex_match(endpoint.base_url, kUrl)) {
    fail(name, "base_url", "must be an http:// or https:// URL without query or fragment");
  }
  if (endpoint.model.empty()) fail(name, "model", "must not be empty");
  static const std::regex kVariable("[A-Za-z_][A-Za-z0-9_]*");
  if (!endpoint.api_key_env.empty() && !std::regex_match(endpoint.api_key_env, kVariable)) {
    // Not repeated: a key pasted here by mistake must not reach a log.
    fail(name, "api_key_env",
         "must name an environment variable (letters, digits, '_'), not hold the key itself");
  }
  if (endpoint.timeout.count() <= 0) fail(name, "timeout_ms", "must be at least 1");
  if (endpoint.max_retries < 0) fail(name, "max_retries", "must be at least 0");
  if (endpoint.max_concurrent < 1) fail(name, "max_concurrent", "must be at least 1");
  if (endpoint.max_tokens < 1) fail(name, "max_tokens", "must be at least 1");
  if (!std::isfinite(endpoint.temperature) || endpoint.temperature < 0.0 || endpoint.temperature > 2.0) {
    fail(name, "temperature", "must be a number from 0 to 2");
  }
  if (endpoint.cache_dir && endpoint.cache_dir->empty()) fail(name, "cache_dir", "must not be empty");
  if (endpoint.max_backoff.count() < 0) fail(name, "max_backoff_ms", "must be at least 0");
  if (endpoint.max_reply_bytes == 0) fail(name, "max_reply_bytes", "must be at least 1");
}

LlmEndpoint parse_endpoint(const json& config) {
  if (!config.is_object()) throw EndpointError("LLM endpoint: configuration must be a JSON object, got " + type_name(config));
  // The name first, so that every later error can say which endpoint it is about.
  std::string name;
  if (config.contains("name") && config.at("name").is_string()) name = config.at("name").get<std::string>();

  for (const auto& item : config.items()) {
    if (item.key() == "api_key") {
      fail(name, "api_key", "is not accepted: put the key in an environment variable and name it in 'api_key_env'");
    }
    if (std::find(std::begin(kFields), std::end(kFields), item.key()) == std::end(kFields)) {
      fail(name, item.key(), "is not a known endpoint field");
    }
  }
  for (const char* required : {"name", "provider", "base_url", "model"}) {
    if (!config.contains(required)) fail(name, required, "is required");
  }

  LlmEndpoint endpoint;
  endpoint.name = get_string(config, name, "name");
  const std::string provider = get_string(config, name, "provider");
  if (provider == "openai") {
    endpoint.provider = Provider::OpenAI;
  } else if (provider == "anthropic") {
    endpoint.provider = Provider::Anthropic;
  } else {
    fail(name, "provider", "must be \"openai\" or \"anthropic\"");
  }
  endpoint.base_url = get_string(config, name, "base_url");
  endpoint.model = get_string(config, name, "model");
  if (config.contains("api_key_env")) endpoint.api_key_env = get_string(config, name, "api_key_env");

  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (config.contains("timeout_ms")) {
    endpoint.timeout = std::chrono::milliseconds(get_integer(config, name, "timeout_ms", 1, std::int64_t{1} << 40));
  }
  if (config.contains("max_retries")) {
    endpoint.max_retries = static_cast<int>(get_integer(config, name, "max_retries", 0, 100));
  }
  if (config.contains("max_concurrent")) {
    endpoint.max_concurrent = static_cast<int>(get_integer(config, name, "max_concurrent", 1, 1024));
  }
  if (config.contains("max_tokens")) {
    endpoint.max_tokens = static_cast<int>(get_integer(config, name, "max_tokens", 1, kIntMax));
  }
  if (config.contains("temperature")) {
    const json& value = config.at("temperature");
    if (!value.is_number()) fail(name, "temperature", "must be a number, got " + type_name(value));
    endpoint.temperature = value.get<double>();
  }
  if (config.contains("cache_dir")) endpoint.cache_dir = std::filesystem::path(get_string(config, name, "cache_dir"));
  if (config.contains("max_backoff_ms")) {
    endpoint.max_backoff =
        std::chrono::milliseconds(get_integer(config, name, "max_backoff_ms", 0, std::int64_t{1} << 40));
  }
  if (config.contains("max_reply_bytes")) {
    endpoint.max_reply_bytes = static_cast<std::size_t>(
        get_integer(config, name, "max_reply_bytes", 1, std::numeric_limits<std::int64_t>::max()));
  }
  validate(endpoint);
  return endpoint;
}

}  // namespace hiera::engine::propose::llm
