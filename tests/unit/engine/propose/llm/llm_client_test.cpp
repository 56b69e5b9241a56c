// The LLM client over real HTTP: libcurl against a scripted local server
// (tests/support/http_test_server.h) standing in for OpenAI and Anthropic.
#include "engine/propose/llm/llm_client.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/propose/llm/code_extraction.h"
#include "http_test_server.h"
#include "temp_directory.h"

namespace hiera::engine::propose::llm {
namespace {

using namespace std::chrono_literals;
using hiera::testing::HttpTestServer;
using hiera::testing::ScriptedResponse;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kKeyVariable = "HIERA_LLM_TEST_API_KEY";
constexpr const char* kKey = "sk-hiera-test-7f3a9c2e51d4";

std::string openai_reply(std::string_view text, std::string_view finish = "stop", int prompt = 11,
                         int completion = 22) {
  return json{{"id", "chatcmpl-1"},
              {"object", "chat.completion"},
              {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}},
                            {"finish_reason", finish}}}},
              {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", completion},
                         {"total_tokens", prompt + completion}}}}
      .dump();
}

std::string anthropic_reply(std::string_view text, std::string_view stop = "end_turn") {
  return json{{"id", "msg_1"},
              {"type", "message"},
              {"role", "assistant"},
              {"content", {{{"type", "text"}, {"text", text}}, {{"type", "text"}, {"text", " (end)"}}}},
              {"stop_reason", stop},
              {"usage", {{"input_tokens", 5}, {"output_tokens", 7}}}}
      .dump();
}

class LlmClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv(kKeyVariable, kKey, 1); }
  void TearDown() override { ::unsetenv(kKeyVariable); }

  LlmEndpoint endpoint(Provider provider = Provider::OpenAI) const {
    LlmEndpoint result;
    result.name = "test";
    result.provider = provider;
    result.base_url = server.base_url();
    result.model = "test-model";
    result.api_key_env = kKeyVariable;
    result.timeout = 10s;
    result.max_tokens = 512;
    return result;
  }

  // Records the backoff instead of sleeping, and every log line.
  LlmClient::Options recording() {
    LlmClient::Options options;
    options.sleep = [this](std::chrono::milliseconds duration, const CancellationToken&) {
      std::lock_guard lock(mutex);
      sleeps.push_back(duration);
    };
    options.log = [this](std::string_view line) {
      std::lock_guard lock(mutex);
      logs.emplace_back(line);
    };
    return options;
  }

  std::string url(std::string_view path = "/v1/chat/completions") const { return server.base_url() + std::string(path); }

  struct Cancelled {
    ChatResult result;
    std::chrono::steady_clock::duration elapsed;
  };
  // One call that another thread cancels 300 ms into it, and how long it took.
  static Cancelled complete_cancelled_after_300ms(LlmClient& client) {
    CancellationToken cancel;
    std::thread canceller([cancel] {
      std::this_thread::sleep_for(300ms);
      cancel.cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    ChatResult result = client.complete(ChatRequest{"", "u", {}}, cancel);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    canceller.join();
    return {std::move(result), elapsed};
  }

  HttpTestServer server;
  std::mutex mutex;
  std::vector<std::chrono::milliseconds> sleeps;
  std::vector<std::string> logs;
};

TEST_F(LlmClientTest, OpenAISuccess) {
  server.enqueue_json(200, openai_reply("Here is the code."));
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"You optimize kernels.", "Make it fast.", std::nullopt});

  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.reply().text, "Here is the code.");
  EXPECT_EQ(result.reply().finish, "stop");
  EXPECT_EQ(result.reply().usage, (Usage{11, 22}));
  EXPECT_FALSE(result.reply().from_cache);
  EXPECT_EQ(result.reply().attempts, 1);
  EXPECT_EQ(result.reply().http_status, 200);
  EXPECT_EQ(client.usage(), (Usage{11, 22}));

  ASSERT_EQ(server.request_count(), 1u);
  const auto request = server.requests().at(0);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/v1/chat/completions");
  EXPECT_EQ(request.header("Authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(request.header("Content-Type"), "application/json");
  EXPECT_EQ(request.header("x-api-key"), "");
  EXPECT_EQ(json::parse(request.body), json::parse(R"({
      "model": "test-model", "max_tokens": 512, "temperature": 0.2, "stream": false,
      "messages": [{"role": "system", "content": "You optimize kernels."},
                   {"role": "user", "content": "Make it fast."}]})"));
  EXPECT_TRUE(logs.empty());
}

TEST_F(LlmClientTest, BaseUrlMayEndInV1AndRequestMayOverrideMaxTokens) {
  server.enqueue_json(200, openai_reply("ok"));
  auto configured = endpoint();
  configured.base_url = server.base_url() + "/v1/";
  LlmClient client(configured, recording());
  ASSERT_TRUE(client.complete(ChatRequest{"", "u", 64}).ok());
  const auto request = server.requests().at(0);
  EXPECT_EQ(request.target, "/v1/chat/completions");
  const json body = json::parse(request.body);
  EXPECT_EQ(body["max_tokens"].get<int>(), 64);
  EXPECT_EQ(body["messages"].size(), 1u);  // no system message when it is empty
}

TEST_F(LlmClientTest, AnthropicSuccess) {
  server.enqueue_json(200, anthropic_reply("Claude says hi"));
  LlmClient client(endpoint(Provider::Anthropic), recording());
  const ChatResult result = client.complete(ChatRequest{"Be terse.", "Hello", 100});

  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.reply().text, "Claude says hi (end)");
  EXPECT_EQ(result.reply().finish, "end_turn");
  EXPECT_EQ(result.reply().usage, (Usage{5, 7}));
  EXPECT_EQ(client.usage(), (Usage{5, 7}));

  const auto request = server.requests().at(0);
  EXPECT_EQ(request.target, "/v1/messages");
  EXPECT_EQ(request.header("x-api-key"), kKey);
  EXPECT_EQ(request.header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(request.header("Authorization"), "");
  EXPECT_EQ(json::parse(request.body), json::parse(R"({
      "model": "test-model", "max_tokens": 100, "temperature": 0.2, "system": "Be terse.",
      "messages": [{"role": "user", "content": "Hello"}]})"));
}

TEST_F(LlmClientTest, LocalServerWithoutKeySendsNoAuthorization) {
  server.enqueue_json(200, openai_reply("ok"));
  auto configured = endpoint();
  configured.api_key_env = "";
  LlmClient client(configured, recording());
  ASSERT_TRUE(client.complete(ChatRequest{"", "u", {}}).ok());
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "");
}

TEST_F(LlmClientTest, UnsetKeyVariableIsAConfigurationError) {
  ::unsetenv(kKeyVariable);
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Configuration);
  EXPECT_EQ(result.error().message,
            std::string("LLM endpoint 'test': the environment variable ") + kKeyVariable + " (api_key_env) is not set");
  EXPECT_EQ(result.error().attempts, 0);
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(LlmClientTest, InvalidRequestMaxTokens) {
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", 0});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Configuration);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': max_tokens must be at least 1");
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(LlmClientTest, InvalidEndpointIsRefusedAtConstruction) {
  auto configured = endpoint();
  configured.max_concurrent = 0;
  EXPECT_THROW(LlmClient(configured, recording()), EndpointError);
}

TEST_F(LlmClientTest, RateLimitedThenSuccessHonoursRetryAfter) {
  server.enqueue(ScriptedResponse{429, {{"Retry-After", "1"}}, R"({"error": {"message": "slow down"}})", {}, false, false});
  server.enqueue_json(200, openai_reply("finally"));
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});

  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.reply().text, "finally");
  EXPECT_EQ(result.reply().attempts, 2);
  EXPECT_EQ(sleeps, std::vector<std::chrono::milliseconds>{1000ms});
  EXPECT_EQ(server.request_count(), 2u);
  EXPECT_EQ(logs, std::vector<std::string>{"LLM endpoint 'test': HTTP 429 from " + url() +
                                           ": slow down; retry 1 of 4 in 1000 ms"});
}

