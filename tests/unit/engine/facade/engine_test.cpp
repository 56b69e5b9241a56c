// The engine facade against hiera-fake-worker (real worker processes, the job
// protocol, canned measurements): one pool for many runs, restarted only when
// the workers change, and the task spec without any worker.
#include "engine/facade/engine.h"

#include <gtest/gtest.h>

#include <atomic>

#include "temp_directory.h"
#include "annotated_kernel.h"
#include "build_paths.h"

namespace hiera::engine::facade {
namespace {

using nlohmann::json;

const std::string kKernel = hiera::testing::annotated_scale_kernel();

class EngineTest : public ::testing::Test {
 protected:
  hiera::testing::TempDirectory dir{"hiera-engine-"};
  Engine engine{EngineOptions{::hiera::testing::hiera_bin(), "hiera test", dir.path() / "runs"}};

  EngineConfig config(std::vector<std::string> worker) {
    EngineConfig c;
    c.args.worker_argv = {std::move(worker)};
    c.args.llm = "none";
    c.args.budget = 1;
    c.args.runs_dir = (dir.path() / "runs").string();
    return c;
  }
  RunRequest measure_request() {
    RunRequest r;
    r.target = optimize::make_target(dir.path() / "scale.cu", "scale", kKernel);
    r.measure_only = true;
    return r;
  }
};

TEST_F(EngineTest, RunsShareOnePoolStartedByTheFirst) {
  const auto c = config({::hiera::testing::fake_worker_bin()});
  engine.configure(c);
  EXPECT_EQ(engine.pools_started(), 0);  // lazily: configuring starts no worker
  EXPECT_EQ(engine.worker_count(), 1u);
  std::atomic<int> reports{0};
  const auto first = engine.run(c, measure_request(), [&](const optimize::OptimizeProgress&) { ++reports; });
  ASSERT_TRUE(first.reference_timing) << first.message;
  EXPECT_GT(reports.load(), 0);
  const auto second = engine.run(c, measure_request());
  ASSERT_TRUE(second.reference_timing) << second.message;
  EXPECT_EQ(engine.pools_started(), 1);
  EXPECT_EQ(second.gpu, "Fake GPU");
}

TEST_F(EngineTest, OtherSettingsKeepThePoolOtherWorkersRestartIt) {
  auto c = config({::hiera::testing::fake_worker_bin()});
  ASSERT_TRUE(engine.run(c, measure_request()).reference_timing);
  c.args.budget = 2;  // not the workers: the same pool
  ASSERT_TRUE(engine.run(c, measure_request()).reference_timing);
  EXPECT_EQ(engine.pools_started(), 1);
  EXPECT_EQ(engine.default_options().budget, 2);
  auto other = config({::hiera::testing::fake_worker_bin(), "--candidate-ms", "0.05"});
  ASSERT_TRUE(engine.run(other, measure_request()).reference_timing);
  EXPECT_EQ(engine.pools_started(), 2);
  engine.shutdown();  // the next run starts a new one
  ASSERT_TRUE(engine.run(other, measure_request()).reference_timing);
  EXPECT_EQ(engine.pools_started(), 3);
}

TEST_F(EngineTest, ABadConfigurationThrowsAndKeepsTheCurrentOne) {
  engine.configure(config({::hiera::testing::fake_worker_bin()}));
  auto bad = config({::hiera::testing::fake_worker_bin()});
  bad.args.llm = "no-such-endpoint";
  EXPECT_THROW(engine.configure(bad), std::runtime_error);
  EXPECT_TRUE(engine.configured());
  EXPECT_EQ(engine.worker_count(), 1u);
}

TEST_F(EngineTest, NotConfiguredIsALogicError) {
  EXPECT_FALSE(engine.configured());
  EXPECT_THROW(engine.default_options(), std::logic_error);
  EXPECT_THROW(engine.optimize({}), std::logic_error);
}

TEST_F(EngineTest, ShowSpecNeedsNoWorker) {
  const auto target = optimize::make_target(dir.path() / "scale.cu", "scale", kKernel);
  const SpecPage page = Engine::show_spec(target, json::object());
  EXPECT_TRUE(page.ok());
  EXPECT_EQ(page.markdown.rfind("# Task spec: scale.cu::scale\n\n", 0), 0u) << page.markdown;
  const SpecPage broken = Engine::show_spec(optimize::make_target(dir.path() / "scale.cu", "scale",
                                                                  "// hiera: arg x inptu float32[N]\n" + kKernel),
                                            json::object());
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.markdown.find("## Problems"), std::string::npos);
  EXPECT_EQ(engine.pools_started(), 0);
}

}  // namespace
}  // namespace hiera::engine::facade
