#include "engine/propose/llm/response_cache.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "engine/common/sha256.h"
#include "engine/propose/llm/wire_format.h"

namespace hiera::engine::propose::llm {
namespace {

using nlohmann::json;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const json& member(const json& entry, const char* name, bool (json::*is_type)() const noexcept) {
  if (!entry.contains(name) || !(entry.at(name).*is_type)()) {
    throw std::runtime_error(std::string("field '") + name + "' is missing or has the wrong type");
  }
  return entry.at(name);
}

}  // namespace

json canonical_request(const LlmEndpoint& endpoint, const ChatRequest& request) {
  // nlohmann::json keeps object keys sorted, so dump() is canonical.
  return json{{"provider", to_string(endpoint.provider)},
              {"base_url", normalized_base_url(endpoint.base_url)},
              {"model", endpoint.model},
              {"system", request.system},
              {"user", request.user},
              {"max_tokens", request.max_tokens.value_or(endpoint.max_tokens)},
              {"temperature", endpoint.temperature}};
}

std::string cache_key(const LlmEndpoint& endpoint, const ChatRequest& request) {
  return sha256_hex(canonical_request(endpoint, request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

ResponseCache::ResponseCache(std::filesystem::path directory, LogSink log)
    : directory_(std::move(directory)), log_(std::move(log)) {}

std::filesystem::path ResponseCache::entry_path(const std::string& key) const { return directory_ / (key + ".json"); }

std::optional<CachedReply> ResponseCache::load(const std::string& key) const {
  const std::filesystem::path path = entry_path(key);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  try {
    const json entry = json::parse(read_file(path));
    if (!entry.is_object()) throw std::runtime_error("not a JSON object");
    if (member(entry, "key", &json::is_string).get<std::string>() != key) {
      throw std::runtime_error("its key does not match its file name");
    }
    const json& usage = member(entry, "usage", &json::is_object);
    CachedReply reply;
    reply.text = member(entry, "text", &json::is_string).get<std::string>();
    reply.finish = member(entry, "finish", &json::is_string).get<std::string>();
    reply.usage.prompt_tokens = member(usage, "prompt_tokens", &json::is_number_integer).get<std::int64_t>();
    reply.usage.completion_tokens = member(usage, "completion_tokens", &json::is_number_integer).get<std::int64_t>();
    return reply;
  } catch (const std::exception& problem) {
    if (log_) log_("llm cache: ignoring corrupt entry " + path.string() + ": " + problem.what());
    return std::nullopt;
  }
}

void ResponseCache::store(const std::string& key, const json& request, const CachedReply& reply) const {
  static std::atomic<unsigned long> counter{0};
  const std::filesystem::path path = entry_path(key);
  // Unique per process and call, in the same directory so the rename is atomic.
  const std::filesystem::path temporary =
      directory_ / ("." + key + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++));
  try {
    std::filesystem::create_directories(directory_);
    const json entry{{"key", key},
                     {"request", request},
                     {"text", reply.text},
                     {"finish", reply.finish},
                     {"usage", {{"prompt_tokens", reply.usage.prompt_tokens},
                                {"completion_tokens", reply.usage.completion_tokens}}}};
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << entry.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      out.close();
      if (!out) throw std::runtime_error("cannot write " + temporary.string());
    }
    std::filesystem::rename(temporary, path);
  } catch (const std::exception& problem) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    if (log_) log_("llm cache: cannot store " + path.string() + ": " + problem.what());
  }
}

}  // namespace hiera::engine::propose::llm
