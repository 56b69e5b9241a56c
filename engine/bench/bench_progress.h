#pragma once
// What a bench run reports while it goes, for whoever shows it (the
// terminal's progress line, a test): the suite's counts and the latest step
// of whichever problem spoke last (problems run concurrently).
#include <functional>
#include <string>

#include "engine/optimize/optimize_progress.h"

namespace hiera::engine::bench {

struct BenchProgress {
  int total = 0;     // problems selected
  int finished = 0;  // done, reused ones included
  int reused = 0;    // taken from an earlier run
  int correct = 0;   // of the finished
  int running = 0;   // being optimized now
  std::string problem;                 // Problem::id() of the problem this update is about; empty: the suite
  // Its optimizer's latest step; bench's own phases: "probe" (the suite's
  // start), "reused", "measure" (the side-by-side job), "done".
  optimize::OptimizeProgress step;
};

using BenchProgressCallback = std::function<void(const BenchProgress&)>;

}  // namespace hiera::engine::bench
