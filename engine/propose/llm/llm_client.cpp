#include "engine/propose/llm/llm_client.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/common/sha256.h"
#include "engine/propose/llm/http_post.h"
#include "engine/propose/llm/retry_policy.h"
#include "engine/propose/llm/safe_text.h"
#include "engine/propose/llm/wire_format.h"

namespace hiera::engine::propose::llm {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr auto kPollInterval = 20ms;

void sleep_unless_cancelled(std::chrono::milliseconds duration, const CancellationToken& cancel) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!cancel.cancelled()) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kPollInterval));
  }
}

void log_to_stderr(std::string_view line) {
  const std::string text = "hiera: " + std::string(line) + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);  // one write: lines from threads do not interleave
}

// One slot of the client's concurrency limit, waited for while the token allows.
class Slot {
 public:
  Slot(std::counting_semaphore<>& slots, const CancellationToken& cancel) : slots_(slots) {
    while (!cancel.cancelled() && !acquired_) acquired_ = slots_.try_acquire_for(kPollInterval);
  }
  ~Slot() {
    if (acquired_) slots_.release();
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  bool acquired() const { return acquired_; }

 private:
  std::counting_semaphore<>& slots_;
  bool acquired_ = false;
};

LlmEndpoint validated(LlmEndpoint endpoint) {
  validate(endpoint);
  return endpoint;
}

// Invalid UTF-8 in a prompt becomes U+FFFD instead of an exception.
std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// The provider's explanation, or the start of the body; the key removed before cutting.
std::string describe_body(const std::string& body, const std::string& secret) {
  std::string explanation = provider_error_message(body);
  if (explanation.empty()) explanation = body;
  if (explanation.empty()) return "(empty body)";
  return excerpt(redact(explanation, secret));
}

std::optional<std::chrono::milliseconds> server_wait(const HttpReply& reply) {
  if (const auto it = reply.headers.find("retry-after-ms"); it != reply.headers.end()) {
    if (auto wait = parse_retry_after_ms(it->second)) return wait;
  }
  if (const auto it = reply.headers.find("retry-after"); it != reply.headers.end()) {
    return parse_retry_after(it->second, std::chrono::system_clock::now());
  }
  return std::nullopt;
}

}  // namespace

LlmClient::LlmClient(LlmEndpoint endpoint, Options options)
    : endpoint_(validated(std::move(endpoint))),
      options_(std::move(options)),
      slots_(endpoint_.max_concurrent),
      random_(std::random_device{}()) {
  if (!options_.sleep) options_.sleep = &sleep_unless_cancelled;
  if (!options_.log) options_.log = &log_to_stderr;
  if (endpoint_.cache_dir) cache_.emplace(*endpoint_.cache_dir, options_.log);
}

Usage LlmClient::usage() const {
  std::lock_guard lock(mutex_);
  return usage_;
}

void LlmClient::log(std::string_view line, std::string_view secret) const { options_.log(redact(line, secret)); }

std::chrono::milliseconds LlmClient::next_backoff(int retry, std::optional<std::chrono::milliseconds> wait) {
  double jitter = 0;
  {
    std::lock_guard lock(mutex_);
    jitter = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  }
  return backoff_delay(retry, wait, endpoint_.max_backoff, jitter);
}

