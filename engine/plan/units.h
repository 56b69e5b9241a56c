#pragma once
// How the planner writes quantities in its reasons: times, bytes, flops,
// rates, percentages and speedups, each short and with three significant
// figures, so that a reason reads like a measurement ("8.0 MB at 4207 GB/s is
// 1.90 µs") and tests can compare reasons exactly.
#include <string>

namespace hiera::engine::plan {

// A time given in milliseconds: "0.0831 µs", "1.90 µs", "12.3 µs", "255 µs",
// "2.13 ms", "23.4 ms", "1.25 s".
std::string format_time_ms(double ms);
// Decimal units: "512 B", "8.2 KB", "8.0 MB", "167.8 MB", "1.07 GB", "12.9 GB".
std::string format_bytes(double bytes);
// "5.2 MFLOP", "47.7 GFLOP", "275 GFLOP", "1.10 TFLOP".
std::string format_flops(double flops);
// "4207 GB/s".
std::string format_bandwidth(double gbs);
// "51.0 TFLOP/s".
std::string format_tflops(double tflops);
// A fraction as a whole percentage: 0.306 -> "31%".
std::string format_percent(double fraction);
// Three figures: "1.02×", "64.6×", "120×".
std::string format_speedup(double speedup);
// "1 launch", "40 launches": a count with its noun, singular or plural.
std::string count_of(long long count, const std::string& singular, const std::string& plural);

}  // namespace hiera::engine::plan
