#pragma once
// How long a suite ran: the length of the union of its problems' running
// intervals [started_at, finished_at]. Problems run concurrently, and a
// resumed suite spans several invocations; the union counts each moment
// some problem was running once, and the gaps between invocations not at all.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

using TimePoint = std::chrono::system_clock::time_point;

// "2026-11-30T05:28:10.123Z": UTC, milliseconds.
std::string iso8601_utc_ms(TimePoint time);
// The inverse, also taking whole seconds ("2026-11-30T05:28:10Z"); empty for
// anything else.
std::optional<TimePoint> parse_iso8601_utc(std::string_view text);

struct Interval {
  TimePoint start;
  TimePoint end;
};

// The length of the union of the intervals, in seconds; an interval that
// ends before it starts counts as empty.
double union_seconds(std::vector<Interval> intervals);

// Over the results whose started_at and finished_at both parse; empty when
// none has them (records from an older hiera).
std::optional<double> wall_seconds(const std::vector<ProblemResult>& results);

// The distinct pool sizes the results were run with, ascending.
std::vector<int> worker_counts(const std::vector<ProblemResult>& results);

}  // namespace hiera::engine::bench
