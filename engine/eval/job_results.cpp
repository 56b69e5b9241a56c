#include "engine/eval/job_results.h"

#include <algorithm>
#include <cmath>

#include "engine/eval/profile_result.h"

namespace hiera::engine::eval {

using nlohmann::json;

namespace {

[[noreturn]] void malformed(const std::string& what) { throw MalformedResult(what); }

const json* field(const json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

void require_object(const json& value, const std::string& what) {
  if (!value.is_object()) malformed(what + " must be an object, got " + value.type_name());
}

std::string get_string(const json& object, const char* name, const std::string& where, bool required = false) {
  const json* value = field(object, name);
  if (!value) {
    if (required) malformed(where + "." + name + " is missing");
    return {};
  }
  if (!value->is_string()) malformed(where + "." + name + " must be a string");
  return value->get<std::string>();
}

double get_number(const json& object, const char* name, const std::string& where) {
  const json* value = field(object, name);
  if (!value) return 0.0;
  if (!value->is_number()) malformed(where + "." + name + " must be a number");
  return value->get<double>();
}

std::int64_t get_integer(const json& object, const char* name, const std::string& where) {
  const json* value = field(object, name);
  if (!value) return 0;
  if (value->is_number_integer()) return value->get<std::int64_t>();
  // Counts that went through a float on the Python side arrive as 5.0. (The
  // range check comes first: casting an out-of-range double is undefined.)
  if (value->is_number_float()) {
    const double number = value->get<double>();
    if (std::abs(number) < 9.0e18 && number == std::trunc(number)) return static_cast<std::int64_t>(number);
  }
  malformed(where + "." + name + " must be an integer");
}

bool get_bool(const json& object, const char* name, const std::string& where, bool required = false) {
  const json* value = field(object, name);
  if (!value) {
    if (required) malformed(where + "." + name + " is missing");
    return false;
  }
  if (!value->is_boolean()) malformed(where + "." + name + " must be true or false");
  return value->get<bool>();
}

// Driver and runtime versions: a string ("12.4") or a number (12040) depending on who reports them.
std::string get_version(const json& object, const char* name) {
  const json* value = field(object, name);
  if (!value) return {};
  return value->is_string() ? value->get<std::string>() : value->dump();
}

TimingStats parse_stats(const json& value, const std::string& where) {
  require_object(value, where);
  TimingStats stats;
  stats.median_ms = get_number(value, "median_ms", where);
  stats.min_ms = get_number(value, "min_ms", where);
  stats.p10_ms = get_number(value, "p10_ms", where);
  stats.p90_ms = get_number(value, "p90_ms", where);
  stats.trials = static_cast<int>(get_integer(value, "trials", where));
  return stats;
}

}  // namespace

const char* to_string(Verdict verdict) { return verdict == Verdict::Passed ? "passed" : "failed"; }

Evaluation parse_evaluation(const json& result) {
  require_object(result, "evaluation");
  Evaluation evaluation;
  const std::string verdict = get_string(result, "verdict", "evaluation", true);
  if (verdict == "passed") {
    evaluation.verdict = Verdict::Passed;
  } else if (verdict == "failed") {
    evaluation.verdict = Verdict::Failed;
  } else {
    malformed("evaluation.verdict must be \"passed\" or \"failed\", got \"" + verdict + "\"");
  }
  if (const json* failures = field(result, "failures")) {
    if (!failures->is_array()) malformed("evaluation.failures must be an array");
    for (std::size_t i = 0; i < failures->size(); ++i) {
      const std::string where = "evaluation.failures[" + std::to_string(i) + "]";
      const json& item = (*failures)[i];
      require_object(item, where);
      evaluation.failures.push_back(
          CheckFailure{get_string(item, "check", where, true), get_string(item, "message", where)});
    }
  }
  if (const json* trials = field(result, "trials")) {
    if (!trials->is_array()) malformed("evaluation.trials must be an array");
    for (std::size_t i = 0; i < trials->size(); ++i) {
      const std::string where = "evaluation.trials[" + std::to_string(i) + "]";
      const json& item = (*trials)[i];
      require_object(item, where);
      Trial trial;
      trial.seed = get_integer(item, "seed", where);
      trial.distribution = get_string(item, "distribution", where);
      if (const json* sizes = field(item, "sizes")) {
        require_object(*sizes, where + ".sizes");
        for (const auto& [name, size] : sizes->items()) {
          // A kernel's size names map to integers, a module's inputs to their shapes.
          const bool shape = size.is_array() && std::all_of(size.begin(), size.end(), [](const json& d) { return d.is_number_integer(); });
          if (!size.is_number_integer() && !shape) malformed(where + ".sizes." + name + " must be an integer or a shape");
          trial.sizes[name] = size;
        }
      }
      trial.max_abs_error = get_number(item, "max_abs_error", where);
      trial.max_rel_error = get_number(item, "max_rel_error", where);
      trial.mismatches = get_integer(item, "mismatches", where);
      if (field(item, "float64_arbitrated")) trial.float64_arbitrated = get_integer(item, "float64_arbitrated", where);
      if (field(item, "max_abs_error_float64")) trial.max_abs_error_float64 = get_number(item, "max_abs_error_float64", where);
      if (field(item, "reference_error_float64")) {
        trial.reference_error_float64 = get_number(item, "reference_error_float64", where);
      }
      evaluation.trials.push_back(std::move(trial));
    }
  }
  if (const json* timing = field(result, "timing")) {
    require_object(*timing, "evaluation.timing");
    Timing t;
    if (const json* reference = field(*timing, "reference")) t.reference = parse_stats(*reference, "evaluation.timing.reference");
    if (const json* candidate = field(*timing, "candidate")) t.candidate = parse_stats(*candidate, "evaluation.timing.candidate");
    t.speedup = get_number(*timing, "speedup", "evaluation.timing");
    if (const json* baselines = field(*timing, "baselines")) {
      require_object(*baselines, "evaluation.timing.baselines");
      for (const auto& [name, stats] : baselines->items()) {
        t.baselines[name] = parse_stats(stats, "evaluation.timing.baselines." + name);
      }
    }
    if (const json* errors = field(*timing, "baseline_errors")) {
      require_object(*errors, "evaluation.timing.baseline_errors");
      for (const auto& [name, reason] : errors->items()) {
        if (!reason.is_string()) malformed("evaluation.timing.baseline_errors." + name + " must be a string");
        t.baseline_errors[name] = reason.get<std::string>();
      }
    }
    evaluation.timing = t;
  }
  if (field(result, "speed_of_light_ms")) {
    evaluation.speed_of_light_ms = get_number(result, "speed_of_light_ms", "evaluation");
  }
  if (const json* kernelbench = field(result, "kernelbench")) {
    evaluation.kernelbench = parse_kernelbench(*kernelbench, "evaluation.kernelbench");
  }
  if (const json* phases = field(result, "phases_ms")) evaluation.phases = parse_phases(*phases);
  if (const json* sandbox = field(result, "sandbox")) evaluation.sandbox = parse_sandbox(*sandbox);
  return evaluation;
}

std::vector<Protection> parse_sandbox(const json& sandbox) {
  std::vector<Protection> out;
  if (!sandbox.is_object()) return out;
  for (const auto& [name, state] : sandbox.items()) {  // nlohmann's object iterates in key order
    out.push_back(Protection{name, state.is_string() ? state.get<std::string>() : state.dump()});
  }
  return out;
}

void order_phases(std::vector<PhaseTime>& phases) {
  // The workers' phases in the order they run (native_evaluator.cpp, hiera_runner/evaluate.py).
  static const std::vector<std::string> kOrder = {"compile",        "verify",          "time",
                                                  "reference_load", "candidate_start", "calibration",
                                                  "candidate_load", "second_shape",    "verification",
                                                  "baselines",      "timing",          "kernelbench"};
  const auto rank = [&](const PhaseTime& p) { return std::find(kOrder.begin(), kOrder.end(), p.name) - kOrder.begin(); };
  std::stable_sort(phases.begin(), phases.end(), [&](const PhaseTime& a, const PhaseTime& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : ra == static_cast<std::ptrdiff_t>(kOrder.size()) && a.name < b.name;
  });
}

std::vector<PhaseTime> parse_phases(const json& phases_ms) {
  std::vector<PhaseTime> phases;
  if (!phases_ms.is_object()) return phases;
  for (const auto& [name, ms] : phases_ms.items()) {
    if (!ms.is_number() || !(ms.get<double>() >= 0.0)) continue;
    phases.push_back(PhaseTime{name, ms.get<double>()});
  }
  order_phases(phases);
  return phases;
}

KernelBenchVerdict parse_kernelbench(const json& value, const std::string& where) {
  require_object(value, where);
  KernelBenchVerdict verdict;
  // Strict where the verdict itself is concerned: a criterion without its verdict is no criterion.
  verdict.passed = get_bool(value, "passed", where, true);
  verdict.trials = static_cast<int>(get_integer(value, "trials", where));
  verdict.atol = get_number(value, "atol", where);
  verdict.rtol = get_number(value, "rtol", where);
  if (field(value, "max_abs_error")) verdict.max_abs_error = get_number(value, "max_abs_error", where);
  verdict.message = get_string(value, "message", where);
  return verdict;
}

CompileResult parse_compile_result(const json& result) {
  require_object(result, "compile result");
  CompileResult compiled;
  compiled.ok = get_bool(result, "ok", "compile", true);
  compiled.cache_hit = get_bool(result, "cache_hit", "compile");
  compiled.key = get_string(result, "key", "compile");
  compiled.log = get_string(result, "log", "compile");
  compiled.compile_ms = get_number(result, "compile_ms", "compile");
  if (const json* diagnostics = field(result, "diagnostics")) {
    if (!diagnostics->is_array()) malformed("compile.diagnostics must be an array");
    for (std::size_t i = 0; i < diagnostics->size(); ++i) {
      const std::string where = "compile.diagnostics[" + std::to_string(i) + "]";
      const json& item = (*diagnostics)[i];
      require_object(item, where);
      compiled.diagnostics.push_back(CompileDiagnostic{static_cast<int>(get_integer(item, "line", where)),
                                                       static_cast<int>(get_integer(item, "column", where)),
                                                       get_string(item, "severity", where),
                                                       get_string(item, "message", where)});
    }
  }
  return compiled;
}

DeviceProbe parse_probe(const json& result) {
  require_object(result, "probe");
  DeviceProbe probe;
  probe.name = get_string(result, "name", "probe", true);
  probe.cc = get_string(result, "cc", "probe");
  probe.sm_count = static_cast<int>(get_integer(result, "sm_count", "probe"));
  probe.sm_clock_mhz = get_number(result, "sm_clock_mhz", "probe");
  probe.mem_clock_mhz = get_number(result, "mem_clock_mhz", "probe");
  probe.memory_bytes = get_integer(result, "memory_bytes", "probe");
  probe.l2_bytes = get_integer(result, "l2_bytes", "probe");
  probe.smem_per_block_optin = get_integer(result, "smem_per_block_optin", "probe");
  probe.driver = get_version(result, "driver");
  probe.cuda_runtime = get_version(result, "cuda_runtime");
  probe.cached = get_bool(result, "cached", "probe");
  if (const json* measured = field(result, "measured")) {
    require_object(*measured, "probe.measured");
    probe.copy_gbs = get_number(*measured, "copy_gbs", "probe.measured");
    if (const json* gemm = field(*measured, "gemm_tflops")) {
      require_object(*gemm, "probe.measured.gemm_tflops");
      for (const auto& [dtype, tflops] : gemm->items()) {
        if (tflops.is_null()) continue;  // not measured on this device
        if (!tflops.is_number()) malformed("probe.measured.gemm_tflops." + dtype + " must be a number");
        probe.gemm_tflops[dtype] = tflops.get<double>();
      }
    }
  }
  return probe;
}

ProfileResult parse_profile(const json& result) {
  require_object(result, "profile");
  if (const json* kernels = field(result, "kernels"); !kernels || !kernels->is_array()) {
    malformed("profile.kernels must be an array");
  }
  ProfileResult profile;
  profile.raw = result;
  try {
    profile.profile = read_kernel_profile(result);
  } catch (const MalformedResult& error) {
    profile.unreadable = error.what();
  }
  return profile;
}

CaptureResult parse_capture(const json& result) {
  require_object(result, "capture");
  const auto graph = result.find("graph");
  if (graph == result.end()) malformed("capture.graph is missing");
  if (!graph->is_null() && !graph->is_object()) {
    malformed("capture.graph must be an object or null, got " + std::string(graph->type_name()));
  }
  return CaptureResult{*graph, std::nullopt, {}};
}

Delivery parse_delivery(const json& result) {
  require_object(result, "deliver");
  Delivery delivery;
  delivery.source = get_string(result, "delivered_source", "deliver");
  const json* evaluation = field(result, "evaluation");
  if (!evaluation) malformed("deliver.evaluation is missing");
  delivery.evaluation = parse_evaluation(*evaluation);
  if (const json* kernelbench = field(result, "kernelbench")) {
    delivery.evaluation.kernelbench = parse_kernelbench(*kernelbench, "deliver.kernelbench");
  }
  return delivery;
}

}  // namespace hiera::engine::eval
