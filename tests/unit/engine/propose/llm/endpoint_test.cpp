// Parsing LLM endpoints from JSON configuration, and the errors that name the field.
#include "engine/propose/llm/endpoint.h"

#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json minimal() {
  return json{{"name", "local"}, {"provider", "openai"}, {"base_url", "http://127.0.0.1:8000"}, {"model", "qwen"}};
}

std::string parse_error(const json& config) {
  return hiera::testing::thrown_message<EndpointError>([&] { parse_endpoint(config); }, "(no error)");
}

TEST(LlmEndpointTest, MinimalConfigurationTakesTheDefaults) {
  const LlmEndpoint endpoint = parse_endpoint(minimal());
  EXPECT_EQ(endpoint.name, "local");
  EXPECT_EQ(endpoint.provider, Provider::OpenAI);
  EXPECT_EQ(endpoint.base_url, "http://127.0.0.1:8000");
  EXPECT_EQ(endpoint.model, "qwen");
  EXPECT_EQ(endpoint.api_key_env, "");
  EXPECT_EQ(endpoint.timeout, 120s);
  EXPECT_EQ(endpoint.max_retries, 4);
  EXPECT_EQ(endpoint.max_concurrent, 4);
  EXPECT_EQ(endpoint.max_tokens, 8192);
  EXPECT_DOUBLE_EQ(endpoint.temperature, 0.2);
  EXPECT_FALSE(endpoint.cache_dir);
  EXPECT_EQ(endpoint.max_backoff, 60s);
  EXPECT_EQ(endpoint.max_reply_bytes, 1u << 20);
}

TEST(LlmEndpointTest, EveryFieldIsRead) {
  const LlmEndpoint endpoint = parse_endpoint(json{{"name", "claude"},
                                                   {"provider", "anthropic"},
                                                   {"base_url", "https://api.anthropic.com"},
                                                   {"model", "claude-sonnet"},
                                                   {"api_key_env", "ANTHROPIC_API_KEY"},
                                                   {"timeout_ms", 30000},
                                                   {"max_retries", 2},
                                                   {"max_concurrent", 8},
                                                   {"max_tokens", 4096},
                                                   {"temperature", 0},
                                                   {"cache_dir", "/tmp/hiera-cache"},
                                                   {"max_backoff_ms", 5000},
                                                   {"max_reply_bytes", 4096}});
  EXPECT_EQ(endpoint.provider, Provider::Anthropic);
  EXPECT_EQ(endpoint.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(endpoint.timeout, 30s);
  EXPECT_EQ(endpoint.max_retries, 2);
  EXPECT_EQ(endpoint.max_concurrent, 8);
  EXPECT_EQ(endpoint.max_tokens, 4096);
  EXPECT_DOUBLE_EQ(endpoint.temperature, 0.0);
  EXPECT_EQ(endpoint.cache_dir, std::filesystem::path("/tmp/hiera-cache"));
  EXPECT_EQ(endpoint.max_backoff, 5s);
  EXPECT_EQ(endpoint.max_reply_bytes, 4096u);
}

TEST(LlmEndpointTest, ProviderNames) {
  EXPECT_EQ(to_string(Provider::OpenAI), "openai");
  EXPECT_EQ(to_string(Provider::Anthropic), "anthropic");
}

TEST(LlmEndpointTest, MissingRequiredFieldIsNamed) {
  for (const char* field : {"name", "provider", "base_url", "model"}) {
    json config = minimal();
    config.erase(field);
    const std::string expected_name = std::string(field) == "name" ? "LLM endpoint" : "LLM endpoint 'local'";
    EXPECT_EQ(parse_error(config), expected_name + ": field '" + field + "' is required") << field;
  }
}

TEST(LlmEndpointTest, WrongTypesAreNamedWithoutTheValue) {
  json config = minimal();
  config["max_retries"] = "4";
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'max_retries' must be an integer, got string");
  config = minimal();
  config["model"] = 7;
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'model' must be a string, got number");
  config = minimal();
  config["temperature"] = "hot";
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'temperature' must be a number, got string");
  config = minimal();
  config["timeout_ms"] = 1.5;
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'timeout_ms' must be an integer, got number");
}

TEST(LlmEndpointTest, UnknownProvider) {
  json config = minimal();
  config["provider"] = "gemini";
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'provider' must be \"openai\" or \"anthropic\"");
}

