// `hiera optimize` on a CUDA kernel, end to end on the GPU: the real hiera
// executable and worker, and an LLM endpoint on loopback (a real HTTP server
// with scripted replies standing in for a model) proposing one wrong, one
// slower and one correct rewrite of tests/fixtures/optimize/strided_scaled_relu.cu.
// With HIERA_GPU_RESULTS_DIR set (scripts/gpu-check), the run's result JSON and
// report are copied there to be recorded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "http_test_server.h"
#include "scripted_llm.h"
#include "subprocess.h"

namespace {

namespace fs = std::filesystem;
using hiera::testing::read_text;
using nlohmann::json;

const fs::path kFixtures = fs::path(HIERA_SOURCE_DIR) / "tests/fixtures/optimize";

TEST(OptimizeCuda, RejectsTheWrongKernelAndDeliversTheVerifiedFasterOne) {
  const fs::path dir = fs::temp_directory_path() / ("hiera-optimize-gpu-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  hiera::testing::HttpTestServer llm;
  llm.enqueue_json(200, hiera::testing::chat_reply_with_file(kFixtures / "replies/wrong.cu", "cuda", "Coalesced:"));
  llm.enqueue_json(200, hiera::testing::chat_reply_with_file(kFixtures / "replies/slower.cu", "cuda", "Grid-stride:"));
  llm.enqueue_json(200, hiera::testing::chat_reply_with_file(kFixtures / "replies/correct.cu", "cuda", "Vectorised:"));
  std::ofstream(dir / "config.json") << hiera::testing::loopback_llm_config(llm.base_url(), dir / "llm-cache").dump(1);

  const auto run = hiera::testing::run_process(
      {HIERA_BIN, "optimize", (kFixtures / "strided_scaled_relu.cu").string(), "--budget", "3", "--config",
       (dir / "config.json").string(), "--runs-dir", (dir / "runs").string(), "--json", (dir / "result.json").string(),
       "--report", (dir / "report.md").string(), "--quiet"},
      "", std::chrono::minutes(5));
  ASSERT_FALSE(run.timed_out) << run.err;
  if (const char* results = std::getenv("HIERA_GPU_RESULTS_DIR")) {
    fs::create_directories(results);
    fs::copy_file(dir / "result.json", fs::path(results) / "optimize-cuda-result.json", fs::copy_options::overwrite_existing);
    fs::copy_file(dir / "report.md", fs::path(results) / "optimize-cuda-report.md", fs::copy_options::overwrite_existing);
    const json written = json::parse(read_text(dir / "result.json"));
    fs::copy_file(fs::path(written["run_dir"].get<std::string>()) / "run.jsonl", fs::path(results) / "optimize-cuda-run.jsonl",
                  fs::copy_options::overwrite_existing);
  }
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  const json result = json::parse(read_text(dir / "result.json"));
  EXPECT_EQ(result["outcome"], "improved") << result["message"];
  EXPECT_NE(result["gpu"].get<std::string>().find("NVIDIA"), std::string::npos) << result["gpu"];
  ASSERT_EQ(result["attempts"].size(), 3u) << result.dump(1);
  const json& wrong = result["attempts"][0];
  EXPECT_EQ(wrong["verdict"], "failed");
  ASSERT_FALSE(wrong["failures"].empty());
  EXPECT_EQ(wrong["failures"][0].get<std::string>().rfind("unwritten_output: ", 0), 0u) << wrong["failures"][0];
  EXPECT_EQ(result["attempts"][1]["verdict"], "passed");
  EXPECT_LT(result["attempts"][1]["speedup"].get<double>(), 1.0);
  EXPECT_EQ(result["attempts"][2]["verdict"], "passed");
  ASSERT_TRUE(result["best"].is_object());
  EXPECT_EQ(result["best"]["id"], "c3");
  EXPECT_EQ(result["best"]["delivered_source"], read_text(kFixtures / "replies/correct.cu"));
  EXPECT_GT(result["best"]["speedup"].get<double>(), 1.5);
  EXPECT_EQ(result["figures"]["faster"], 1);
  fs::remove_all(dir);
}

}  // namespace