ChatResult LlmClient::complete(const ChatRequest& request, const CancellationToken& cancel) {
  const std::string who = "LLM endpoint '" + endpoint_.name + "'";
  const std::string url = request_url(endpoint_);
  std::string secret;
  int attempts = 0;
  const auto fail = [&](ChatErrorKind kind, const std::string& message, long status) -> ChatResult {
    ChatError error{kind, redact(who + ": " + message, secret), static_cast<int>(status), attempts};
    if (kind != ChatErrorKind::Cancelled) options_.log(error.message);
    return error;
  };

  if (cancel.cancelled()) return fail(ChatErrorKind::Cancelled, "cancelled", 0);
  if (request.max_tokens && *request.max_tokens < 1) {
    return fail(ChatErrorKind::Configuration, "max_tokens must be at least 1", 0);
  }

  // The cache first: a replay needs neither the network nor the key.
  json canonical;
  std::string key;
  if (cache_) {
    canonical = canonical_request(endpoint_, request);
    key = sha256_hex(dump(canonical));
    if (auto hit = cache_->load(key)) {
      ChatReply reply{std::move(hit->text), std::move(hit->finish), hit->usage, /*from_cache=*/true, 0, 0};
      return reply;
    }
  }

  if (!endpoint_.api_key_env.empty()) {
    const char* value = std::getenv(endpoint_.api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return fail(ChatErrorKind::Configuration,
                  "the environment variable " + endpoint_.api_key_env + " (api_key_env) is not set", 0);
    }
    secret = value;
  }

  const HttpPost post{url, request_headers(endpoint_.provider, secret), dump(request_body(endpoint_, request)),
                      endpoint_.timeout, endpoint_.max_reply_bytes};

  for (int retry = 0;; ++retry) {
    HttpReply http;
    {
      Slot slot(slots_, cancel);
      if (!slot.acquired()) return fail(ChatErrorKind::Cancelled, "cancelled", 0);
      ++attempts;
      http = http_post(post, cancel);
    }

    ChatErrorKind kind = ChatErrorKind::Network;
    std::string problem;
    std::optional<std::chrono::milliseconds> wait;
    switch (http.failure) {
      case TransferFailure::Cancelled:
        return fail(ChatErrorKind::Cancelled, "cancelled", 0);
      case TransferFailure::Timeout:
        return fail(ChatErrorKind::Timeout,
                    "no complete reply from " + url + " within " + std::to_string(endpoint_.timeout.count()) + " ms",
                    0);
      case TransferFailure::TooLarge:
        return fail(ChatErrorKind::TooLarge,
                    "the reply from " + url + " is larger than max_reply_bytes (" +
                        std::to_string(endpoint_.max_reply_bytes) + " bytes)",
                    http.status);
      case TransferFailure::Network:
        kind = ChatErrorKind::Network;
        problem = "cannot reach " + url + ": " + http.failure_message;
        break;
      case TransferFailure::None:
        if (http.status >= 200 && http.status <= 299) {
          WireReply wire;
          try {
            wire = parse_reply(endpoint_.provider, http.body);
          } catch (const MalformedReply& malformed) {
            return fail(ChatErrorKind::Malformed,
                        "malformed reply from " + url + " (HTTP " + std::to_string(http.status) + "): " +
                            malformed.what() + "; the body starts: " + excerpt(redact(http.body, secret)),
                        http.status);
          }
          {
            std::lock_guard lock(mutex_);
            usage_ += wire.usage;
          }
          if (cache_) cache_->store(key, canonical, CachedReply{wire.text, wire.finish, wire.usage});
          return ChatReply{std::move(wire.text), std::move(wire.finish), wire.usage,
                           /*from_cache=*/false,  attempts, static_cast<int>(http.status)};
        }
        kind = ChatErrorKind::HttpStatus;
        problem = "HTTP " + std::to_string(http.status) + " from " + url + ": " + describe_body(http.body, secret);
        if (!is_retryable_status(http.status)) return fail(kind, problem, http.status);
        wait = server_wait(http);
        break;
    }

    if (retry >= endpoint_.max_retries) {
      return fail(kind, problem + " (gave up after " + std::to_string(attempts) + " attempts)", http.status);
    }
    const std::chrono::milliseconds delay = next_backoff(retry + 1, wait);
    log(who + ": " + problem + "; retry " + std::to_string(retry + 1) + " of " +
            std::to_string(endpoint_.max_retries) + " in " + std::to_string(delay.count()) + " ms",
        secret);
    options_.sleep(delay, cancel);
    if (cancel.cancelled()) return fail(ChatErrorKind::Cancelled, "cancelled during the backoff before a retry", 0);
  }
}

}  // namespace hiera::engine::propose::llm
