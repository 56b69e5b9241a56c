#pragma once
// Builds the task spec of one target from its four sources, in order of
// precedence: built-in defaults < configuration (the user's hiera settings) <
// facts from probing the reference on a worker < `hiera:` annotations in the
// source. Each clause keeps where it came from and what it overrode. Every
// problem is returned, not just the first: annotation errors with their line
// and column, settings that are not contracts, malformed probe facts, and an
// incomplete or inconsistent contract (a CUDA target's launch contract above all).
#include <climits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/spec/target_kind.h"
#include "engine/spec/task_spec.h"

namespace hiera::engine::spec {

struct SpecInputs {
  std::string target;  // "model.py::Model", "kernels.cu::saxpy" (the kernel's name after "::")
  TargetKind kind = TargetKind::Pytorch;
  std::string source;  // the whole file
  // The target's lines (1-based, inclusive): annotations outside them belong to something else.
  int first_line = 1;
  int last_line = INT_MAX;
  // The hiera settings object, as the editor sends it. Read: "numerics",
  // "invariants", "interface", "performance", "environment" (KEY: the clause
  // SECTION.KEY), "budget" {"candidates", "minutes", "time_s", "compile_s"},
  // "spaces", "libraries", "target_speedup". Other keys belong to other parts
  // of hiera and are ignored; a null value means "not set".
  nlohmann::json configuration = nlohmann::json::object();
  // Facts from running the reference on a worker; absent before the first run:
  // {"device": "NVIDIA H200",
  //  "inputs": [{"shape": [16, 1024], "dtype": "float32"}], "outputs": [...same...],
  //  "sizes": {"batch_size": 16}, "reference_ms": 0.12, "regions": [{"name": ..., ...}],
  //  "speed_of_light_ms": 0.05, "deterministic": true, "inplace": ["x"], "nan_inf": false}
  // ("inplace": inputs the reference itself writes; "nan_inf": whether its outputs hold NaN/Inf.)
  std::optional<nlohmann::json> probe;
};

struct SpecProblem {
  int line = 0;  // annotations: 1-based position of the offending token; otherwise 0
  int column = 0;
  // Annotation problems as the parser words them; the others start with where:
  // "settings: hiera.numerics.ulp: ...", "probe: ...", "launch contract: ...", "contract: ...".
  std::string message;
  std::string to_string() const;  // "line 3, column 9: <message>", or the message
  bool operator==(const SpecProblem&) const = default;
};

struct SpecBuildResult {
  TaskSpec spec;  // built as far as it could be, problems or not
  std::vector<SpecProblem> problems;
  bool ok() const { return problems.empty(); }
};

SpecBuildResult build_spec(const SpecInputs& inputs);

// The kernel or module name of a target: what follows the first "::" ("saxpy").
std::string target_symbol(const std::string& target);

}  // namespace hiera::engine::spec
