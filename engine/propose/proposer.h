#pragma once
// The one interface every proposer implements: a plan step and what was tried
// so far go in, candidates come out. The LLM proposer (llm_proposer.h) and the
// built-in knowledge proposer plug in here; the refinement loop knows only this.
#include <string>
#include <vector>

#include "engine/common/cancellation.h"
#include "engine/graph/op_graph.h"
#include "engine/knowledge/recipe.h"
#include "engine/propose/candidate.h"

namespace hiera::engine::propose {

enum class Language { Python, Cuda };

struct ProposalRequest {
  std::string task_name;                    // "model.py::Model"
  std::string spec;                         // the task spec as the prompt shows it (TaskSpec::to_markdown)
  Language language = Language::Python;
  std::string gpu;                          // "NVIDIA H200"
  knowledge::Space space = knowledge::Space::S1;
  std::string region;                       // the plan step's region
  std::vector<const knowledge::Recipe*> recipes;  // the plan step's recipes
  std::string reference_source;
  std::string current_best_source;          // the reference until something beats it
  std::string profile;                      // profiling feedback, as text
  std::vector<Attempt> history;             // earlier attempts of this run, oldest first
  int count = 1;                            // how many candidates the step wants now
  // The reference forward as the capture job saw it (PyTorch tasks); null
  // when there is none. The knowledge proposer rewrites it; not owned.
  const graph::OpGraph* graph = nullptr;
  // The contract's numerics.allow ("tf32", "bf16", ...): precision changes a candidate may make.
  std::vector<std::string> allowed_precisions;
  // The workers' torch version ("2.11.0+cu130"); empty when unknown.
  std::string torch_version;
  // The run's candidate budget; 0 when unknown (no limit on what a proposer offers).
  int budget = 0;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual std::string name() const = 0;
  // Whether it rewrites the reference's whole captured op graph (request.graph),
  // fusing across the profile's kernel regions: the planner then puts whole-graph
  // steps before the kernel regions' (plan::lead_with_graph_steps).
  virtual bool proposes_for_graph() const { return false; }
  // Candidates with source set, or with `rejected` set and the reason; never
  // throws for a bad reply. Throws Cancelled when `cancel` fires.
  virtual std::vector<Candidate> propose(const ProposalRequest& request, const CancellationToken& cancel) = 0;
};

}  // namespace hiera::engine::propose
