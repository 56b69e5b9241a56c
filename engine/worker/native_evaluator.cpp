#include "engine/worker/native_evaluator.h"

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <sstream>

#include <cuda_runtime_api.h>

#include "engine/worker/check_kernels.h"
#include "engine/worker/cuda_failure.h"
#include "engine/worker/cuda_task.h"
#include "engine/worker/cupti_range_profiler.h"
#include "engine/worker/cupti_tracer.h"
#include "engine/worker/driver_api.h"
#include "engine/worker/input_generator.h"
#include "engine/worker/kernel_host.h"
#include "engine/worker/kernel_module.h"
#include "engine/worker/kernel_timer.h"
#include "engine/worker/output_checks.h"
#include "protocol/message.h"

namespace hiera::engine::worker {

using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

constexpr int kMinTrials = 5;
constexpr int kMinTimingTrials = 50;
constexpr std::chrono::milliseconds kDefaultLaunchLimit{20000};
// The probed ceilings are achieved rates, below the hardware's peaks: a copy
// reaches ~90% of HBM's peak, an FP32 SGEMM ~75% of the FMA peak. A candidate
// is rejected only when it beats a ceiling by more than that margin.
constexpr double kBandwidthSlack = 0.80;
constexpr double kComputeSlack = 0.70;
// A kernel host creates its CUDA context before it is ready: seconds at most.
constexpr std::chrono::milliseconds kHostReadyLimit{60000};

// A kernel host's failure is the candidate's: classified like a CUDA failure,
// but the worker's own context is untouched, so never "context lost".
template <typename F>
auto in_host(F&& f) {
  try {
    return f();
  } catch (const KernelHostError& e) {
    const auto kind = e.kind() == KernelHostError::Kind::Timeout       ? CudaFailure::Kind::Timeout
                      : e.kind() == KernelHostError::Kind::OutOfMemory ? CudaFailure::Kind::OutOfMemory
                                                                       : CudaFailure::Kind::Runtime;
    throw CudaFailure(kind, e.what(), false);
  }
}

// One kernel-host pool per device, for the life of this process: its spare is
// started from the main thread, where every job runs (die_with_parent needs it).
KernelHostPool& kernel_hosts(int device) {
  static std::map<int, std::unique_ptr<KernelHostPool>> pools;
  auto& pool = pools[device];
  if (!pool) pool = std::make_unique<KernelHostPool>([device] { return KernelHost::start(device); });
  return *pool;
}

// Hands the evaluation's host back to its pool on every path out.
struct HostLease {
  KernelHostPool& pool;
  std::unique_ptr<KernelHost>& host;
  ~HostLease() { pool.give_back(std::move(host)); }
};

// A timed run whose host-reported time cannot be true.
class ImpossibleTiming : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string format_bytes(std::uint64_t bytes) {
  std::ostringstream out;
  out.precision(3);
  out << static_cast<double>(bytes) / 1e9 << " GB";
  return out.str();
}

std::string sizes_text(const SizeEnv& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  return text;
}

json sizes_json(const SizeEnv& sizes) {
  json out = json::object();
  for (const auto& [name, value] : sizes) out[name] = value;
  return out;
}

// One device allocation, freed on every path out.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const std::string& what) : bytes_(bytes) {
    // Zero-element arrays still get a valid pointer to pass.
    const cudaError_t error = cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 256));
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      std::size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      throw CudaFailure(CudaFailure::Kind::OutOfMemory,
                        "out of memory: cannot allocate " + format_bytes(bytes) + " for " + what + " (" +
                            format_bytes(free_bytes) + " free of " + format_bytes(total_bytes) + ")",
                        false);
    }
    check_cuda(error, "allocating " + format_bytes(bytes) + " for " + what);
  }
  ~DeviceBuffer() {
    if (ptr_ && !context_abandoned()) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (ptr_ && !context_abandoned()) cudaFree(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = other.bytes_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  void* ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

void upload(const DeviceBuffer& buffer, const std::vector<std::byte>& host, const std::string& what) {
  if (buffer.bytes() == 0) return;
  check_cuda(cudaMemcpy(buffer.ptr(), host.data(), buffer.bytes(), cudaMemcpyHostToDevice), "copying " + what + " to the GPU");
}

void copy_on_device(const DeviceBuffer& to, const DeviceBuffer& from, const std::string& what) {
  if (to.bytes() == 0) return;
  check_cuda(cudaMemcpy(to.ptr(), from.ptr(), to.bytes(), cudaMemcpyDeviceToDevice), "copying " + what + " on the GPU");
}

void poison(const DeviceBuffer& buffer, ScalarType type, Poison which, const std::string& what) {
  if (buffer.bytes() == 0) return;
  if (is_floating(type)) {
    const auto& api = DriverApi::get();
    const CUresult r = api.memset_d16(reinterpret_cast<CUdeviceptr>(buffer.ptr()), poison_word16(which), buffer.bytes() / 2);
    if (r != CUDA_SUCCESS) throw CudaFailure(CudaFailure::Kind::Runtime, "poisoning " + what + ": " + api.error_text(r), false);
  } else {
    check_cuda(cudaMemset(buffer.ptr(), poison_byte(which), buffer.bytes()), "poisoning " + what);
  }
}

// One argument of one trial: one device copy per side, and what the checks need.
struct ArgState {
  const ContractArg* arg = nullptr;
  std::size_t count = 0;
  std::vector<std::byte> scalar;     // scalars: the value as the kernel receives it
  // Inputs and inouts: the generated data, copied into each side before a run;
  // on the GPU when the trial has check kernels, else on the host (the profile).
  DeviceBuffer initial;
  std::vector<std::byte> initial_host;
  DeviceBuffer reference;
  DeviceBuffer candidate;
  // Compared arguments, with check kernels: the candidate's first run while
  // verifying (the second overwrites `candidate`), then the reference's output
  // for the check after the timed runs (which overwrite `reference`).
  DeviceBuffer saved;
  void* reference_ptr = nullptr;     // the kernel parameters point at these
  void* candidate_ptr = nullptr;
};

// Wall time per phase of one evaluation ("phases_ms"): compile (static checks,
// NVRTC, module loads), verify (the trials), time (timed runs and the check
// after them). The device probe, measured once per cache directory, is none.
class PhaseClock {
 public:
  // Ends the running phase, if any, and starts `phase` (nullptr: none).
  void enter(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    if (current_) ms_[current_] += std::chrono::duration<double, std::milli>(now - started_).count();
    current_ = phase;
    started_ = now;
  }
  // Includes the running phase so far: a result can be returned from any phase.
  json to_json() const {
    std::map<std::string, double> ms = ms_;
    if (current_) ms[current_] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
    return json(ms);
  }

 private:
  std::map<std::string, double> ms_{{"compile", 0.0}, {"verify", 0.0}, {"time", 0.0}};
  const char* current_ = nullptr;
  std::chrono::steady_clock::time_point started_;
};

struct Failure {
  std::string check;
  std::string message;
  json extra = json::object();
};

struct Evaluation {
  std::vector<Failure> failures;
  json trials = json::array();
  std::optional<json> timing;
  std::optional<double> speed_of_light_ms;
  std::optional<json> sandbox;  // the kernel host's protections, as the PyTorch path reports them
  bool restart = false;
  PhaseClock phases;

  void fail(std::string check, std::string message, json extra = json::object()) {
    failures.push_back({std::move(check), std::move(message), std::move(extra)});
  }
  json to_json() const {
    json out;
    out["verdict"] = failures.empty() ? "passed" : "failed";
    json list = json::array();
    for (const auto& f : failures) {
      json item = {{"check", f.check}, {"message", f.message}};
      for (const auto& [key, value] : f.extra.items()) item[key] = value;
      list.push_back(std::move(item));
    }
    out["failures"] = std::move(list);
    out["trials"] = trials;
    if (failures.empty() && timing) out["timing"] = *timing;
    if (failures.empty() && speed_of_light_ms) out["speed_of_light_ms"] = *speed_of_light_ms;
    if (restart) out["restart"] = true;
    if (sandbox) out["sandbox"] = *sandbox;
    out["phases_ms"] = phases.to_json();
    return out;
  }
};

// The buffers and launch parameters of one trial, ready to run either side.
class Trial {
 public:
  // With `checks` (verification) the inputs are generated on the GPU and the
  // trial keeps the device copies the checks compare; without (the profile)
  // they are generated on the host and uploaded.
  Trial(const CudaTask& task, const SizeEnv& sizes, std::uint64_t seed, Distribution distribution,
        const CheckKernels* checks = nullptr)
      : sizes_(sizes), seed_(seed), distribution_(distribution) {
    reference_dims_ = resolve_launch(task.contract.reference_launch, sizes);
    candidate_dims_ = resolve_launch(task.contract.candidate_launch, sizes);
    // Device memory first, all of it: a contract too large for the GPU fails
    // here, before any time goes into its inputs.
    for (const auto& arg : task.contract.args) {
      ArgState& state = args_.emplace_back();
      state.arg = &arg;
      if (!arg.is_array()) {
        state.scalar = scalar_argument(arg, sizes);
        continue;
      }
      state.count = element_count(arg, sizes);
      const std::size_t bytes = byte_count(arg, sizes);
      state.reference = DeviceBuffer(bytes, "'" + arg.name + "' (reference)");
      state.candidate = DeviceBuffer(bytes, "'" + arg.name + "' (candidate)");
      state.reference_ptr = state.reference.ptr();
      state.candidate_ptr = state.candidate.ptr();
      if (checks && is_generated(arg)) state.initial = DeviceBuffer(bytes, "'" + arg.name + "' (generated inputs)");
      if (checks && arg.is_compared()) state.saved = DeviceBuffer(bytes, "'" + arg.name + "' (kept output)");
    }
    for (std::size_t i = 0; i < args_.size(); ++i) {
      ArgState& state = args_[i];
      if (!is_generated(*state.arg)) continue;
      const std::uint64_t key = argument_seed(seed_, i);
      if (checks) {
        checks->generate(state.arg->type, state.initial.ptr(), state.count, distribution_, key, state.arg->range);
        continue;
      }
      try {
        state.initial_host.resize(state.reference.bytes());
        fill_random(state.arg->type, state.initial_host.data(), state.count, distribution_, key, state.arg->range);
      } catch (const std::bad_alloc&) {
        throw CudaFailure(CudaFailure::Kind::OutOfMemory, "out of memory: the host cannot hold this trial's inputs", false);
      }
    }
    // The deque never moves its elements, so these pointers stay valid.
    for (auto& state : args_) {
      reference_params_.push_back(state.arg->is_array() ? static_cast<void*>(&state.reference_ptr) : state.scalar.data());
      candidate_params_.push_back(state.arg->is_array() ? static_cast<void*>(&state.candidate_ptr) : state.scalar.data());
    }
  }

  // Inputs and inouts from the generated data; outputs poisoned.
  void prepare_reference() {
    for (auto& s : args_) prepare(s, s.reference, Poison::A, "reference");
  }
  void prepare_candidate(Poison which) {
    for (auto& s : args_) prepare(s, s.candidate, which, "candidate");
  }

  void run_reference(const KernelModule& module, std::chrono::milliseconds limit) {
    module.launch(reference_dims_, reference_params_, nullptr);
    wait_for_stream(nullptr, limit, "running the reference");
  }
  void run_candidate(const KernelModule& module, std::chrono::milliseconds limit, const std::string& which_run) {
    module.launch(candidate_dims_, candidate_params_, nullptr);
    wait_for_stream(nullptr, limit, "running the candidate (" + which_run + ")");
  }

  // The candidate's buffers exported to `host` (CUDA IPC), which then runs the
  // candidate on them; released again when the trial ends.
  void attach(KernelHost& host, std::chrono::milliseconds limit) {
    std::vector<std::string> handles;
    host_launch_ = {};
    host_launch_.dims = candidate_dims_;
    for (auto& s : args_) {
      kernel_host::LaunchArg arg;
      if (s.arg->is_array()) {
        cudaIpcMemHandle_t handle{};
        check_cuda(cudaIpcGetMemHandle(&handle, s.candidate.ptr()), "exporting '" + s.arg->name + "' to the kernel host");
        arg.buffer = handles.size();
        handles.emplace_back(reinterpret_cast<const char*>(&handle), sizeof handle);
      } else {
        arg.bytes.assign(reinterpret_cast<const char*>(s.scalar.data()), s.scalar.size());
      }
      host_launch_.args.push_back(std::move(arg));
    }
    in_host([&] { host.map(handles, limit); });
    host_ = &host;
    limit_ = limit;
  }
  ~Trial() {
    if (!host_ || !host_->usable()) return;
    try {
      host_->map({}, limit_);  // before our buffers are freed
    } catch (const KernelHostError&) {
    }
  }
  Trial(const Trial&) = delete;
  Trial& operator=(const Trial&) = delete;

  // Through the attached host; the worker's own work on the buffers first done.
  void run_candidate(std::chrono::milliseconds limit, const std::string& which_run) {
    check_cuda(cudaDeviceSynchronize(), "finishing the candidate's inputs before its " + which_run);
    in_host([&] { host_->launch(host_launch_, limit, "running the candidate (" + which_run + ")"); });
  }
  // One timed candidate run in the host; its reported time checked against the wall time around it.
  double time_candidate(std::chrono::milliseconds limit) {
    check_cuda(cudaDeviceSynchronize(), "finishing the worker's work before a timed candidate run");
    const KernelHost::Timed t = in_host([&] { return host_->launch_timed(host_launch_, limit, "timing the candidate"); });
    if (auto why = impossible_timing(t)) throw ImpossibleTiming(*why);
    return t.reported_ms;
  }

  // Into `saved` (check kernels only): the candidate's compared outputs after
  // its first run, or the reference's before timed runs overwrite them.
  void save_candidate_outputs() {
    for (auto& s : args_) {
      if (s.arg->is_compared()) copy_on_device(s.saved, s.candidate, "'" + s.arg->name + "' (first run)");
    }
  }
  void save_reference_outputs() {
    for (auto& s : args_) {
      if (s.arg->is_compared()) copy_on_device(s.saved, s.reference, "'" + s.arg->name + "' (reference output)");
    }
  }

  std::deque<ArgState>& args() { return args_; }
  const SizeEnv& sizes() const { return sizes_; }
  std::uint64_t seed() const { return seed_; }
  Distribution distribution() const { return distribution_; }
  const LaunchDims& reference_dims() const { return reference_dims_; }
  const LaunchDims& candidate_dims() const { return candidate_dims_; }
  std::vector<void*>& reference_params() { return reference_params_; }
  std::vector<void*>& candidate_params() { return candidate_params_; }

 private:
  static bool is_generated(const ContractArg& arg) { return arg.role == ArgRole::Input || arg.role == ArgRole::InOut; }

  static void prepare(ArgState& s, const DeviceBuffer& buffer, Poison which, const std::string& side) {
    if (!s.arg->is_array()) return;
    const std::string what = "'" + s.arg->name + "' (" + side + ")";
    if (s.arg->role == ArgRole::Output) poison(buffer, s.arg->type, which, what);
    else if (s.initial.ptr()) copy_on_device(buffer, s.initial, what);
    else upload(buffer, s.initial_host, what);
  }

  SizeEnv sizes_;
  std::uint64_t seed_;
  Distribution distribution_;
  LaunchDims reference_dims_;
  LaunchDims candidate_dims_;
  std::deque<ArgState> args_;
  std::vector<void*> reference_params_;
  std::vector<void*> candidate_params_;
  KernelHost* host_ = nullptr;
  kernel_host::LaunchRequest host_launch_;
  std::chrono::milliseconds limit_{0};
};

std::string trial_label(int index, const Trial& trial) {
  return "trial " + std::to_string(index) + " (" + to_string(trial.distribution()) + ", seed " +
         std::to_string(trial.seed()) + ", " + sizes_text(trial.sizes()) + ")";
}

struct Compiled {
  std::unique_ptr<KernelModule> module;
  CompileResult result;
};

std::string first_errors(const CompileResult& result) {
  std::string text;
  int shown = 0;
  for (const auto& d : result.diagnostics) {
    if (d.severity != "error") continue;
    if (shown++ == 3) break;
    text += "\n  line " + std::to_string(d.line) + ": " + d.message;
  }
  return text.empty() ? "\n" + result.log : text;
}

json diagnostics_json(const CompileResult& result) {
  json list = json::array();
  for (const auto& d : result.diagnostics) {
    list.push_back({{"line", d.line}, {"column", d.column}, {"severity", d.severity}, {"message", d.message}});
  }
  return list;
}

CompileResult compile_kernel(const NvrtcCompiler& compiler, const KernelSource& kernel, const std::string& arch,
                             const std::string& file_name) {
  CompileRequest request;
  request.source = kernel.source;
  request.options = kernel.options;
  request.arch = arch;
  request.name_expressions = {kernel.kernel};
  request.file_name = file_name;
  try {
    return compiler.compile(request);
  } catch (const CompileError& e) {
    throw RpcError(ErrorCode::InvalidParams, e.what());
  }
}

std::chrono::milliseconds launch_limit(const json& params) {
  const auto it = params.find("launch_timeout_ms");
  if (it == params.end() || it->is_null()) return kDefaultLaunchLimit;
  if (!it->is_number_integer() || it->get<long long>() <= 0) {
    throw RpcError(ErrorCode::InvalidParams, "launch_timeout_ms must be a positive integer");
  }
  return std::chrono::milliseconds(it->get<long long>());
}

int int_param(const json& params, const char* key, int fallback, int minimum) {
  const auto it = params.find(key);
  if (it == params.end() || it->is_null()) return std::max(fallback, minimum);
  if (!it->is_number_integer()) throw RpcError(ErrorCode::InvalidParams, std::string(key) + " must be an integer");
  const long long value = it->get<long long>();
  return static_cast<int>(std::clamp<long long>(value, minimum, 100000));
}

CudaTask parse_task(const json& params) {
  if (!params.is_object() || !params.contains("task")) throw RpcError(ErrorCode::InvalidParams, "params.task is missing");
  const json& task = params.at("task");
  const std::string kind = task.is_object() ? task.value("kind", "") : "";
  if (kind != "cuda") throw RpcError(ErrorCode::InvalidParams, "task.kind must be \"cuda\" here, got \"" + kind + "\"");
  try {
    return parse_cuda_task(task);
  } catch (const ContractError& e) {
    throw RpcError(ErrorCode::InvalidParams, e.what());
  }
}

// The check kernels of this process; hiera's own program failing to compile
// is the worker's fault, not the task's.
const CheckKernels& load_check_kernels(const NvrtcCompiler& compiler, const DeviceInfo& device) {
  try {
    return CheckKernels::get(compiler, device);
  } catch (const CompileError& e) {
    throw RpcError(ErrorCode::InternalError, e.what());
  }
}

// Runs one trial's verification on the GPU (generated inputs, device-side
// comparisons); returns false when a rule failed (and records it).
bool verify_trial(int index, Trial& trial, const CudaTask& task, const KernelModule& reference, KernelHost& host,
                  const CheckKernels& checks, std::chrono::milliseconds limit, Evaluation& evaluation) {
  const std::string label = trial_label(index, trial);
  trial.attach(host, limit);
  trial.prepare_reference();
  trial.prepare_candidate(Poison::A);
  trial.run_reference(reference, limit);
  trial.run_candidate(limit, "first run");
  trial.save_candidate_outputs();

  bool passed = true;
  for (auto& s : trial.args()) {
    if (s.arg->role == ArgRole::Input && !task.contract.inout_allowed) {
      const auto changed = checks.compare_input(s.arg->type, s.count, s.initial.ptr(), s.candidate.ptr());
      if (changed.changed > 0) {
        passed = false;
        evaluation.fail("input_mutation", label + ": input '" + s.arg->name + "' was modified: " +
                                              std::to_string(changed.changed) + " of " + std::to_string(s.count) +
                                              " elements changed; first " + changed.first_changed);
      }
    }
  }
  // The same inputs again, fresh poison of the other pattern.
  trial.prepare_candidate(Poison::B);
  trial.run_candidate(limit, "second run");

  json trial_json = {{"seed", trial.seed()}, {"distribution", to_string(trial.distribution())}, {"sizes", sizes_json(trial.sizes())}};
  double max_abs = 0.0, max_rel = 0.0;
  std::uint64_t failing = 0;
  const auto& tol = task.numerics.tolerance;
  for (auto& s : trial.args()) {
    if (!s.arg->is_compared()) continue;
    const std::string name = "'" + s.arg->name + "'";
    const auto c = checks.compare_output(s.arg->type, s.count, s.reference.ptr(), s.saved.ptr(), s.candidate.ptr(), tol,
                                         s.arg->role == ArgRole::Output);
    max_abs = std::max(max_abs, c.max_abs_error);
    max_rel = std::max(max_rel, c.max_rel_error);
    failing += c.mismatches + c.nan_inf + c.unwritten;
    const std::string of = " of " + std::to_string(c.elements) + " elements ";
    if (c.unwritten > 0) {
      evaluation.fail("unwritten_output", label + ": " + name + ": " + std::to_string(c.unwritten) + of +
                                              "were never written by the candidate; first " + c.first_unwritten);
    }
    if (c.nan_inf > 0) {
      evaluation.fail("nan_inf", label + ": " + name + ": " + std::to_string(c.nan_inf) + of +
                                     "are NaN or Inf where the reference's are not (or the reverse); first " + c.first_nan_inf);
    }
    if (c.mismatches > 0) {
      evaluation.fail("values", label + ": " + name + ": " + std::to_string(c.mismatches) + of +
                                    "differ beyond atol " + format_value(tol.atol) + " + rtol " + format_value(tol.rtol) +
                                    " x |reference| (max abs error " + format_value(c.max_abs_error) + "); first " +
                                    c.first_mismatch);
    }
    if (c.nondeterministic > 0) {
      evaluation.fail("determinism", label + ": " + name + ": " + std::to_string(c.nondeterministic) + of +
                                         "differ between two runs on the same inputs (state kept between calls, or a "
                                         "race); first " + c.first_nondeterministic);
    }
    passed = passed && c.unwritten == 0 && c.nan_inf == 0 && c.mismatches == 0 && c.nondeterministic == 0;
  }
  trial_json["max_abs_error"] = max_abs;
  trial_json["max_rel_error"] = max_rel;
  trial_json["mismatches"] = failing;
  evaluation.trials.push_back(std::move(trial_json));
  return passed;
}

// After many timed runs the candidate must still produce the reference's
// result (kept by save_reference_outputs before the timing): catches state
// that changes behaviour only after some calls.
void check_after_timing(Trial& trial, const CudaTask& task, const CheckKernels& checks, int runs, Evaluation& evaluation) {
  for (auto& s : trial.args()) {
    if (s.arg->role == ArgRole::InOut) return;  // every run updates it: no fixed expected value
  }
  for (auto& s : trial.args()) {
    if (!s.arg->is_compared()) continue;
    const auto c = checks.compare_output(s.arg->type, s.count, s.saved.ptr(), s.candidate.ptr(), s.candidate.ptr(),
                                         task.numerics.tolerance, true);
    const std::uint64_t wrong = c.mismatches + c.nan_inf;
    if (wrong > 0) {
      evaluation.fail("determinism", "after " + std::to_string(runs) + " timed runs, '" + s.arg->name + "' no longer matches the reference in " +
                                         std::to_string(wrong) + " of " + std::to_string(c.elements) +
                                         " elements (state kept between calls?); first " +
                                         (c.first_mismatch.empty() ? c.first_nan_inf : c.first_mismatch));
    }
  }
}

// Speed of light: the time the counted work needs at the probed ceilings.
struct SpeedOfLight {
  double ms = 0.0;         // max(flops / peak, bytes / bandwidth)
  double reject_ms = 0.0;  // below this the measurement is impossible
  std::string explanation;
};

std::optional<SpeedOfLight> speed_of_light(const CudaTask& task, const GpuCeilings& ceilings) {
  const auto flops = work_count(task.contract.flops, task.contract.sizes);
  const auto bytes = work_count(task.contract.bytes, task.contract.sizes);
  if (!flops && !bytes) return std::nullopt;
  // The fastest arithmetic the candidate may use: FP32, plus what numerics.allow or the data types permit.
  const StaticCheckOptions allowed = static_check_options(task);
  bool has_float64 = false;
  for (const auto& arg : task.contract.args) has_float64 = has_float64 || arg.type == ScalarType::Float64;
  double peak_tflops = 0.0;
  std::string peak_name;
  auto consider = [&](const char* name, bool permitted) {
    auto it = ceilings.peak_tflops.find(name);
    if (permitted && it != ceilings.peak_tflops.end() && it->second > peak_tflops) {
      peak_tflops = it->second;
      peak_name = name;
    }
  };
  consider("float32", true);
  // float32's accuracy on the TF32 tensor cores (3xTF32, a third of their peak) is permitted float32 work.
  if (const double accurate = float32_accurate_tflops(ceilings.peak_tflops); accurate > peak_tflops) {
    peak_tflops = accurate;
    peak_name = "float32 as 3xTF32";
  }
  consider("tf32", allowed.allow_tf32);
  consider("float16", allowed.allow_fp16);
  consider("bfloat16", allowed.allow_bf16);
  SpeedOfLight sol;
  std::ostringstream why;
  why.precision(4);
  double flops_ms = 0.0, bytes_ms = 0.0;
  // FP64 has no probed ceiling (its tensor-core peak can exceed FP32's SGEMM), so no compute bound then.
  if (flops && peak_tflops > 0.0 && !has_float64) {
    flops_ms = *flops / (peak_tflops * 1e12) * 1e3;
    why << *flops << " flops at " << peak_tflops << " TFLOP/s (" << peak_name << ") = " << flops_ms << " ms";
  }
  if (bytes && ceilings.bandwidth_gbs > 0.0) {
    bytes_ms = *bytes / (ceilings.bandwidth_gbs * 1e9) * 1e3;
    why << (flops_ms > 0.0 ? "; " : "") << *bytes << " bytes at " << ceilings.bandwidth_gbs << " GB/s = " << bytes_ms << " ms";
  }
  if (flops_ms <= 0.0 && bytes_ms <= 0.0) return std::nullopt;
  sol.ms = std::max(flops_ms, bytes_ms);
  sol.reject_ms = std::max(flops_ms * kComputeSlack, bytes_ms * kBandwidthSlack);
  sol.explanation = why.str();
  return sol;
}

}  // namespace

NativeEvaluator::NativeEvaluator(const DeviceInfo& device, const NvrtcCompiler& compiler,
                                 std::function<std::optional<GpuCeilings>()> ceilings)
    : device_(device), compiler_(compiler), ceilings_(std::move(ceilings)) {}

json NativeEvaluator::evaluate(const json& params) const {
  const CudaTask task = parse_task(params);
  const int trials = int_param(params, "trials", kMinTrials, kMinTrials);
  const int timing_trials = int_param(params, "timing_trials", kMinTimingTrials, kMinTimingTrials);
  std::uint64_t seed = 1234;
  if (auto it = params.find("seed"); it != params.end() && !it->is_null()) {
    if (!it->is_number_integer()) throw RpcError(ErrorCode::InvalidParams, "seed must be an integer");
    seed = it->is_number_unsigned() ? it->get<std::uint64_t>() : static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  const auto limit = launch_limit(params);
  Evaluation evaluation;
  evaluation.phases.enter("compile");

  // Rule 6 first: a candidate that breaks the rules is not even compiled.
  for (const auto& finding : check_cuda_source(task.candidate.source, static_check_options(task))) {
    evaluation.fail("static", finding.message, {{"line", finding.line}, {"rule", finding.rule}});
  }
  if (!evaluation.failures.empty()) return evaluation.to_json();

  const std::string arch = device_.arch();
  const CompileResult reference_build = compile_kernel(compiler_, task.reference, arch, "reference.cu");
  if (!reference_build.ok) {
    throw RpcError(ErrorCode::InvalidParams, "the reference does not compile:" + first_errors(reference_build));
  }
  const CompileResult candidate_build = compile_kernel(compiler_, task.candidate, arch, "candidate.cu");
  if (!candidate_build.ok) {
    evaluation.fail("compile", "the candidate does not compile:" + first_errors(candidate_build),
                    {{"log", candidate_build.log}, {"diagnostics", diagnostics_json(candidate_build)}});
    return evaluation.to_json();
  }

  // Measured (or read from the cache) before the trials take device memory.
  evaluation.phases.enter(nullptr);
  const std::optional<GpuCeilings> ceilings = ceilings_ ? ceilings_() : std::nullopt;
  try {
    evaluation.phases.enter("compile");
    const KernelModule reference(reference_build.cubin, reference_build.lowered_names.at(task.reference.kernel), "reference");
    const CheckKernels& checks = load_check_kernels(compiler_, device_);
    // The candidate runs in a kernel host of its own: its device code never
    // shares an address space with the reference, the kept outputs, the
    // check kernels' results or the timer.
    evaluation.phases.enter("host_start");
    KernelHostPool& pool = kernel_hosts(device_.index);
    std::unique_ptr<KernelHost> host;
    try {
      host = pool.take();
    } catch (const std::system_error& e) {
      throw CudaFailure(CudaFailure::Kind::Runtime, std::string("cannot start the kernel host: ") + e.what(), false);
    }
    // Declared before the trials, so it is handed back after they released their buffers.
    const HostLease lease{pool, host};
    const kernel_host::Ready& ready = in_host([&]() -> const kernel_host::Ready& { return host->ready(kHostReadyLimit); });
    evaluation.sandbox = json(ready.protections);
    if (ready.cuda_error) {
      throw CudaFailure(CudaFailure::Kind::Runtime, "the kernel host could not open the GPU: " + *ready.cuda_error, false);
    }
    evaluation.phases.enter("compile");
    in_host([&] { host->load(candidate_build.cubin, candidate_build.lowered_names.at(task.candidate.kernel), limit); });

    evaluation.phases.enter("verify");
    std::unique_ptr<Trial> kept;  // the last trial at the main sizes, timed afterwards
    bool passed = true;
    for (int t = 0; t < trials && passed; ++t) {
      kept.reset();
      kept = std::make_unique<Trial>(task, task.contract.sizes, seed + static_cast<std::uint64_t>(t), distribution_for_trial(t),
                                     &checks);
      passed = verify_trial(t, *kept, task, reference, *host, checks, limit, evaluation);
    }
    if (passed && task.contract.second_sizes) {
      Trial second(task, *task.contract.second_sizes, seed + static_cast<std::uint64_t>(trials), distribution_for_trial(trials),
                   &checks);
      passed = verify_trial(trials, second, task, reference, *host, checks, limit, evaluation);
    }
    if (!passed) return evaluation.to_json();

    evaluation.phases.enter("time");
    KernelTimer timer(device_.l2_bytes, limit);
    Trial& timed = *kept;
    timed.attach(*host, limit);  // again: the second shape's trial had the host's mapping
    timed.save_reference_outputs();
    timed.prepare_reference();
    timed.prepare_candidate(Poison::A);
    // Rounds interleaved across the process boundary: the reference timed
    // here, the candidate in its host (the same flush and events there).
    std::pair<TimingStats, TimingStats> times;
    try {
      times = KernelTimer::interleave(
          [&] { return timer.time_one([&](cudaStream_t stream) { reference.launch(timed.reference_dims(), timed.reference_params(), stream); }); },
          [&] { return timed.time_candidate(limit); }, timing_trials);
    } catch (const ImpossibleTiming& e) {
      evaluation.fail("timing", e.what());
      return evaluation.to_json();
    }
    const auto& [reference_time, candidate_time] = times;
    check_after_timing(timed, task, checks, timing_trials + 3, evaluation);
    evaluation.timing = json{{"reference", to_json(reference_time)},
                             {"candidate", to_json(candidate_time)},
                             {"speedup", candidate_time.median_ms > 0 ? reference_time.median_ms / candidate_time.median_ms : 0.0}};

    if (!ceilings) {
      std::cerr << "hiera-worker: no probed ceilings; the speed-of-light rule is skipped\n";
    } else if (auto sol = speed_of_light(task, *ceilings)) {
      evaluation.speed_of_light_ms = sol->ms;
      if (candidate_time.median_ms < sol->reject_ms) {
        std::ostringstream message;
        message.precision(4);
        message << "the candidate's median time " << candidate_time.median_ms << " ms is below what the counted work needs ("
                << sol->explanation << "): the kernel cannot have done that work, or the contract's counts are wrong";
        evaluation.fail("speed_of_light", message.str());
      }
    }
  } catch (const CudaFailure& failure) {
    const char* check = failure.kind() == CudaFailure::Kind::Timeout ? "timeout" : "runtime";
    evaluation.fail(check, failure.what());
    if (failure.context_lost()) {
      evaluation.restart = true;
      evaluation.failures.back().message += " (the CUDA context is lost; this worker exits to be restarted)";
    }
  }
  return evaluation.to_json();
}

json NativeEvaluator::profile(const json& params) const {
  const CudaTask task = parse_task(params);
  const std::string which = params.value("which", "");
  if (which != "reference" && which != "candidate") {
    throw RpcError(ErrorCode::InvalidParams, "which must be \"reference\" or \"candidate\"");
  }
  const bool is_reference = which == "reference";
  const KernelSource& kernel = is_reference ? task.reference : task.candidate;
  const auto limit = launch_limit(params);
  const CompileResult build = compile_kernel(compiler_, kernel, device_.arch(), which + ".cu");
  if (!build.ok) throw RpcError(ErrorCode::InvalidParams, "the " + which + " does not compile:" + first_errors(build));
  try {
    const KernelModule module(build.cubin, build.lowered_names.at(kernel.kernel), which);
    Trial trial(task, task.contract.sizes, 1234, Distribution::Uniform);
    // Inputs uploaded and outputs poisoned before the trace, so it holds the kernel alone.
    auto prepare = [&] { is_reference ? trial.prepare_reference() : trial.prepare_candidate(Poison::A); };
    auto run = [&] {
      if (is_reference) trial.run_reference(module, limit);
      else trial.run_candidate(module, limit, "profiled run");
    };
    prepare();
    run();  // warm-up: module load, first-launch costs and caches settle outside the trace
    prepare();
    check_cuda(cudaDeviceSynchronize(), "preparing the profiled run");
    std::vector<KernelActivity> activities;
    {
      CuptiTracer tracer;
      run();
      activities = tracer.stop();
    }
    // Hardware metrics in a pass of their own, once the trace is over (the
    // range profiler replays the kernel; the two must not overlap). CUPTI's
    // refusals come back as {"unavailable": reason}, never as a failed job.
    prepare();
    check_cuda(cudaDeviceSynchronize(), "preparing the metrics pass");
    const MetricsOutcome metrics = collect_hardware_metrics(run);
    return {{"kernels", summarize_kernels(activities)}, {"metrics", metrics_json(metrics)}};
  } catch (const CudaFailure& failure) {
    if (failure.context_lost()) throw ContextLost(failure.what());
    throw RpcError(ErrorCode::InternalError, failure.what());
  } catch (const std::runtime_error& e) {
    // CUPTI refusing (no permission, unsupported environment).
    throw RpcError(ErrorCode::InternalError, std::string("profiling failed: ") + e.what());
  }
}

}  // namespace hiera::engine::worker