TEST_F(LlmClientTest, RetryAfterMillisecondsIsPreferred) {
  server.enqueue(ScriptedResponse{503, {{"retry-after-ms", "250"}, {"Retry-After", "7"}}, "", {}, false, false});
  server.enqueue_json(200, openai_reply("ok"));
  LlmClient client(endpoint(), recording());
  ASSERT_TRUE(client.complete(ChatRequest{"", "u", {}}).ok());
  EXPECT_EQ(sleeps, std::vector<std::chrono::milliseconds>{250ms});
}

TEST_F(LlmClientTest, RetryAfterIsCappedByMaxBackoff) {
  server.enqueue(ScriptedResponse{429, {{"Retry-After", "3600"}}, "", {}, false, false});
  server.enqueue_json(200, openai_reply("ok"));
  auto configured = endpoint();
  configured.max_backoff = 2s;
  LlmClient client(configured, recording());
  ASSERT_TRUE(client.complete(ChatRequest{"", "u", {}}).ok());
  EXPECT_EQ(sleeps, std::vector<std::chrono::milliseconds>{2000ms});
}

TEST_F(LlmClientTest, ServerErrorsExhaustTheRetries) {
  // No script: the server answers 500 "no scripted response" every time.
  auto configured = endpoint();
  configured.max_retries = 2;
  LlmClient client(configured, recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::HttpStatus);
  EXPECT_EQ(result.error().http_status, 500);
  EXPECT_EQ(result.error().attempts, 3);
  EXPECT_EQ(result.error().message,
            "LLM endpoint 'test': HTTP 500 from " + url() + ": no scripted response (gave up after 3 attempts)");
  EXPECT_EQ(server.request_count(), 3u);
  ASSERT_EQ(sleeps.size(), 2u);  // exponential, with up to 25% jitter
  EXPECT_GE(sleeps[0], 500ms);
  EXPECT_LE(sleeps[0], 625ms);
  EXPECT_GE(sleeps[1], 1000ms);
  EXPECT_LE(sleeps[1], 1250ms);
  ASSERT_EQ(logs.size(), 3u);  // two retries and the failure
  EXPECT_EQ(logs[2], result.error().message);
}

TEST_F(LlmClientTest, OtherStatusesAreNotRetried) {
  server.enqueue_json(404, R"({"error": {"message": "The model `test-model` does not exist"}})");
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::HttpStatus);
  EXPECT_EQ(result.error().http_status, 404);
  EXPECT_EQ(result.error().attempts, 1);
  EXPECT_EQ(result.error().message,
            "LLM endpoint 'test': HTTP 404 from " + url() + ": The model `test-model` does not exist");
  EXPECT_TRUE(sleeps.empty());
}

TEST_F(LlmClientTest, TimeoutIsNotRetried) {
  server.enqueue(ScriptedResponse{200, {}, openai_reply("late"), 3s, false, false});
  auto configured = endpoint();
  configured.timeout = 300ms;
  LlmClient client(configured, recording());
  const auto start = std::chrono::steady_clock::now();
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  const auto elapsed = std::chrono::steady_clock::now() - start;

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Timeout);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': no complete reply from " + url() + " within 300 ms");
  EXPECT_EQ(result.error().attempts, 1);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_LT(elapsed, 2500ms);
}

TEST_F(LlmClientTest, MalformedJson) {
  server.enqueue_json(200, "<html>upstream error</html>");
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Malformed);
  EXPECT_EQ(result.error().http_status, 200);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': malformed reply from " + url() +
                                        " (HTTP 200): the body is not JSON; the body starts: <html>upstream error</html>");
  EXPECT_EQ(client.usage(), (Usage{0, 0}));
}

TEST_F(LlmClientTest, MissingFieldsAreMalformedWithAShortExcerpt) {
  const std::string body = R"({"object": "chat.completion", "padding": ")" + std::string(500, 'x') + "\"}";
  server.enqueue_json(200, body);
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Malformed);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': malformed reply from " + url() +
                                        " (HTTP 200): missing choices; the body starts: " + body.substr(0, 200) + "...");
}

TEST_F(LlmClientTest, OversizedReplyIsTooLarge) {
  auto configured = endpoint();
  configured.max_reply_bytes = 1024;
  LlmClient client(configured, recording());
  for (const bool chunked : {false, true}) {
    server.enqueue(ScriptedResponse{200, {}, openai_reply(std::string(4096, 'a')), {}, chunked, false});
    const ChatResult result = client.complete(ChatRequest{"", "u", {}});
    ASSERT_FALSE(result.ok()) << chunked;
    EXPECT_EQ(result.error().kind, ChatErrorKind::TooLarge) << chunked;
    EXPECT_EQ(result.error().message,
              "LLM endpoint 'test': the reply from " + url() + " is larger than max_reply_bytes (1024 bytes)");
  }
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(LlmClientTest, ReplyWithoutCodeIsRejectedByExtraction) {
  server.enqueue_json(200, openai_reply("I would fuse the two kernels, but I cannot show code."));
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_TRUE(result.ok());
  const ExtractionResult extracted = extract_code(result.reply().text, result.reply().finish, Language::Cuda);
  ASSERT_FALSE(extracted.ok());
  EXPECT_EQ(extracted.rejection->reason, RejectReason::NoCodeBlock);
  EXPECT_EQ(extracted.rejection->message, "the reply has no fenced code block");
}

TEST_F(LlmClientTest, CacheReplaysOfflineWithoutRequests) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  const std::string reply_text = "```python\nclass ModelNew:\n    pass\n```\n";
  LlmEndpoint configured;
  {
    HttpTestServer provider;
    provider.enqueue_json(200, openai_reply(reply_text, "stop", 100, 200));
    configured = endpoint();
    configured.base_url = provider.base_url();
    configured.cache_dir = directory.path();
    LlmClient first(configured, recording());
    const ChatResult fetched = first.complete(ChatRequest{"sys", "user", {}});
    ASSERT_TRUE(fetched.ok()) << fetched.error().message;
    EXPECT_FALSE(fetched.reply().from_cache);
    EXPECT_EQ(provider.request_count(), 1u);
    EXPECT_EQ(first.usage(), (Usage{100, 200}));
  }  // the provider is gone: its port is closed

  ::unsetenv(kKeyVariable);  // and no key: a replay needs neither
  LlmClient second(configured, recording());
  const ChatResult replayed = second.complete(ChatRequest{"sys", "user", {}});
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_TRUE(replayed.reply().from_cache);
  EXPECT_EQ(replayed.reply().text, reply_text);
  EXPECT_EQ(replayed.reply().finish, "stop");
  EXPECT_EQ(replayed.reply().usage, (Usage{100, 200}));
  EXPECT_EQ(replayed.reply().attempts, 0);
  EXPECT_EQ(replayed.reply().http_status, 0);
  EXPECT_EQ(second.usage(), (Usage{0, 0}));  // nothing spent

  // One entry, and the key is nowhere in it.
  std::size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory.path())) {
    ++entries;
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    EXPECT_THAT(text.str(), Not(HasSubstr(kKey)));
    EXPECT_EQ(entry.path().filename().string(), cache_key(configured, ChatRequest{"sys", "user", {}}) + ".json");
  }
  EXPECT_EQ(entries, 1u);
  EXPECT_TRUE(logs.empty());
}