TEST(LlmEndpointTest, UnknownFieldIsAnError) {
  json config = minimal();
  config["max_token"] = 100;
  EXPECT_EQ(parse_error(config), "LLM endpoint 'local': field 'max_token' is not a known endpoint field");
}

TEST(LlmEndpointTest, AKeyInTheConfigurationIsRefusedAndNotRepeated) {
  json config = minimal();
  config["api_key"] = "sk-live-should-not-echo";
  const std::string error = parse_error(config);
  EXPECT_EQ(error,
            "LLM endpoint 'local': field 'api_key' is not accepted: put the key in an environment variable and "
            "name it in 'api_key_env'");
  config = minimal();
  config["api_key_env"] = "sk-live-should-not-echo";
  EXPECT_EQ(parse_error(config),
            "LLM endpoint 'local': field 'api_key_env' must name an environment variable (letters, digits, '_'), "
            "not hold the key itself");
}

TEST(LlmEndpointTest, RangesAreChecked) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{"max_retries", -1}}, "field 'max_retries' must be at least 0"},
      {json{{"max_retries", 101}}, "field 'max_retries' must be at most 100"},
      {json{{"max_concurrent", 0}}, "field 'max_concurrent' must be at least 1"},
      {json{{"max_tokens", 0}}, "field 'max_tokens' must be at least 1"},
      {json{{"timeout_ms", 0}}, "field 'timeout_ms' must be at least 1"},
      {json{{"temperature", 2.5}}, "field 'temperature' must be a number from 0 to 2"},
      {json{{"temperature", -0.1}}, "field 'temperature' must be a number from 0 to 2"},
      {json{{"max_reply_bytes", 0}}, "field 'max_reply_bytes' must be at least 1"},
      {json{{"max_backoff_ms", -5}}, "field 'max_backoff_ms' must be at least 0"},
      {json{{"cache_dir", ""}}, "field 'cache_dir' must not be empty"},
      {json{{"name", ""}}, "field 'name' must not be empty"},
      {json{{"model", ""}}, "field 'model' must not be empty"},
      {json{{"max_tokens", 1e20}}, "field 'max_tokens' must be an integer, got number"},
      {json{{"max_tokens", 18446744073709551615ull}}, "field 'max_tokens' must be at most 2147483647"},
  };
  for (const auto& [patch, expected] : cases) {
    json config = minimal();
    config.update(patch);
    const std::string name = config["name"].get<std::string>().empty() ? "LLM endpoint: " : "LLM endpoint 'local': ";
    EXPECT_EQ(parse_error(config), name + expected) << patch.dump();
  }
}

TEST(LlmEndpointTest, BaseUrlMustBeHttp) {
  for (const char* url : {"127.0.0.1:8000", "ftp://host", "http://", "http://host/v1?x=1", "http://host name"}) {
    json config = minimal();
    config["base_url"] = url;
    EXPECT_EQ(parse_error(config),
              "LLM endpoint 'local': field 'base_url' must be an http:// or https:// URL without query or fragment")
        << url;
  }
  for (const char* url : {"http://localhost:11434", "https://api.openai.com/v1", "HTTP://host/prefix/v1/"}) {
    json config = minimal();
    config["base_url"] = url;
    EXPECT_EQ(parse_endpoint(config).base_url, url);
  }
}

TEST(LlmEndpointTest, NotAnObject) {
  EXPECT_EQ(parse_error(json::array()), "LLM endpoint: configuration must be a JSON object, got array");
}

TEST(LlmEndpointTest, ValidateChecksAnEndpointBuiltInCode) {
  LlmEndpoint endpoint;
  endpoint.name = "coded";
  endpoint.base_url = "http://127.0.0.1:1";
  endpoint.model = "m";
  EXPECT_NO_THROW(validate(endpoint));
  endpoint.max_concurrent = 0;
  EXPECT_THROW(validate(endpoint), EndpointError);
}

}  // namespace
}  // namespace hiera::engine::propose::llm
