#pragma once
// What the end-to-end tests of `hiera optimize` share: an OpenAI-style reply
// holding a file's code in a fenced block, and a configuration naming a
// loopback endpoint (tests/support/http_test_server.h serves the replies).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace hiera::testing {

std::string read_text(const std::filesystem::path& path);

// A chat.completion whose message is `preface`, then the file in a ```language block.
std::string chat_reply_with_file(const std::filesystem::path& file, const std::string& language, const std::string& preface);

// {"llm": {"default": "loopback", "endpoints": [{... base_url, no key, no retries, cache in cache_dir}]}}
nlohmann::json loopback_llm_config(const std::string& base_url, const std::filesystem::path& cache_dir);

}  // namespace hiera::testing