TEST_F(LlmClientTest, ADifferentRequestMissesTheCache) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  server.enqueue_json(200, openai_reply("one"));
  server.enqueue_json(200, openai_reply("two"));
  auto configured = endpoint();
  configured.cache_dir = directory.path();
  LlmClient client(configured, recording());
  EXPECT_EQ(client.complete(ChatRequest{"", "u", {}}).reply().text, "one");
  EXPECT_EQ(client.complete(ChatRequest{"", "u", 100}).reply().text, "two");
  EXPECT_EQ(client.complete(ChatRequest{"", "u", {}}).reply().text, "one");
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(LlmClientTest, ErrorsAreNotCached) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  server.enqueue_json(400, R"({"error": "bad"})");
  server.enqueue_json(200, openai_reply("good"));
  auto configured = endpoint();
  configured.cache_dir = directory.path();
  LlmClient client(configured, recording());
  EXPECT_FALSE(client.complete(ChatRequest{"", "u", {}}).ok());
  EXPECT_EQ(client.complete(ChatRequest{"", "u", {}}).reply().text, "good");
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(LlmClientTest, CorruptCacheEntryIsIgnoredAndReplaced) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  auto configured = endpoint();
  configured.cache_dir = directory.path();
  const ChatRequest request{"", "u", {}};
  const auto entry = directory.path() / (cache_key(configured, request) + ".json");
  { std::ofstream(entry) << "{truncated"; }
  server.enqueue_json(200, openai_reply("fresh"));
  LlmClient client(configured, recording());
  const ChatResult result = client.complete(request);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result.reply().from_cache);
  EXPECT_EQ(result.reply().text, "fresh");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_THAT(logs[0], HasSubstr("llm cache: ignoring corrupt entry " + entry.string()));
  EXPECT_TRUE(client.complete(request).reply().from_cache);  // the fresh reply replaced it
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_F(LlmClientTest, TheKeyNeverAppearsInErrorsOrLogs) {
  const std::string echo = std::string(R"({"error": {"message": "Incorrect API key provided: )") + kKey + R"("}})";
  server.enqueue_json(500, echo);  // retried: a log line with the body
  server.enqueue_json(401, echo);
  LlmClient client(endpoint(), recording());
  const ChatResult unauthorized = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(unauthorized.ok());
  EXPECT_EQ(unauthorized.error().kind, ChatErrorKind::HttpStatus);
  EXPECT_EQ(unauthorized.error().http_status, 401);
  EXPECT_EQ(unauthorized.error().message,
            "LLM endpoint 'test': HTTP 401 from " + url() + ": Incorrect API key provided: [redacted]");

  // A malformed body that echoes the key, and one with the key at the excerpt's cut.
  server.enqueue_json(200, std::string("not json ") + kKey);
  const ChatResult malformed = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(malformed.error().message, HasSubstr("the body starts: not json [redacted]"));
  server.enqueue_json(200, std::string(195, '#') + kKey);
  const ChatResult cut = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(cut.ok());

  ASSERT_EQ(logs.size(), 4u);
  for (const std::string& text : {unauthorized.error().message, malformed.error().message, cut.error().message}) {
    EXPECT_THAT(text, Not(HasSubstr(kKey)));
    EXPECT_THAT(text, Not(HasSubstr(std::string(kKey).substr(0, 5))));
  }
  for (const std::string& line : logs) {
    EXPECT_THAT(line, Not(HasSubstr(std::string(kKey).substr(0, 5)))) << line;
  }
  EXPECT_THAT(logs[0], HasSubstr("HTTP 500 from " + url() + ": Incorrect API key provided: [redacted]; retry 1 of 4"));
}

TEST_F(LlmClientTest, ConcurrencyIsLimitedPerClient) {
  for (int i = 0; i < 8; ++i) {
    server.enqueue(ScriptedResponse{200, {}, openai_reply("r", "stop", 1, 2), 150ms, false, false});
  }
  auto configured = endpoint();
  configured.max_concurrent = 2;
  LlmClient client(configured, recording());
  std::vector<std::thread> threads;
  std::atomic<int> succeeded{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (client.complete(ChatRequest{"", "u", {}}).ok()) ++succeeded;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(succeeded.load(), 8);
  EXPECT_EQ(server.request_count(), 8u);
  EXPECT_EQ(server.max_concurrent_requests(), 2);
  EXPECT_EQ(client.usage(), (Usage{8, 16}));
}

TEST_F(LlmClientTest, CancellationDuringTheBackoff) {
  server.enqueue(ScriptedResponse{429, {{"Retry-After", "30"}}, "", {}, false, false});
  LlmClient::Options options = recording();
  options.sleep = nullptr;  // the real, cancellable sleep
  LlmClient client(endpoint(), options);
  const auto [result, elapsed] = complete_cancelled_after_300ms(client);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Cancelled);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': cancelled during the backoff before a retry");
  EXPECT_EQ(result.error().attempts, 1);
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_LT(elapsed, 5s);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_THAT(logs[0], HasSubstr("retry 1 of 4 in 30000 ms"));
}

TEST_F(LlmClientTest, CancellationAbortsAnInFlightTransfer) {
  server.enqueue(ScriptedResponse{200, {}, openai_reply("too late"), 20s, false, false});
  LlmClient client(endpoint(), recording());
  const auto [result, elapsed] = complete_cancelled_after_300ms(client);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Cancelled);
  EXPECT_EQ(result.error().message, "LLM endpoint 'test': cancelled");
  EXPECT_LT(elapsed, 3s);
  EXPECT_TRUE(logs.empty());  // a cancellation is not a failure to report
}

