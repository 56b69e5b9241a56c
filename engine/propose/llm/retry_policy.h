#pragma once
// When to retry a chat request and how long to wait first: exponential
// backoff with jitter, or the server's own Retry-After, capped by max_backoff.
#include <chrono>
#include <optional>
#include <string_view>

namespace hiera::engine::propose::llm {

// 429 (rate limited) and every 5xx (including Anthropic's 529 "overloaded").
bool is_retryable_status(long status);

// A Retry-After value: delta-seconds ("120") or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT", read by libcurl's curl_getdate), as the
// wait from now; a date in the past is zero. Empty when unreadable.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

// OpenAI's "retry-after-ms" header: a non-negative decimal number of milliseconds.
std::optional<std::chrono::milliseconds> parse_retry_after_ms(std::string_view value);

inline constexpr std::chrono::milliseconds kInitialBackoff{500};

// The wait before retry number `retry` (1 for the first retry): the server's
// wait when it gave one, else kInitialBackoff * 2^(retry-1) stretched by up to
// a quarter by jitter (in [0, 1)); either capped by max_backoff.
std::chrono::milliseconds backoff_delay(int retry, std::optional<std::chrono::milliseconds> server_wait,
                                       std::chrono::milliseconds max_backoff, double jitter);

}  // namespace hiera::engine::propose::llm
