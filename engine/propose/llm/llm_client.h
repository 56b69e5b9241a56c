#pragma once
// The client the LLM proposer talks through: one chat completion against one
// endpoint, with retries and backoff, a per-client concurrency limit, an
// optional on-disk reply cache, token accounting and cancellation. The API key
// is read from the environment for each request and never leaves the request's
// headers: errors and log lines are redacted.
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <semaphore>
#include <string_view>

#include "engine/common/cancellation.h"
#include "engine/propose/llm/chat.h"
#include "engine/propose/llm/endpoint.h"
#include "engine/propose/llm/response_cache.h"

namespace hiera::engine::propose::llm {

struct LlmClientOptions {
  // Waits before a retry; should return early once the token is cancelled.
  // Default: sleeps in short slices, polling the token. Tests inject a recorder.
  std::function<void(std::chrono::milliseconds, const CancellationToken&)> sleep;
  // One line per retry, per final failure and per cache problem. Default: stderr.
  std::function<void(std::string_view)> log;
};

class LlmClient {
 public:
  using Options = LlmClientOptions;

  // Throws EndpointError when the endpoint does not validate.
  explicit LlmClient(LlmEndpoint endpoint, Options options = {});

  // Safe to call from many threads at once; at most endpoint.max_concurrent
  // requests are in flight, the others wait (cancellably) for a slot. A slot is
  // held for one HTTP request, not across a backoff. Retried, up to max_retries
  // times: 429, 5xx and network errors. Not retried: other statuses, timeouts
  // (a request that ran out of time once will again), malformed and oversized
  // replies. Only 2xx replies that parse are cached.
  ChatResult complete(const ChatRequest& request, const CancellationToken& cancel = {});

  // Tokens spent by the HTTP replies so far (cache hits spend none).
  Usage usage() const;

  const LlmEndpoint& endpoint() const { return endpoint_; }

 private:
  std::chrono::milliseconds next_backoff(int retry, std::optional<std::chrono::milliseconds> server_wait);
  void log(std::string_view line, std::string_view secret) const;

  LlmEndpoint endpoint_;
  Options options_;
  std::optional<ResponseCache> cache_;
  std::counting_semaphore<> slots_;

  mutable std::mutex mutex_;  // guards usage_ and random_
  Usage usage_;
  std::mt19937_64 random_;
};

}  // namespace hiera::engine::propose::llm
