// Resuming: a stored result stands for this run only with the same commit,
// GPU, source and options; anything else runs the problem again, saying why.
#include "engine/bench/result_store.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_directory.h"

namespace hiera::engine::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const Problem kProblem{"relu", "fusion", "/suite/fusion/relu.py"};

Provenance current() { return {"NVIDIA H200", "abc123", "sha-of-source", {{"budget", 8}, {"baselines", {"eager"}}}}; }

ProblemResult stored() {
  ProblemResult r;
  r.name = "relu";
  r.group = "fusion";
  r.file = "/suite/fusion/relu.py";
  r.correct = true;
  r.speedup_eager = 1.25;
  r.outcome = "improved";
  const Provenance p = current();
  r.gpu = p.gpu;
  r.commit = p.commit;
  r.source_sha256 = p.source_sha256;
  r.options = p.options;
  return r;
}

TEST(ResumeDecision, ReusesOnlyWhenCommitGpuSourceAndOptionsAllMatch) {
  const StoredResult same = reuse_decision(stored(), kProblem, current());
  ASSERT_TRUE(same.reusable);
  EXPECT_EQ(*same.reusable, stored());

  ProblemResult r = stored();
  r.commit = "def456";
  EXPECT_EQ(reuse_decision(r, kProblem, current()).reason, "another hiera commit (def456)");
  EXPECT_FALSE(reuse_decision(r, kProblem, current()).reusable);
  r = stored();
  r.gpu = "cpu";
  EXPECT_EQ(reuse_decision(r, kProblem, current()).reason, "measured on another GPU (cpu)");
  r = stored();
  r.source_sha256 = "edited";
  EXPECT_EQ(reuse_decision(r, kProblem, current()).reason, "the problem's source changed");
  r = stored();
  r.options["budget"] = 16;
  EXPECT_EQ(reuse_decision(r, kProblem, current()).reason, "other options");
  EXPECT_FALSE(reuse_decision(r, kProblem, current()).reusable);
  r = stored();
  r.group = "norm";
  EXPECT_EQ(reuse_decision(r, kProblem, current()).reason, "it records another problem (norm/relu)");
}

TEST(ResumeDecision, AnErrorResultIsReusedLikeAnyOther) {
  // A problem whose reference fails fails again with the same code: re-running it costs time, not truth.
  ProblemResult r = stored();
  r.outcome = "error";
  r.correct = false;
  r.error = "the reference does not run";
  EXPECT_TRUE(reuse_decision(r, kProblem, current()).reusable);
}

TEST(ResultStoreFiles, SavesWholeFilesAndLoadsThemForTheSameProblem) {
  hiera::testing::TempDirectory out("hiera-bench-store-");
  const ResultStore store(out.path());
  EXPECT_EQ(store.path(kProblem), out.path() / "problems" / "fusion" / "relu.json");
  EXPECT_EQ(store.load(kProblem, current()).reason, "no earlier result");

  store.save(stored());
  ASSERT_TRUE(fs::exists(store.path(kProblem)));
  // Only the file itself: the temporary it was written through is gone.
  EXPECT_EQ(std::distance(fs::directory_iterator(out.path() / "problems" / "fusion"), fs::directory_iterator()), 1);
  const StoredResult loaded = store.load(kProblem, current());
  ASSERT_TRUE(loaded.reusable) << loaded.reason;
  EXPECT_EQ(*loaded.reusable, stored());

  Provenance other = current();
  other.commit = "new";
  EXPECT_FALSE(store.load(kProblem, other).reusable);
}

TEST(ResultStoreFiles, ADamagedFileIsNotTrustedAndSaysWhy) {
  hiera::testing::TempDirectory out("hiera-bench-store-");
  const ResultStore store(out.path());
  fs::create_directories(store.path(kProblem).parent_path());
  std::ofstream(store.path(kProblem)) << "{\"name\": \"relu\", \"group\": ";  // cut short
  const StoredResult loaded = store.load(kProblem, current());
  EXPECT_FALSE(loaded.reusable);
  EXPECT_EQ(loaded.reason.rfind("the earlier result " + store.path(kProblem).string() + " is not readable (", 0), 0u)
      << loaded.reason;
}

}  // namespace
}  // namespace hiera::engine::bench
