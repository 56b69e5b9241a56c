#pragma once
// The typed results of the job protocol's methods (JOB_PROTOCOL.md: probe,
// compile, evaluate, profile, capture, deliver), parsed from the worker's JSON, so engine code reads
// fields instead of poking at JSON. Parsing is strict about what a result
// cannot do without (a verdict, an ok flag, a device name) and lenient about
// details (a missing or null optional field stays at its default).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/kernel_profile.h"
#include "engine/eval/lost_attempt.h"
#include "engine/eval/worker_failure.h"

namespace hiera::engine::eval {

// A worker result that does not have the shape JOB_PROTOCOL.md gives it; the
// message names the field.
class MalformedResult : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which worker ran a job, for the report.
struct JobRecord {
  int worker = -1;  // index in the pool; -1 when the job never ran
  std::vector<std::string> worker_command;
  pid_t worker_pid = -1;
  std::chrono::milliseconds queued{0};
  std::chrono::milliseconds ran{0};
  // Runs on workers lost under the job before this one (it was requeued): where else it ran.
  std::vector<LostAttempt> lost;
};

enum class Verdict { Passed, Failed };
const char* to_string(Verdict verdict);

struct CheckFailure {
  // compile, runtime, shape, dtype, count, values, nan_inf, unwritten_output,
  // input_mutation, determinism, static, speed_of_light, timeout; "cancelled"
  // when the caller cancelled the job.
  std::string check;
  std::string message;
};

struct Trial {
  std::int64_t seed = 0;
  std::string distribution;  // uniform, normal, large
  // Size name -> value (CUDA tasks) or input name -> shape (PyTorch tasks).
  std::map<std::string, nlohmann::json> sizes;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  std::int64_t mismatches = 0;
  // Elements beyond the tolerance against the reference's own output that a float64 run of
  // the reference accepted, with the candidate's and the reference's worst error
  // against that run (the Python runner's arbiter); zero and empty when it did not run.
  std::int64_t float64_arbitrated = 0;
  std::optional<double> max_abs_error_float64;
  std::optional<double> reference_error_float64;
};

struct TimingStats {
  double median_ms = 0.0;
  double min_ms = 0.0;
  double p10_ms = 0.0;
  double p90_ms = 0.0;
  int trials = 0;
};

struct Timing {
  TimingStats reference;
  TimingStats candidate;
  double speedup = 0.0;
  // Baselines asked for in EvaluateOptions::baselines ("compile": torch.compile
  // of the reference), timed in the same loop: their stats, or why there are none.
  std::map<std::string, TimingStats> baselines;
  std::map<std::string, std::string> baseline_errors;
};

// KernelBench's own correctness criterion, applied by the worker beside
// hiera's verdict when the job asked for it (params "kernelbench": true):
// seeded torch.rand inputs, `trials` trials, torch.allclose(reference output,
// candidate output, atol, rtol) against the reference's own output.
struct KernelBenchVerdict {
  bool passed = false;
  int trials = 0;
  double atol = 0.0;
  double rtol = 0.0;
  std::optional<double> max_abs_error;  // null when no output could be compared
  std::string message;                  // why it failed, or empty
  bool operator==(const KernelBenchVerdict&) const = default;
};

// One phase of a job as the worker timed it: an entry of a result's "phases_ms".
struct PhaseTime {
  std::string name;  // "verification", "timing", "compile", ...
  double ms = 0.0;
  bool operator==(const PhaseTime&) const = default;
};

// One protection of the process a candidate ran in (a result's "sandbox"):
// "in force ..." or "not in force: <reason>", as the worker worded it.
struct Protection {
  std::string name;   // "network", "dies_with_parent", "unprivileged_user", ...
  std::string state;
  // The runner says "not in force: <why>" of a missing one; one in force is "in force" or its detail
  // (the places hidden, the namespace), as the Python sandbox reports them.
  bool in_force() const { return state.rfind("not in force", 0) != 0; }
  bool operator==(const Protection&) const = default;
};

struct Evaluation {
  Verdict verdict = Verdict::Failed;
  std::vector<CheckFailure> failures;
  std::vector<Trial> trials;
  std::optional<Timing> timing;             // only when verification passed
  std::optional<double> speed_of_light_ms;  // only when verification passed
  // Only when the job asked for it; it never changes `verdict`.
  std::optional<KernelBenchVerdict> kernelbench;
  // The worker's wall time per phase of the job ("phases_ms"), in the order
  // the runner goes through them (phase_order); empty when it sent none.
  std::vector<PhaseTime> phases;
  // What isolated the candidate's process ("sandbox"), by name; empty when the worker sent none.
  std::vector<Protection> sandbox;
  // Set when the job itself failed (timed out, crashed the worker, cancelled,
  // a bad reply): the verdict is then Failed with one failure derived from it.
  std::optional<WorkerFailure> job_failure;
  JobRecord record;
  // Passed, with nothing listed against it: the only state that may become an edit.
  bool passed() const { return verdict == Verdict::Passed && failures.empty() && !job_failure; }
};

struct CompileDiagnostic {
  int line = 0;  // the candidate's own line (the worker subtracts line_offset)
  int column = 0;
  std::string severity;  // error, warning
  std::string message;
};

struct CompileResult {
  bool ok = false;
  bool cache_hit = false;
  std::string key;  // sha256 of source + options + arch + NVRTC version
  std::string log;
  std::vector<CompileDiagnostic> diagnostics;
  double compile_ms = 0.0;
  std::optional<WorkerFailure> job_failure;  // the job failed: ok is false and log holds the reason
  JobRecord record;
};

struct DeviceProbe {
  std::string name;
  std::string cc;
  int sm_count = 0;
  double sm_clock_mhz = 0.0;
  double mem_clock_mhz = 0.0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t smem_per_block_optin = 0;
  std::string driver;
  std::string cuda_runtime;
  double copy_gbs = 0.0;                      // measured copy bandwidth
  std::map<std::string, double> gemm_tflops;  // measured, by dtype: float32, tf32, float16, bfloat16
  bool cached = false;
  std::optional<WorkerFailure> job_failure;
  JobRecord record;
  bool ok() const { return !job_failure; }
};

// The `profile` method's result: the kernels and counters, typed
// (profile_result.h reads them), or why there are none.
struct ProfileResult {
  // Empty when the job failed, or when a kernel or a counter does not have the
  // shape JOB_PROTOCOL.md gives it: `unreadable` then names the field, and the
  // job itself still counts as ok (the planner falls back to one region).
  std::optional<KernelProfile> profile;
  std::string unreadable;
  // The result as the worker sent it, for the records only (the run log,
  // OptimizeResult::reference_profile): engine code reads `profile`.
  nlohmann::json raw;  // {"kernels": [...], "metrics": {...}}
  std::optional<WorkerFailure> job_failure;
  JobRecord record;
  bool ok() const { return !job_failure; }
};

// The `capture` method's result: the reference forward as an op graph, as the
// worker sent it (engine/graph parses it), or why there is none.
struct CaptureResult {
  nlohmann::json graph;  // the Graph object; null for a CUDA task (no module graph)
  std::optional<WorkerFailure> job_failure;
  JobRecord record;
  bool ok() const { return !job_failure; }
};

// The `deliver` method's result: the standalone form of a candidate and its
// verification in that form.
struct Delivery {
  std::string source;      // empty when the conversion failed (the evaluation says why)
  Evaluation evaluation;
};

// Each throws MalformedResult. A deliver result's "kernelbench" may sit beside
// its "evaluation" or inside it; it lands in Delivery::evaluation.kernelbench.
Evaluation parse_evaluation(const nlohmann::json& result);
CompileResult parse_compile_result(const nlohmann::json& result);
DeviceProbe parse_probe(const nlohmann::json& result);
ProfileResult parse_profile(const nlohmann::json& result);
CaptureResult parse_capture(const nlohmann::json& result);
Delivery parse_delivery(const nlohmann::json& result);
// A "phases_ms" object as a list in the order the worker goes through its
// phases: the native evaluator's compile, verify, time, then the Python
// runner's reference_load ... kernelbench; a name neither knows comes after
// those, by name (JSON objects arrive unordered). A value that is not a number
// of milliseconds (a string, null, a negative number) is left out, and
// anything but an object gives no phases: timing is a detail, never a reason
// to reject a verdict.
std::vector<PhaseTime> parse_phases(const nlohmann::json& phases_ms);
// A "sandbox" object as protections sorted by name; a value that is not a
// string is kept as its JSON text, anything but an object gives none (like
// the phases, a detail that never changes a verdict).
std::vector<Protection> parse_sandbox(const nlohmann::json& sandbox);
// Sorts phases into that order (unknown names last, by name).
void order_phases(std::vector<PhaseTime>& phases);

// The "kernelbench" object; `where` names it in errors ("evaluation.kernelbench").
KernelBenchVerdict parse_kernelbench(const nlohmann::json& value, const std::string& where);

}  // namespace hiera::engine::eval
