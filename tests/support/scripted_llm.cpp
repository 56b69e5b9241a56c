#include "scripted_llm.h"

#include <fstream>
#include <sstream>

namespace hiera::testing {

using nlohmann::json;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string chat_reply_with_file(const std::filesystem::path& file, const std::string& language, const std::string& preface) {
  const std::string content = preface + "\n\n```" + language + "\n" + read_text(file) + "```\n";
  return json{{"id", "chatcmpl-test"},
              {"object", "chat.completion"},
              {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
              {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}, {"total_tokens", 1200}}}}
      .dump();
}

json loopback_llm_config(const std::string& base_url, const std::filesystem::path& cache_dir) {
  return {{"llm", {{"default", "loopback"},
                   {"endpoints", {{{"name", "loopback"}, {"provider", "openai"}, {"base_url", base_url},
                                   {"model", "scripted-model"}, {"api_key_env", ""}, {"max_retries", 0},
                                   {"timeout_ms", 20000}, {"cache_dir", cache_dir.string()}}}}}}};
}

}  // namespace hiera::testing
