#pragma once
// On-disk cache of chat replies, keyed by the SHA-256 of the canonical request
// (never the API key), one JSON file per entry, written atomically. A hit makes
// no HTTP request, so an optimization run can be replayed offline.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/propose/llm/chat.h"
#include "engine/propose/llm/endpoint.h"

namespace hiera::engine::propose::llm {

// Everything that decides the reply, with the request's defaults filled in:
// provider, base_url (normalized: "/v1" and "/" trimmed), model, system, user,
// max_tokens, temperature.
nlohmann::json canonical_request(const LlmEndpoint& endpoint, const ChatRequest& request);

// Lower-case hex SHA-256 of canonical_request(...).dump().
std::string cache_key(const LlmEndpoint& endpoint, const ChatRequest& request);

struct CachedReply {
  std::string text;
  std::string finish;
  Usage usage;
};

class ResponseCache {
 public:
  using LogSink = std::function<void(std::string_view)>;

  ResponseCache(std::filesystem::path directory, LogSink log);

  // The entry {directory}/{key}.json; empty when absent, or when corrupt (logged).
  std::optional<CachedReply> load(const std::string& key) const;

  // Writes {"key", "request", "text", "finish", "usage"} to a temporary file
  // and renames it into place; a failure is logged, never thrown.
  void store(const std::string& key, const nlohmann::json& request, const CachedReply& reply) const;

  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::filesystem::path directory_;
  LogSink log_;
};

}  // namespace hiera::engine::propose::llm
