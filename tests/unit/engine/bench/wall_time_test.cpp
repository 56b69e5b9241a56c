// A suite's wall time: the union of its problems' running intervals, the
// timestamps they are written in, and the pool sizes they record.
#include "engine/bench/wall_time.h"

#include <gtest/gtest.h>

namespace hiera::engine::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = std::chrono::system_clock::from_time_t(1796000000);  // 2026-11-30T00:53:20Z

Interval span(double from_s, double to_s) {
  return {kT0 + milliseconds(static_cast<long long>(from_s * 1000)), kT0 + milliseconds(static_cast<long long>(to_s * 1000))};
}

ProblemResult ran(const std::string& name, std::optional<std::string> start, std::optional<std::string> end,
                  std::optional<int> workers = std::nullopt) {
  ProblemResult r;
  r.name = name;
  r.group = ".";
  r.started_at = std::move(start);
  r.finished_at = std::move(end);
  r.workers = workers;
  return r;
}

TEST(WallTimeFormat, UtcWithMillisecondsAndBack) {
  const TimePoint t = std::chrono::system_clock::from_time_t(0) + seconds(1796000000) + milliseconds(7);
  EXPECT_EQ(iso8601_utc_ms(t), "2026-11-30T00:53:20.007Z");
  EXPECT_EQ(iso8601_utc_ms(std::chrono::system_clock::from_time_t(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(parse_iso8601_utc("2026-11-30T00:53:20.007Z"), t);
  EXPECT_EQ(parse_iso8601_utc("2026-11-30T00:53:20Z"), t - milliseconds(7));  // summary.json's date form
  // Sub-millisecond precision is dropped, not rounded up.
  EXPECT_EQ(iso8601_utc_ms(t + std::chrono::microseconds(999)), "2026-11-30T00:53:20.007Z");
}

TEST(WallTimeFormat, RejectsAnythingElse) {
  for (const char* text : {"", "yesterday", "2026-11-29", "2026-11-30T00:53:20", "2026-11-30T00:53:20.7Z",
                           "2026-11-30T00:53:20.007+01:00", "2026-11-30T00:53:20.007Zx", "2026-11-29 23:33:20Z",
                           "2026-11-30T00:53:20.0a7Z"}) {
    EXPECT_EQ(parse_iso8601_utc(text), std::nullopt) << text;
  }
}

TEST(WallTimeUnion, SingleInterval) { EXPECT_DOUBLE_EQ(union_seconds({span(1, 3.5)}), 2.5); }

TEST(WallTimeUnion, OverlappingIntervalsCountOnce) {
  EXPECT_DOUBLE_EQ(union_seconds({span(0, 10), span(5, 15)}), 15.0);
  EXPECT_DOUBLE_EQ(union_seconds({span(5, 15), span(0, 10), span(15, 16)}), 16.0);  // unordered; touching ends join
}

TEST(WallTimeUnion, DisjointIntervalsLeaveTheGapOut) {
  // Two invocations of a resumed suite, an hour apart.
  EXPECT_DOUBLE_EQ(union_seconds({span(0, 10), span(3600, 3604)}), 14.0);
}

TEST(WallTimeUnion, NestedIntervalsAddNothing) {
  EXPECT_DOUBLE_EQ(union_seconds({span(0, 20), span(2, 3), span(5, 19)}), 20.0);
  EXPECT_DOUBLE_EQ(union_seconds({span(2, 3), span(0, 20)}), 20.0);
}

TEST(WallTimeUnion, NoneOrBackwardsIntervalsAreZero) {
  EXPECT_DOUBLE_EQ(union_seconds({}), 0.0);
  EXPECT_DOUBLE_EQ(union_seconds({span(5, 4), span(6, 6)}), 0.0);
  EXPECT_DOUBLE_EQ(union_seconds({span(5, 4), span(0, 1)}), 1.0);
}

TEST(WallTimeOfResults, UsesTheRecordsThatHaveBothTimes) {
  const std::vector<ProblemResult> results = {
      ran("a", "2026-11-30T05:00:00.000Z", "2026-11-30T05:00:10.500Z", 2),
      ran("b", "2026-11-30T05:00:05.000Z", "2026-11-30T05:00:12.000Z", 2),
      ran("old", std::nullopt, std::nullopt),                     // an older record
      ran("half", "2026-11-30T04:00:00.000Z", std::nullopt, 1),   // never counted
      ran("bad", "noon", "2026-11-30T06:00:00.000Z", 1),
      ran("c", "2026-11-30T06:00:00.000Z", "2026-11-30T06:00:01.250Z", 4),  // resumed later
  };
  EXPECT_DOUBLE_EQ(*wall_seconds(results), 12.0 + 1.25);
  EXPECT_EQ(worker_counts(results), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(wall_seconds({ran("old", std::nullopt, std::nullopt)}), std::nullopt);
  EXPECT_EQ(worker_counts({ran("old", std::nullopt, std::nullopt)}), std::vector<int>{});
}

}  // namespace
}  // namespace hiera::engine::bench
