#pragma once
// The knowledge proposer tests' inputs: reference modules and their op graphs
// as the runner's real `capture` job wrote them (tests/fixtures/graphs; run
// regenerate.py there after changing a reference).
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/graph/op_graph.h"
#include "engine/propose/proposer.h"
#include "build_paths.h"

namespace hiera::testing {

inline std::string graph_fixture_path(const std::string& name, const std::string& extension) {
  return ::hiera::testing::source_dir() + "/tests/fixtures/graphs/" + name + extension;
}

inline std::string read_graph_fixture_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The reference module's source (<name>.py).
inline std::string reference_source(const std::string& name) {
  return read_graph_fixture_file(graph_fixture_path(name, ".py"));
}

// The captured graph's JSON (<name>.json).
inline nlohmann::json graph_json(const std::string& name) {
  return nlohmann::json::parse(read_graph_fixture_file(graph_fixture_path(name, ".json")));
}

inline engine::graph::OpGraph captured_graph(const std::string& name) {
  return engine::graph::parse_op_graph(graph_json(name));
}

// A node to change in a test's copy of a graph (the tests' "what if the module differed").
inline engine::graph::Node& node_named(engine::graph::OpGraph& graph, const std::string& name) {
  for (auto& node : graph.nodes) {
    if (node.name == name) return node;
  }
  throw std::runtime_error("no node " + name);
}

// A plan step of the fixture's module in `space`, asking for `count` candidates;
// request.graph is set by whoever proposes (the Step may move).
struct ProposalStep {
  engine::graph::OpGraph graph;
  engine::propose::ProposalRequest request;
};

inline ProposalStep proposal_step(const std::string& fixture, engine::knowledge::Space space, int count) {
  ProposalStep s{captured_graph(fixture), {}};
  s.request.task_name = fixture + ".py::Model";
  s.request.space = space;
  s.request.region = "forward";
  s.request.reference_source = reference_source(fixture);
  s.request.current_best_source = s.request.reference_source;
  s.request.count = count;
  return s;
}

}  // namespace hiera::testing
