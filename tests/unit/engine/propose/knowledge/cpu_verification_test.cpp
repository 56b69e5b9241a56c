// The knowledge proposer's candidates, run for real: for small modules the
// reference and each candidate go to a temporary directory and a python3
// with torch compares ModelNew (after load_state_dict of the reference's
// weights) with Model on the CPU, and runs the runner's static checks on the
// candidate (compare_candidate.py). Skipped where no python3 imports torch.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/propose/knowledge/knowledge_proposer.h"
#include "graph_fixtures.h"
#include "subprocess.h"
#include "temp_directory.h"

namespace {

using namespace hiera::engine;
using namespace hiera::engine::propose::knowledge_proposer;

std::string torch_python() {
  const auto found = hiera::testing::run_process({std::string(HIERA_SOURCE_DIR) + "/scripts/find-torch-python"}, "",
                                                 std::chrono::seconds(60));
  if (found.exit_code != 0) return {};
  std::string path = found.out;
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

struct Case {
  const char* fixture;
  knowledge::Space space;
  int count;
  std::size_t expected;  // candidates the proposer offers for it
};

TEST(KnowledgeProposerOnCpu, CandidatesComputeWhatTheReferenceComputes) {
  const std::string python = torch_python();
  if (python.empty()) GTEST_SKIP() << "no python3 that imports torch (scripts/find-torch-python found none)";
  const std::vector<Case> cases = {
      {"identity_ops", knowledge::Space::S1, 2, 2},   {"casts", knowledge::Space::S1, 2, 2},
      {"reductions", knowledge::Space::S1, 2, 2},     {"structured_matmul", knowledge::Space::S1, 2, 2},
      {"linear_bias", knowledge::Space::S1, 2, 2},    {"attention", knowledge::Space::S1, 1, 1},
      {"activations", knowledge::Space::S1, 3, 3},    {"conv_stack", knowledge::Space::S2, 3, 3},
      {"mlp_epilogue", knowledge::Space::S2, 3, 3},   {"batched_loop", knowledge::Space::S2, 2, 2},
      {"data_dependent", knowledge::Space::S2, 1, 1},
  };
  hiera::testing::TempDirectory dir("hiera-knowledge-cpu-");
  std::vector<std::string> argv{
      python, std::string(HIERA_SOURCE_DIR) + "/tests/unit/engine/propose/knowledge/compare_candidate.py"};
  std::vector<std::string> labels;
  KnowledgeProposer proposer(nullptr);
  for (const auto& c : cases) {
    const auto graph = hiera::testing::captured_graph(c.fixture);
    propose::ProposalRequest request;
    request.space = c.space;
    request.count = c.count;
    request.graph = &graph;
    request.reference_source = hiera::testing::reference_source(c.fixture);
    const auto candidates = proposer.propose(request, {});
    ASSERT_EQ(candidates.size(), c.expected) << c.fixture;
    const auto reference = dir.path() / (std::string(c.fixture) + "_reference.py");
    std::ofstream(reference) << request.reference_source;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      ASSERT_FALSE(candidates[i].rejected.has_value()) << c.fixture << ": " << *candidates[i].rejected;
      const auto path = dir.path() / (std::string(c.fixture) + "_candidate" + std::to_string(i) + ".py");
      std::ofstream(path) << candidates[i].source;
      argv.push_back(reference.string() + "=" + path.string());
      labels.push_back(std::string(c.fixture) + " #" + std::to_string(i) + " (" + candidates[i].notes + ")");
    }
  }
  const auto run = hiera::testing::run_process(argv, "", std::chrono::seconds(240));
  ASSERT_FALSE(run.timed_out);
  std::vector<nlohmann::json> results;
  std::size_t start = 0;
  while (start < run.out.size()) {
    const std::size_t end = run.out.find('\n', start);
    results.push_back(nlohmann::json::parse(run.out.substr(start, end - start)));
    start = end == std::string::npos ? run.out.size() : end + 1;
  }
  ASSERT_EQ(results.size(), labels.size()) << run.err;
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i]["ok"].get<bool>()) << labels[i] << ": " << results[i].dump();
  }
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace
