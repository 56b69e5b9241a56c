#pragma once
// `hiera bench-compare A B`: two `hiera bench` output directories side by
// side (engine/bench/run_comparison.h): each side's wall time and workers,
// the wall-time ratio A/B, and per problem whether the verdicts are identical.
// Prints Markdown, or JSON with --json.
#include <string>

#include <CLI/CLI.hpp>

namespace hiera::cli {

inline constexpr int kCompareIdentical = 0;  // every problem on both sides, verdicts identical
inline constexpr int kCompareUnreadable = 1;
inline constexpr int kCompareUsage = 2;
inline constexpr int kCompareDiffers = 3;    // some verdict differs, or a problem is on one side only

struct BenchCompareArgs {
  std::string a;
  std::string b;
  bool json = false;
};

CLI::App* add_bench_compare_command(CLI::App& app, BenchCompareArgs& args);
int run_bench_compare(const BenchCompareArgs& args);

}  // namespace hiera::cli