TEST_F(LlmClientTest, AlreadyCancelledMakesNoRequest) {
  LlmClient client(endpoint(), recording());
  CancellationToken cancel;
  cancel.cancel();
  const ChatResult result = client.complete(ChatRequest{"", "u", {}}, cancel);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Cancelled);
  EXPECT_EQ(result.error().attempts, 0);
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(LlmClientTest, DeadEndpointIsANetworkError) {
  auto configured = endpoint();
  const std::string dead = "http://127.0.0.1:" + std::to_string(hiera::testing::closed_port());
  configured.base_url = dead;
  configured.max_retries = 1;
  LlmClient client(configured, recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ChatErrorKind::Network);
  EXPECT_EQ(result.error().http_status, 0);
  EXPECT_EQ(result.error().attempts, 2);
  EXPECT_THAT(result.error().message,
              ::testing::StartsWith("LLM endpoint 'test': cannot reach " + dead + "/v1/chat/completions: "));
  EXPECT_THAT(result.error().message, HasSubstr("onnect"));  // libcurl: "Failed to connect ... Couldn't connect"
  EXPECT_THAT(result.error().message, ::testing::EndsWith("(gave up after 2 attempts)"));
  EXPECT_EQ(sleeps.size(), 1u);
}

TEST_F(LlmClientTest, DroppedConnectionIsRetried) {
  server.enqueue(ScriptedResponse{200, {}, "", {}, false, /*drop=*/true});
  server.enqueue_json(200, openai_reply("second time"));
  LlmClient client(endpoint(), recording());
  const ChatResult result = client.complete(ChatRequest{"", "u", {}});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.reply().text, "second time");
  EXPECT_EQ(result.reply().attempts, 2);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_THAT(logs[0], HasSubstr("cannot reach " + url()));
}

TEST_F(LlmClientTest, UsageAccumulatesAcrossCalls) {
  server.enqueue_json(200, openai_reply("a", "stop", 10, 1));
  server.enqueue_json(200, openai_reply("b", "length", 20, 2));
  LlmClient client(endpoint(), recording());
  EXPECT_EQ(client.complete(ChatRequest{"", "u", {}}).reply().finish, "stop");
  EXPECT_EQ(client.complete(ChatRequest{"", "v", {}}).reply().finish, "length");
  EXPECT_EQ(client.usage(), (Usage{30, 3}));
}

TEST(LlmChatTest, ErrorKindNames) {
  EXPECT_EQ(to_string(ChatErrorKind::Network), "network");
  EXPECT_EQ(to_string(ChatErrorKind::Timeout), "timeout");
  EXPECT_EQ(to_string(ChatErrorKind::HttpStatus), "http_status");
  EXPECT_EQ(to_string(ChatErrorKind::Malformed), "malformed");
  EXPECT_EQ(to_string(ChatErrorKind::TooLarge), "too_large");
  EXPECT_EQ(to_string(ChatErrorKind::Cancelled), "cancelled");
  EXPECT_EQ(to_string(ChatErrorKind::Configuration), "configuration");
}

}  // namespace
}  // namespace hiera::engine::propose::llm
