// Which replies are retried, Retry-After in both forms, and the backoff schedule.
#include "engine/propose/llm/retry_policy.h"

#include <gtest/gtest.h>

namespace hiera::engine::propose::llm {
namespace {

using namespace std::chrono_literals;

TEST(LlmRetryPolicyTest, RetryableStatuses) {
  for (long status : {429L, 500L, 502L, 503L, 504L, 529L, 599L}) EXPECT_TRUE(is_retryable_status(status)) << status;
  for (long status : {200L, 400L, 401L, 403L, 404L, 408L, 413L, 600L}) EXPECT_FALSE(is_retryable_status(status)) << status;
}

TEST(LlmRetryPolicyTest, RetryAfterSeconds) {
  const auto now = std::chrono::system_clock::now();
  EXPECT_EQ(parse_retry_after("1", now), 1000ms);
  EXPECT_EQ(parse_retry_after(" 120 ", now), 120000ms);
  EXPECT_EQ(parse_retry_after("0", now), 0ms);
  EXPECT_EQ(parse_retry_after("99999999999999999999999", now), std::chrono::hours(24 * 365));
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("-1", now), std::nullopt);
}

TEST(LlmRetryPolicyTest, RetryAfterHttpDate) {
  // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 seconds after the epoch.
  const auto now = std::chrono::system_clock::from_time_t(1445412480 - 2);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), 2000ms);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), 0ms);  // in the past
}

TEST(LlmRetryPolicyTest, RetryAfterMilliseconds) {
  EXPECT_EQ(parse_retry_after_ms("250"), 250ms);
  EXPECT_EQ(parse_retry_after_ms("20.5"), 21ms);
  EXPECT_EQ(parse_retry_after_ms("x"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms("-3"), std::nullopt);
  EXPECT_EQ(parse_retry_after_ms(""), std::nullopt);
}

TEST(LlmRetryPolicyTest, ExponentialBackoffWithJitterCapped) {
  EXPECT_EQ(backoff_delay(1, std::nullopt, 60s, 0.0), 500ms);
  EXPECT_EQ(backoff_delay(2, std::nullopt, 60s, 0.0), 1000ms);
  EXPECT_EQ(backoff_delay(3, std::nullopt, 60s, 0.0), 2000ms);
  EXPECT_EQ(backoff_delay(3, std::nullopt, 60s, 0.5), 2250ms);
  EXPECT_EQ(backoff_delay(4, std::nullopt, 60s, 0.25), 4250ms);
  EXPECT_EQ(backoff_delay(10, std::nullopt, 60s, 0.0), 60s);
  EXPECT_EQ(backoff_delay(1000, std::nullopt, 60s, 0.0), 60s);
  EXPECT_EQ(backoff_delay(1, std::nullopt, 0ms, 0.0), 0ms);
}

TEST(LlmRetryPolicyTest, ServerWaitIsUsedExactlyButCapped) {
  EXPECT_EQ(backoff_delay(1, 1000ms, 60s, 0.9), 1000ms);
  EXPECT_EQ(backoff_delay(3, 0ms, 60s, 0.9), 0ms);
  EXPECT_EQ(backoff_delay(1, 3600s, 60s, 0.0), 60s);
}

}  // namespace
}  // namespace hiera::engine::propose::llm
