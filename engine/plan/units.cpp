// Formatting quantities for the planner's reasons (units.h).
#include "engine/plan/units.h"

#include <cmath>
#include <cstdio>

namespace hiera::engine::plan {
namespace {

std::string printf_string(const char* format, double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value, unit);
  return buffer;
}

// Three significant figures for values of at least 1, "%.3g" below.
std::string three_figures(double value, const char* unit) {
  const double magnitude = std::fabs(value);
  if (magnitude < 1.0) return printf_string("%.3g %s", value, unit);
  if (magnitude < 10.0) return printf_string("%.2f %s", value, unit);
  if (magnitude < 100.0) return printf_string("%.1f %s", value, unit);
  return printf_string("%.0f %s", value, unit);
}

// Decimal prefixes: one decimal in the kilo and mega ranges, three figures from giga on.
std::string decimal_quantity(double value, const char* unit_b, const char* unit_k, const char* unit_m,
                             const char* unit_g, const char* unit_t) {
  const double magnitude = std::fabs(value);
  if (magnitude < 1e3) return printf_string("%.0f %s", value, unit_b);
  if (magnitude < 1e6) return printf_string("%.1f %s", value / 1e3, unit_k);
  if (magnitude < 1e9) return printf_string("%.1f %s", value / 1e6, unit_m);
  if (magnitude < 1e12) return three_figures(value / 1e9, unit_g);
  return three_figures(value / 1e12, unit_t);
}

}  // namespace

std::string format_time_ms(double ms) {
  const double us = ms * 1e3;
  if (std::fabs(us) < 1e3) return three_figures(us, "µs");
  if (std::fabs(ms) < 1e3) return three_figures(ms, "ms");
  return printf_string("%.2f %s", ms / 1e3, "s");
}

std::string format_bytes(double bytes) { return decimal_quantity(bytes, "B", "KB", "MB", "GB", "TB"); }

std::string format_flops(double flops) {
  return decimal_quantity(flops, "FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP");
}

std::string format_bandwidth(double gbs) { return printf_string("%.0f %s", gbs, "GB/s"); }

std::string format_tflops(double tflops) { return printf_string("%.1f %s", tflops, "TFLOP/s"); }

std::string format_percent(double fraction) { return printf_string("%.0f%s", fraction * 100.0, "%"); }

std::string format_speedup(double speedup) {
  if (speedup < 10.0) return printf_string("%.2f%s", speedup, "×");
  if (speedup < 100.0) return printf_string("%.1f%s", speedup, "×");
  return printf_string("%.0f%s", speedup, "×");
}

std::string count_of(long long count, const std::string& singular, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

}  // namespace hiera::engine::plan
