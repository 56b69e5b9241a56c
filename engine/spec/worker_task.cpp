#include "engine/spec/worker_task.h"

#include <algorithm>
#include <cmath>

#include "engine/common/default_tolerance.h"
#include "engine/common/size_expression.h"
#include "engine/spec/spec_builder.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {

using nlohmann::json;

namespace {

json numerics(const TaskSpec& spec, bool pytorch) {
  json out = json::object();
  if (const auto atol = task_tolerance(spec, "numerics.atol")) out["atol"] = *atol;
  if (const auto rtol = task_tolerance(spec, "numerics.rtol")) out["rtol"] = *rtol;
  json allow = spec.allowed_precisions();
  // The PyTorch runner lets a candidate write its inputs when allow has
  // "inplace"; CUDA says so with contract.inout_allowed instead. Either way
  // the worker allows it for every input, not only those interface.inplace names.
  if (pytorch && (!spec.inplace().empty() || !spec.no_input_mutation())) allow.push_back("inplace");
  out["allow"] = allow;
  return out;
}

// flops/bytes for PyTorch: a number, the expression's value at the spec's sizes, or null.
json work_number(const TaskSpec& spec, const char* clause) {
  const Clause* c = spec.find(clause);
  if (!c) return nullptr;
  if (c->value.is_number()) return c->value;
  try {
    return evaluate_size_expression(c->value.get<std::string>(), spec.sizes());
  } catch (const SizeExpressionError&) {
    return nullptr;  // sizes the spec does not know: no bound rather than a wrong one
  }
}

// flops/bytes for CUDA: an integer size expression, or null.
json work_expression(const TaskSpec& spec, const char* clause) {
  const Clause* c = spec.find(clause);
  if (!c) return nullptr;
  if (c->value.is_string()) return c->value;
  if (c->value.is_number_integer()) return c->value.dump();
  return std::to_string(static_cast<long long>(std::llround(c->value.get<double>())));
}

std::string python_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

std::optional<double> task_tolerance(const TaskSpec& spec, const char* clause_name) {
  const Clause* clause = spec.find(clause_name);
  if (!clause) return std::nullopt;
  const auto of = [&](const std::string& dtype) {
    const auto own = clause_name == std::string("numerics.atol") ? spec.atol(dtype) : spec.rtol(dtype);
    return own ? *own : engine::default_tolerance(dtype);
  };
  const std::vector<std::string> dtypes = spec.output_dtypes();
  if (!dtypes.empty()) {
    double loosest = 0.0;
    for (const std::string& dtype : dtypes) loosest = std::max(loosest, of(dtype));
    return loosest;
  }
  if (clause->value.is_number()) return clause->value.get<double>();
  if (clause->source == Source::Default) return std::nullopt;
  double loosest = 0.0;
  for (const auto& [dtype, value] : clause->value.items()) loosest = std::max(loosest, value.get<double>());
  return loosest;
}

std::optional<std::string> second_inputs_expression(const TaskSpec& spec) {
  const SizeMap second = spec.second_sizes();
  if (second.empty()) return std::nullopt;
  std::string set;
  std::string saved;
  for (const auto& [name, size] : second) {
    set += (set.empty() ? "" : ", ") + python_string(name) + ": " + std::to_string(size);
    saved += (saved.empty() ? "" : ", ") + python_string(name) + ": " + name;
  }
  // g is the module's namespace (the one get_inputs reads its sizes from).
  return "(lambda g, saved: (g.update({" + set + "}), get_inputs(), g.update(saved))[1])(globals(), {" + saved + "})";
}

json to_worker_task(const TaskSpec& spec, const std::string& reference_source, const std::string& candidate_source,
                    const CandidateTask& candidate) {
  // Not carried, because the worker checks more than they ask (never less):
  // interface.outputs_compared (every output is compared), numerics.deterministic
  // and invariants.stateless set to false (two runs must still agree, unless
  // the reference itself does not), and the probe's interface clauses (the
  // worker compares against the reference itself).
  if (spec.kind == TargetKind::Pytorch) {
    json second = nullptr;
    if (const auto expression = second_inputs_expression(spec)) second = *expression;
    return {{"kind", "pytorch"},
            {"reference", {{"source", reference_source}}},
            {"candidate", {{"source", candidate_source}}},
            {"numerics", numerics(spec, true)},
            {"second_inputs", second},
            {"device", candidate.device},
            {"flops", work_number(spec, "performance.flops")},
            {"bytes", work_number(spec, "performance.bytes")}};
  }
  const std::vector<KernelArg> args = spec.args();
  const auto launch = spec.launch();
  if (args.empty()) throw SpecError("task spec '" + spec.target + "' has no kernel arguments (interface.args)");
  if (!launch) throw SpecError("task spec '" + spec.target + "' has no launch (interface.launch)");
  const std::string kernel = target_symbol(spec.target);
  json contract = {{"sizes", json::object()}};
  for (const auto& [name, size] : spec.sizes()) contract["sizes"][name] = size;
  if (const SizeMap second = spec.second_sizes(); !second.empty()) {
    contract["second_sizes"] = json::object();
    for (const auto& [name, size] : second) contract["second_sizes"][name] = size;
  }
  contract["args"] = json::array();
  for (const KernelArg& arg : args) contract["args"].push_back(arg.to_json());
  contract["reference_launch"] = launch->to_json();
  contract["candidate_launch"] = (candidate.launch ? *candidate.launch : *launch).to_json();
  contract["flops"] = work_expression(spec, "performance.flops");
  contract["bytes"] = work_expression(spec, "performance.bytes");
  contract["inout_allowed"] = !spec.inplace().empty() || !spec.no_input_mutation();
  return {{"kind", "cuda"},
          {"reference", {{"source", reference_source}, {"kernel", kernel}, {"options", candidate.reference_options}}},
          {"candidate",
           {{"source", candidate_source},
            {"kernel", candidate.kernel.empty() ? kernel : candidate.kernel},
            {"options", candidate.candidate_options}}},
          {"contract", contract},
          {"numerics", numerics(spec, false)}};
}

}  // namespace hiera::engine::spec
