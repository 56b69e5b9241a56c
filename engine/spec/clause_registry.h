#pragma once
// Every clause a task spec may hold: its family, the values it can take, and
// the check that enforces it. The checks are the worker's verification checks
// (engine/eval/JOB_PROTOCOL.md) and the engine's own acceptance gates (speedup,
// budget, space). A clause that is unknown, or that nothing enforces, is not a
// contract: check_clause refuses it with a SpecError naming it.
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/spec/clause.h"
#include "engine/spec/target_kind.h"

namespace hiera::engine::spec {

struct ClauseInfo {
  std::string_view name;  // "numerics.atol"
  Family family;
  std::string_view enforced_by;      // a name in enforcing_checks(); empty: nothing enforces it
  std::string_view why_unenforced;   // when enforced_by is empty: the reason, for the error
  std::string_view description;      // one line: what the value means
  std::optional<TargetKind> only_for;  // the clause exists for this kind of target only
  // Throws SpecError with the problem ("must be true or false, got 3"), without the clause name.
  void (*validate)(const nlohmann::json& value);
};

// In the order specs list their clauses (by family, then as below).
const std::vector<ClauseInfo>& clause_registry();
const ClauseInfo* find_clause_info(std::string_view name);

// The worker's checks (compile, runtime, shape, dtype, count, values, nan_inf,
// unwritten_output, input_mutation, determinism, static, speed_of_light,
// timeout) and the engine's gates: speedup (a result must beat the reference by
// the target), budget (the optimizer stops at its candidate and time budgets),
// space (the planner proposes only in allowed spaces).
const std::vector<std::string_view>& enforcing_checks();

// The registry entry for a clause that may hold this value in a spec of this
// kind. Throws SpecError naming the clause:
//   "clause 'numerics.ulp' is not a contract: no check enforces it"
//   "clause 'environment.memory_budget_bytes' is not a contract: no check enforces it (<reason>)"
//   "clause 'interface.args' applies to cuda targets only"
//   "clause 'numerics.atol': must be ..., got ..."
const ClauseInfo& check_clause(std::string_view name, const nlohmann::json& value, TargetKind kind);

}  // namespace hiera::engine::spec
