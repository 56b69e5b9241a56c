#pragma once
// A contract-augmented task specification for one optimization target: every
// clause the optimizer and the verifier hold a candidate to, each with where it
// came from and which check enforces it. Serialised as JSON (the report, the
// editor's "show task spec") and as a Markdown table for people.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/size_expression.h"
#include "engine/spec/clause.h"
#include "engine/spec/kernel_contract.h"
#include "engine/spec/target_kind.h"

namespace hiera::engine::spec {

struct TaskSpec {
  std::string target;  // "model.py::Model", "kernels.cu::saxpy"
  TargetKind kind = TargetKind::Pytorch;
  std::vector<Clause> clauses;  // in clause_registry() order, one per name

  const Clause* find(std::string_view name) const;

  // Sets a clause from a source. It replaces a clause of that name from a
  // lower or equal source (which goes to its overrides); against a higher
  // source it loses and only joins that clause's overrides. A tolerance given
  // for some dtypes only ({"float16": 5e-3}) merges over the value it
  // replaces; one with a value for all dtypes (a number, or "*") replaces it
  // whole. Throws SpecError (check_clause) for a clause that is not a contract
  // or a value it cannot take. Returns the clause as it now stands.
  const Clause& apply(const std::string& name, nlohmann::json value, Source source, std::string origin);

  // Typed views; each returns the clause's value, or the stated fallback when the spec lacks it.
  // A tolerance for a dtype: its own entry, else the "*" entry, else nullopt.
  std::optional<double> atol(std::string_view dtype) const;
  std::optional<double> rtol(std::string_view dtype) const;
  std::vector<std::string> allowed_precisions() const;  // numerics.allow; empty
  bool deterministic() const;                           // numerics.deterministic; true
  std::string nan_inf() const;                          // numerics.nan_inf; "propagate"
  bool no_input_mutation() const;                       // invariants.no_input_mutation; true
  bool stateless() const;                               // invariants.stateless; true
  std::vector<std::string> inplace() const;             // interface.inplace; empty
  SizeMap sizes() const;                                // interface.sizes; empty
  SizeMap second_sizes() const;                         // invariants.shape_generality; empty
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> shape_ranges() const;  // interface.shape_range
  std::vector<KernelArg> args() const;                  // interface.args; empty
  std::optional<Launch> launch() const;                 // interface.launch
  // The dtypes of the outputs: CUDA, the types of output and inout arguments;
  // PyTorch, interface.dtypes. Empty when unknown (a module not probed).
  std::vector<std::string> output_dtypes() const;
  std::vector<std::string> spaces() const;     // environment.spaces; empty
  std::vector<std::string> libraries() const;  // environment.libraries; empty
  std::optional<double> target_speedup() const;
  std::optional<std::int64_t> candidate_budget() const;
  std::optional<double> time_budget_s() const;
  std::optional<double> compile_budget_s() const;
  std::optional<double> reference_ms() const;
  std::optional<double> speed_of_light_ms() const;

  // {"target", "kind", "clauses": [{"name", "family", "value", "source", "origin",
  //  "enforced_by"[, "overrides": [{"value", "source", "origin"}]]}]}
  nlohmann::json to_json() const;
  // The inverse of to_json; every clause is checked again against the
  // registry. Throws SpecError naming what is wrong.
  static TaskSpec from_json(const nlohmann::json& value);
  // A table (family, clause, value, source, enforced by), then what each clause overrode.
  std::string to_markdown() const;

  bool operator==(const TaskSpec&) const = default;
};

}  // namespace hiera::engine::spec
