#include "engine/worker/cupti_range_profiler.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "engine/worker/cuda_failure.h"

namespace hiera::engine::worker {

namespace {

// Kernel launches one counter data image holds; a profiled side launches one.
constexpr std::size_t kMaxRanges = 64;

// Thrown inside this file with the reason already worked out; caught at the top.
struct Unavailable {
  std::string reason;
  bool from_cupti = false;  // a CUPTI call's error, rather than something this file found
};

// A CUPTI parameter struct, zeroed (pPriv and every [in] left unset) with its structSize.
template <typename Params>
Params cupti_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}
#define HIERA_CUPTI_PARAMS(Type) cupti_params<Type>(Type##_STRUCT_SIZE)

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text) return {};
  return text;
}

void check(CUptiResult result, std::string_view step) {
  if (result != CUPTI_SUCCESS) throw Unavailable{unavailable_reason(result, step, result_text(result)), true};
}

[[noreturn]] void fail(const std::string& detail) {
  throw Unavailable{std::string(unavailable::kFailed) + ": " + detail};
}

// ---------------------------------------------------------------- the context

// The driver API through the runtime, as driver_api does: no libcuda link.
template <typename Fn>
Fn driver_entry(const char* symbol, unsigned int version) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error = cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &status);
  if (error != cudaSuccess || status != cudaDriverEntryPointSuccess || !address) {
    if (error != cudaSuccess) cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(address);
}

struct Target {
  CUcontext context = nullptr;
  CUdevice device = 0;
};

Target current_target() {
  static const auto get_current = driver_entry<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  static const auto get_device = driver_entry<PFN_cuCtxGetDevice_v2000>("cuCtxGetDevice", 2000);
  if (!get_current || !get_device) fail("the CUDA driver does not provide cuCtxGetCurrent and cuCtxGetDevice");
  Target target;
  if (get_current(&target.context) != CUDA_SUCCESS || !target.context) {
    cudaFree(nullptr);  // makes the runtime's primary context current on this thread
    if (get_current(&target.context) != CUDA_SUCCESS || !target.context) fail("no CUDA context is current");
  }
  if (get_device(&target.device) != CUDA_SUCCESS) fail("the current CUDA context names no device");
  return target;
}

// ---------------------------------------------------------------- CUPTI's state

// cuptiProfilerInitialize once per process (it hooks the driver; nothing
// runs until a range profiler is enabled on a context). Not deinitialized:
// the activity tracer keeps working alongside it.
void initialize_profiler() {
  static std::mutex mutex;
  static bool initialized = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (initialized) return;
  auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  check(cuptiProfilerInitialize(&params), "initializing the CUPTI profiler");
  initialized = true;
}

// The profiler host object: metric enumeration, configuration, evaluation.
class ProfilerHost {
 public:
  ProfilerHost(const std::string& chip, const std::vector<std::uint8_t>& counter_availability) {
    auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage = counter_availability.data();
    check(cuptiProfilerHostInitialize(&params), "initializing the profiler host for chip " + chip);
    object_ = params.pHostObject;
  }
  ~ProfilerHost() {
    if (!object_) return;
    auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    params.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&params);
  }
  ProfilerHost(const ProfilerHost&) = delete;
  ProfilerHost& operator=(const ProfilerHost&) = delete;
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// The range profiler enabled on a context; stopped and disabled on every way
// out, unless the context was lost (CUPTI would wait on a GPU that never answers).
class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext context) {
    auto params = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    params.ctx = context;
    check(cuptiRangeProfilerEnable(&params), "enabling the range profiler");
    object_ = params.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    if (!object_ || abandoned_ || context_abandoned()) return;
    if (started_) stop();
    auto params = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    params.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&params);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return object_; }

  void start() {
    auto params = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    params.pRangeProfilerObject = object_;
    check(cuptiRangeProfilerStart(&params), "starting the range profiler");
    started_ = true;
  }
  // Returns the CUPTI result and whether every replay pass was submitted.
  std::pair<CUptiResult, bool> stop() {
    auto params = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    params.pRangeProfilerObject = object_;
    const CUptiResult result = cuptiRangeProfilerStop(&params);
    started_ = false;
    return {result, params.isAllPassSubmitted != 0};
  }
  void abandon() { abandoned_ = true; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool started_ = false;
  bool abandoned_ = false;
};

// ---------------------------------------------------------------- steps

