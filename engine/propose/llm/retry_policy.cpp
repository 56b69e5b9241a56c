#include "engine/propose/llm/retry_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include <curl/curl.h>

namespace hiera::engine::propose::llm {
namespace {

std::string_view trim(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

}  // namespace

bool is_retryable_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now) {
  value = trim(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t seconds = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    // Too many digits to represent: a wait longer than any cap.
    if (error == std::errc::result_out_of_range) return std::chrono::hours(24 * 365);
    if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
    return std::chrono::milliseconds(std::min<std::int64_t>(seconds, 365LL * 24 * 3600) * 1000);
  }
  const std::string text(value);
  const time_t date = curl_getdate(text.c_str(), nullptr);
  if (date == -1) return std::nullopt;
  const auto wait = std::chrono::system_clock::from_time_t(date) - now;
  if (wait <= std::chrono::system_clock::duration::zero()) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(wait);
}

std::optional<std::chrono::milliseconds> parse_retry_after_ms(std::string_view value) {
  value = trim(value);
  double milliseconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), milliseconds);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || !(milliseconds >= 0)) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(std::ceil(milliseconds), 365.0 * 24 * 3600 * 1000)));
}

std::chrono::milliseconds backoff_delay(int retry, std::optional<std::chrono::milliseconds> server_wait,
                                       std::chrono::milliseconds max_backoff, double jitter) {
  if (server_wait) return std::min(*server_wait, max_backoff);
  const int doublings = std::clamp(retry - 1, 0, 30);
  const double base = static_cast<double>(kInitialBackoff.count()) * static_cast<double>(1LL << doublings);
  const double stretched = base * (1.0 + 0.25 * std::clamp(jitter, 0.0, 1.0));
  if (stretched >= static_cast<double>(max_backoff.count())) return max_backoff;
  return std::chrono::milliseconds(static_cast<std::int64_t>(stretched));
}

}  // namespace hiera::engine::propose::llm
