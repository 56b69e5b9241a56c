#include "engine/bench/wall_time.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <set>
#include <sstream>

namespace hiera::engine::bench {

std::string iso8601_utc_ms(TimePoint time) {
  // Whole seconds and the milliseconds within them, both floored (no rounding into the next second).
  const auto secs = std::chrono::floor<std::chrono::seconds>(time);
  const long long millis = std::chrono::floor<std::chrono::milliseconds>(time - secs).count();
  const std::time_t t = std::chrono::system_clock::to_time_t(secs);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[48];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03lldZ", millis);
  return text;
}

std::optional<TimePoint> parse_iso8601_utc(std::string_view text) {
  std::tm utc{};
  std::istringstream in{std::string(text)};
  in >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  std::string rest;
  std::getline(in, rest);
  int millis = 0;
  if (rest.size() == 5 && rest[0] == '.' && rest[4] == 'Z' &&
      std::all_of(rest.begin() + 1, rest.begin() + 4, [](char c) { return c >= '0' && c <= '9'; })) {
    millis = std::stoi(rest.substr(1, 3));
  } else if (rest != "Z") {
    return std::nullopt;
  }
  const std::time_t seconds = timegm(&utc);
  return std::chrono::system_clock::from_time_t(seconds) + std::chrono::milliseconds(millis);
}

double union_seconds(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::chrono::duration<double> total{0};
  std::optional<Interval> current;  // the merged run being extended
  for (const auto& i : intervals) {
    if (i.end <= i.start) continue;
    if (current && i.start <= current->end) {
      current->end = std::max(current->end, i.end);
      continue;
    }
    if (current) total += current->end - current->start;
    current = i;
  }
  if (current) total += current->end - current->start;
  return total.count();
}

std::optional<double> wall_seconds(const std::vector<ProblemResult>& results) {
  std::vector<Interval> intervals;
  for (const auto& r : results) {
    if (!r.started_at || !r.finished_at) continue;
    const auto start = parse_iso8601_utc(*r.started_at);
    const auto end = parse_iso8601_utc(*r.finished_at);
    if (start && end) intervals.push_back({*start, *end});
  }
  if (intervals.empty()) return std::nullopt;
  return union_seconds(std::move(intervals));
}

std::vector<int> worker_counts(const std::vector<ProblemResult>& results) {
  std::set<int> counts;
  for (const auto& r : results) {
    if (r.workers) counts.insert(*r.workers);
  }
  return {counts.begin(), counts.end()};
}

}  // namespace hiera::engine::bench