void require_supported_device(CUdevice device) {
  auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  params.cuDevice = device;
  params.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(cuptiProfilerDeviceSupported(&params), "asking CUPTI whether the device supports profiling");
  if (auto reason = unsupported_device_reason(params)) throw Unavailable{*reason};
}

std::string chip_name(CUdevice device) {
  auto params = HIERA_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  params.deviceIndex = static_cast<std::size_t>(device);
  check(cuptiDeviceGetChipName(&params), "reading the GPU's chip name");
  if (!params.pChipName) fail("CUPTI named no chip for device " + std::to_string(device));
  return params.pChipName;
}

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  params.ctx = context;
  check(cuptiProfilerGetCounterAvailability(&params), "reading which counters the GPU makes available");
  std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
  params.pCounterAvailabilityImage = image.data();
  check(cuptiProfilerGetCounterAvailability(&params), "reading which counters the GPU makes available");
  image.resize(params.counterAvailabilityImageSize);
  return image;
}

std::vector<const char*> metric_names() {
  std::vector<const char*> names;
  for (const auto& spec : kProfileMetrics) names.push_back(spec.cupti_name);
  return names;
}

// Names the metric the chip lacks, for the reason.
[[noreturn]] void unknown_metric(CUpti_Profiler_Host_Object* host, const std::string& chip) {
  for (const auto& spec : kProfileMetrics) {
    auto params = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    params.pHostObject = host;
    params.pMetricName = spec.cupti_name;
    if (cuptiProfilerHostGetMetricProperties(&params) != CUPTI_SUCCESS) {
      throw Unavailable{std::string(unavailable::kUnsupported) + ": CUPTI offers no metric " + spec.cupti_name +
                        " on chip " + chip};
    }
  }
  throw Unavailable{std::string(unavailable::kUnsupported) + ": CUPTI refused the metrics for chip " + chip};
}

// The config image (the counters to program in each pass) and the number of passes.
std::pair<std::vector<std::uint8_t>, std::size_t> config_image(CUpti_Profiler_Host_Object* host, const std::string& chip,
                                                               std::vector<const char*>& names) {
  auto add = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  const CUptiResult added = cuptiProfilerHostConfigAddMetrics(&add);
  if (added == CUPTI_ERROR_INVALID_METRIC_NAME) unknown_metric(host, chip);
  check(added, "adding the metrics to the configuration");

  auto size = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host;
  check(cuptiProfilerHostGetConfigImageSize(&size), "sizing the configuration image");
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  check(cuptiProfilerHostGetConfigImage(&get), "building the configuration image");

  auto passes = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = image.size();
  passes.pConfigImage = image.data();
  check(cuptiProfilerHostGetNumOfPasses(&passes), "counting the replay passes");
  return {std::move(image), passes.numOfPasses};
}

std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler, std::vector<const char*>& names) {
  auto size = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(kMaxRanges);
  check(cuptiRangeProfilerGetCounterDataSize(&size), "sizing the counter data image");
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "initializing the counter data image");
  return image;
}

void set_config(CUpti_RangeProfiler_Object* profiler, const std::vector<std::uint8_t>& config,
                std::vector<std::uint8_t>& counter_data) {
  auto params = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  params.pRangeProfilerObject = profiler;
  params.configSize = config.size();
  params.pConfig = config.data();
  params.counterDataImageSize = counter_data.size();
  params.pCounterDataImage = counter_data.data();
  params.range = CUPTI_AutoRange;          // one range per kernel launch
  params.replayMode = CUPTI_KernelReplay;  // CUPTI replays each launch for every pass, restoring memory
  params.maxRangesPerPass = kMaxRanges;
  params.numNestingLevels = 1;
  params.minNestingLevel = 1;
  params.passIndex = 0;
  params.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&params), "configuring the range profiler");
}

std::vector<RangeValues> evaluate_ranges(CUpti_Profiler_Host_Object* host, std::vector<std::uint8_t>& counter_data,
                                         std::vector<const char*>& names) {
  auto info = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "counting the profiled ranges");
  std::vector<RangeValues> ranges;
  for (std::size_t index = 0; index < info.numTotalRanges; ++index) {
    RangeValues values{};
    auto evaluate = HIERA_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    evaluate.pHostObject = host;
    evaluate.pCounterDataImage = counter_data.data();
    evaluate.counterDataImageSize = counter_data.size();
    evaluate.rangeIndex = index;
    evaluate.ppMetricNames = names.data();
    evaluate.numMetrics = names.size();
    evaluate.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&evaluate), "evaluating the metrics of kernel launch " + std::to_string(index + 1));
    ranges.push_back(values);
  }
  return ranges;
}

