// The on-disk reply cache: keys from the canonical request, atomic entries,
// corrupt entries ignored with a log line.
#include "engine/propose/llm/response_cache.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/common/sha256.h"
#include "temp_directory.h"

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

LlmEndpoint endpoint() {
  LlmEndpoint result;
  result.name = "e";
  result.base_url = "http://127.0.0.1:9/v1/";
  result.model = "m";
  result.api_key_env = "SOME_KEY_VARIABLE";
  return result;
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path);
  out << text;
}

TEST(LlmResponseCacheTest, CanonicalRequestHasTheDefaultsFilledIn) {
  const json canonical = canonical_request(endpoint(), ChatRequest{"s", "u", std::nullopt});
  EXPECT_EQ(canonical.dump(),
            R"({"base_url":"http://127.0.0.1:9","max_tokens":8192,"model":"m","provider":"openai","system":"s",)"
            R"("temperature":0.2,"user":"u"})");
  EXPECT_EQ(cache_key(endpoint(), ChatRequest{"s", "u", std::nullopt}), sha256_hex(canonical.dump()));
}

TEST(LlmResponseCacheTest, KeyChangesWithEveryPartOfTheRequest) {
  const ChatRequest request{"s", "u", 100};
  const std::string base = cache_key(endpoint(), request);
  EXPECT_EQ(cache_key(endpoint(), ChatRequest{"s", "u", 100}), base);
  EXPECT_NE(cache_key(endpoint(), ChatRequest{"s2", "u", 100}), base);
  EXPECT_NE(cache_key(endpoint(), ChatRequest{"s", "u2", 100}), base);
  EXPECT_NE(cache_key(endpoint(), ChatRequest{"s", "u", 101}), base);
  auto changed = endpoint();
  changed.model = "m2";
  EXPECT_NE(cache_key(changed, request), base);
  changed = endpoint();
  changed.temperature = 0.3;
  EXPECT_NE(cache_key(changed, request), base);
  changed = endpoint();
  changed.provider = Provider::Anthropic;
  EXPECT_NE(cache_key(changed, request), base);
  changed = endpoint();
  changed.base_url = "http://127.0.0.1:10";
  EXPECT_NE(cache_key(changed, request), base);
  // Not part of the key: the key's variable, the timeout, the retries; /v1 or not.
  changed = endpoint();
  changed.api_key_env = "OTHER";
  changed.timeout = std::chrono::seconds(1);
  changed.max_retries = 0;
  changed.base_url = "http://127.0.0.1:9";
  EXPECT_EQ(cache_key(changed, request), base);
}

TEST(LlmResponseCacheTest, StoreThenLoad) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  std::vector<std::string> log;
  ResponseCache cache(directory.path() / "nested", [&](std::string_view line) { log.emplace_back(line); });
  const std::string key = cache_key(endpoint(), ChatRequest{"s", "u", {}});
  EXPECT_EQ(cache.load(key), std::nullopt);
  cache.store(key, canonical_request(endpoint(), ChatRequest{"s", "u", {}}), CachedReply{"text", "stop", Usage{3, 4}});
  const auto loaded = cache.load(key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->text, "text");
  EXPECT_EQ(loaded->finish, "stop");
  EXPECT_EQ(loaded->usage, (Usage{3, 4}));
  EXPECT_TRUE(log.empty());
  // One file, no temporary left behind.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory.path() / "nested")) {
    files.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(files, std::vector<std::string>{key + ".json"});
  const json stored = json::parse(read(cache.entry_path(key)));
  EXPECT_EQ(stored["key"].get<std::string>(), key);
  EXPECT_EQ(stored["request"]["user"].get<std::string>(), "u");
  EXPECT_EQ(stored["text"].get<std::string>(), "text");
}

TEST(LlmResponseCacheTest, CorruptEntriesAreIgnoredWithALogLine) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  std::vector<std::string> log;
  ResponseCache cache(directory.path(), [&](std::string_view line) { log.emplace_back(line); });
  const std::string key(64, 'a');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "parse error"},
      {"[]", "not a JSON object"},
      {R"({"key": "bbbb", "text": "t", "finish": "stop", "usage": {"prompt_tokens": 1, "completion_tokens": 2}})",
       "its key does not match its file name"},
      {R"({"key": ")" + key + R"(", "finish": "stop", "usage": {"prompt_tokens": 1, "completion_tokens": 2}})",
       "field 'text' is missing or has the wrong type"},
      {R"({"key": ")" + key + R"(", "text": "t", "finish": "stop", "usage": {"prompt_tokens": "1", "completion_tokens": 2}})",
       "field 'prompt_tokens' is missing or has the wrong type"},
  };
  for (const auto& [content, why] : cases) {
    log.clear();
    write(cache.entry_path(key), content);
    EXPECT_EQ(cache.load(key), std::nullopt) << content;
    ASSERT_EQ(log.size(), 1u) << content;
    EXPECT_THAT(log[0], HasSubstr("llm cache: ignoring corrupt entry " + cache.entry_path(key).string() + ": "));
    EXPECT_THAT(log[0], HasSubstr(why));
  }
}

TEST(LlmResponseCacheTest, AFailedStoreIsLoggedNotThrown) {
  hiera::testing::TempDirectory directory("hiera-llm-");
  write(directory.path() / "file", "x");
  std::vector<std::string> log;
  ResponseCache cache(directory.path() / "file" / "sub", [&](std::string_view line) { log.emplace_back(line); });
  EXPECT_NO_THROW(cache.store(std::string(64, 'c'), json::object(), CachedReply{"t", "stop", {}}));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_THAT(log[0], HasSubstr("llm cache: cannot store "));
}

}  // namespace
}  // namespace hiera::engine::propose::llm
