#include "engine/worker/cupti_tracer.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include "engine/worker/cuda_failure.h"

namespace hiera::engine::worker {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kAlignment = 8;

std::mutex g_mutex;
std::vector<KernelActivity>* g_sink = nullptr;  // where completed buffers go while a tracer runs
bool g_callbacks_registered = false;

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(name);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    if (!g_sink) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelActivity activity;
    activity.name = demangle(kernel->name);
    activity.grid = {kernel->gridX, kernel->gridY, kernel->gridZ};
    activity.block = {kernel->blockX, kernel->blockY, kernel->blockZ};
    activity.duration_ns = kernel->end > kernel->start ? kernel->end - kernel->start : 0;
    g_sink->push_back(std::move(activity));
  }
  std::free(buffer);
}

void check_cupti(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw std::runtime_error(std::string(what) + ": " + (text ? text : "CUPTI error"));
}

}  // namespace

CuptiTracer::CuptiTracer() {
  if (!g_callbacks_registered) {
    check_cupti(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "registering CUPTI activity buffers");
    g_callbacks_registered = true;
  }
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling CUPTI kernel activity");
  running_ = true;
}

CuptiTracer::~CuptiTracer() {
  if (!running_ || context_abandoned()) return;
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(1);
}

std::vector<KernelActivity> CuptiTracer::stop() {
  std::vector<KernelActivity> activities;
  cudaDeviceSynchronize();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sink = &activities;
  }
  const CUptiResult flushed = cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  running_ = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sink = nullptr;
  }
  check_cupti(flushed, "flushing CUPTI activity");
  return activities;
}

nlohmann::json summarize_kernels(const std::vector<KernelActivity>& activities) {
  struct Summary {
    const KernelActivity* first = nullptr;
    std::uint64_t calls = 0;
    std::uint64_t total_ns = 0;
  };
  std::map<std::string, Summary> by_name;
  std::vector<std::string> order;
  for (const auto& activity : activities) {
    auto& summary = by_name[activity.name];
    if (!summary.first) {
      summary.first = &activity;
      order.push_back(activity.name);
    }
    ++summary.calls;
    summary.total_ns += activity.duration_ns;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return by_name[a].total_ns > by_name[b].total_ns; });
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& name : order) {
    const auto& s = by_name[name];
    kernels.push_back({{"name", name},
                       {"grid", s.first->grid},
                       {"block", s.first->block},
                       {"calls", s.calls},
                       {"total_ns", s.total_ns},
                       {"mean_ns", s.calls ? s.total_ns / s.calls : 0}});
  }
  return kernels;
}

}  // namespace hiera::engine::worker