MetricsOutcome collect(const std::function<void()>& region) {
  const Target target = current_target();
  initialize_profiler();
  require_supported_device(target.device);
  const std::string chip = chip_name(target.device);
  const std::vector<std::uint8_t> availability = counter_availability(target.context);
  ProfilerHost host(chip, availability);
  std::vector<const char*> names = metric_names();
  auto [config, passes] = config_image(host.get(), chip, names);

  std::vector<std::uint8_t> counter_data;  // declared first: it outlives the profiler that writes into it
  RangeProfiler profiler(target.context);
  counter_data = counter_data_image(profiler.get(), names);
  set_config(profiler.get(), config, counter_data);

  profiler.start();
  std::string region_failure;
  try {
    region();
  } catch (const CudaFailure& failure) {
    if (failure.context_lost()) {
      profiler.abandon();  // no CUPTI call may wait on this context again
      throw;
    }
    region_failure = failure.what();
  }
  const auto [stopped, all_passes] = profiler.stop();
  if (!region_failure.empty()) fail("the kernel failed while it was replayed for the metrics: " + region_failure);
  check(stopped, "stopping the range profiler");
  // Kernel replay submits every pass inside each launch; anything else is a CUPTI surprise.
  if (!all_passes) fail("CUPTI did not submit every replay pass of the kernel (" + std::to_string(passes) + " needed)");

  auto decode = HIERA_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = profiler.get();
  check(cuptiRangeProfilerDecodeData(&decode), "decoding the counter data");
  return combine_ranges(evaluate_ranges(host.get(), counter_data, names), passes, decode.numOfRangeDropped);
}

// Where libcupti was loaded from: the toolkit puts libnvperf_host next to it.
std::string cupti_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiProfilerHostInitialize), &info) == 0 || !info.dli_fname) return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// Why libcupti could not have loaded libnvperf_host, or nullopt when it can be.
std::optional<std::string> nvperf_host_problem() {
  if (void* loaded = dlopen("libnvperf_host.so", RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(loaded);
    return std::nullopt;
  }
  const std::string directory = cupti_directory();
  std::vector<std::string> candidates;
  if (!directory.empty()) candidates.push_back(directory + "/libnvperf_host.so");
  candidates.push_back("libnvperf_host.so");
  std::string first_error;
  for (const auto& candidate : candidates) {
    dlerror();
    if (void* handle = dlopen(candidate.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(handle);
      return std::nullopt;
    }
    const char* error = dlerror();
    if (first_error.empty() && error) first_error = error;
  }
  return library_missing_reason(first_error, directory);
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// A reason may have a better explanation: CUPTI's metric library missing
// (which CUPTI reports as whatever its first failing call returns), or, for a
// catch-all CUPTI error, a profiler injected into this process.
std::string explain(const Unavailable& refused) {
  const std::string& reason = refused.reason;
  if (starts_with(reason, unavailable::kRestricted) || starts_with(reason, unavailable::kBusy)) return reason;
  if (auto problem = nvperf_host_problem()) return *problem + " (CUPTI said: " + reason + ")";
  if (!refused.from_cupti || !is_generic_reason(reason)) return reason;
  if (const char* injection = std::getenv("CUDA_INJECTION64_PATH"); injection && *injection) {
    return injected_profiler_reason(injection) + " (CUPTI said: " + reason + ")";
  }
  return reason;
}

}  // namespace

MetricsOutcome collect_hardware_metrics(const std::function<void()>& region) {
  static std::mutex session;
  std::unique_lock<std::mutex> lock(session, std::try_to_lock);
  if (!lock.owns_lock()) {
    return MetricsOutcome::none(std::string(unavailable::kBusy) + ": another metrics collection is running in this worker");
  }
  MetricsOutcome outcome;
  try {
    outcome = collect(region);
  } catch (const Unavailable& refused) {
    outcome = MetricsOutcome::none(explain(refused));
  }
  if (!outcome.metrics) std::cerr << "hiera-worker: hardware metrics unavailable: " << outcome.unavailable << "\n";
  return outcome;
}

}  // namespace hiera::engine::worker
