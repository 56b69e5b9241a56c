// EvaluationClient over the real hiera-worker and its Python runner (on the
// CPU): `capture` routed by kind (a CUDA task answers a null graph without a
// GPU, a PyTorch task is traced by the runner) and evaluate's baselines
// reaching the runner. Skipped without a python3 that imports torch.
#ifdef HIERA_HAVE_WORKER
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/eval/evaluation_client.h"
#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace hiera::engine::eval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

// The python3 that imports torch (scripts/find-torch-python), or empty.
std::string torch_python() {
  const auto found =
      hiera::testing::run_process({::hiera::testing::source_dir() + "/scripts/find-torch-python"}, "", 60s);
  std::string path = found.out;
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return found.exit_code == 0 ? path : std::string();
}

const char* kReference = R"PY(
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2.0

def get_inputs():
    return [torch.rand(4, 8)]

def get_init_inputs():
    return [8]
)PY";

const char* kCandidate = R"PY(
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(self.lin(x)).mul(2.0)
)PY";

// One worker (and so one runner) for the suite: starting torch is the slow part.
class EvaluationClientWorkerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string python = torch_python();
    if (python.empty()) return;
    cache_ = new hiera::testing::TempDirectory("hiera-worker-cache-");
    WorkerPoolOptions options;
    options.commands.push_back(
        {::hiera::testing::worker_bin(), "--python", python, "--cache-dir", cache_->path().string()});
    options.handshake_timeout = 60s;
    pool_ = new WorkerPool(options);
  }
  static void TearDownTestSuite() {
    delete pool_;
    delete cache_;
    pool_ = nullptr;
    cache_ = nullptr;
  }
  void SetUp() override {
    if (pool_ == nullptr) GTEST_SKIP() << "no python3 that imports torch";
  }

  static EvaluateOptions slow() {
    EvaluateOptions options;
    options.timeout = 3min;  // the runner's first `import torch` on two loaded cores
    return options;
  }

  static hiera::testing::TempDirectory* cache_;
  static WorkerPool* pool_;
};

hiera::testing::TempDirectory* EvaluationClientWorkerTest::cache_ = nullptr;
WorkerPool* EvaluationClientWorkerTest::pool_ = nullptr;

TEST_F(EvaluationClientWorkerTest, CaptureOfACudaTaskIsANullGraph) {
  EvaluationClient client(*pool_);
  const CaptureResult captured = client.capture(json{{"kind", "cuda"}, {"reference", {{"source", "__global__ void k() {}"}}}});
  ASSERT_TRUE(captured.ok()) << captured.job_failure->message;
  EXPECT_TRUE(captured.graph.is_null());
}

TEST_F(EvaluationClientWorkerTest, CaptureOfAPyTorchTaskTracesTheReference) {
  EvaluationClient client(*pool_);
  const json task = {{"kind", "pytorch"}, {"device", "cpu"}, {"reference", {{"source", kReference}}}};
  const CaptureResult captured = client.capture(task, slow());
  ASSERT_TRUE(captured.ok()) << captured.job_failure->message;
  const json& graph = captured.graph;
  ASSERT_TRUE(graph.is_object()) << graph.dump();
  EXPECT_EQ(graph["method"].get<std::string>(), "fx");
  std::vector<std::string> codes;
  for (const json& node : graph["nodes"]) codes.push_back(node["code"].get<std::string>());
  EXPECT_EQ(codes, (std::vector<std::string>{"x", "self.lin(x)", "torch.relu(lin)", "relu * 2.0", "mul"}));
  // linear 2*4*8*8 + relu 32 + mul 32.
  EXPECT_EQ(graph["total_flops"], 512 + 32 + 32);
  EXPECT_EQ(graph["submodules"]["lin"]["attrs"], (json{{"in_features", 8}, {"out_features", 8}, {"bias", true}}));
}

TEST_F(EvaluationClientWorkerTest, CaptureOfABrokenReferenceIsAJobFailure) {
  EvaluationClient client(*pool_);
  const json task = {{"kind", "pytorch"}, {"device", "cpu"}, {"reference", {{"source", "class Model(:\n"}}}};
  const CaptureResult captured = client.capture(task, slow());
  ASSERT_FALSE(captured.ok());
  EXPECT_THAT(captured.job_failure->message, HasSubstr("the reference could not be loaded: SyntaxError"));
}

TEST_F(EvaluationClientWorkerTest, EvaluateReportsTheCompileBaseline) {
  EvaluationClient client(*pool_);
  const json task = {{"kind", "pytorch"}, {"device", "cpu"}, {"reference", {{"source", kReference}}},
                     {"candidate", {{"source", kCandidate}}}};
  EvaluateOptions options = slow();
  options.timing_trials = 3;
  options.baselines = {"compile"};
  const Evaluation evaluation = client.evaluate(task, options);
  ASSERT_TRUE(evaluation.passed()) << (evaluation.failures.empty() ? "" : evaluation.failures[0].message);
  ASSERT_TRUE(evaluation.timing);
  // torch 1.13 has no torch.compile: the reason; a newer torch: the stats.
  if (evaluation.timing->baselines.count("compile")) {
    EXPECT_EQ(evaluation.timing->baselines.at("compile").trials, 3);
  } else {
    EXPECT_THAT(evaluation.timing->baseline_errors.at("compile"), HasSubstr("torch.compile is not available in torch 1."));
  }
}

}  // namespace
}  // namespace hiera::engine::eval
#endif  // HIERA_HAVE_WORKER
