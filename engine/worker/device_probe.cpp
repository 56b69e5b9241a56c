#include "engine/worker/device_probe.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "engine/worker/cuda_failure.h"
#include "engine/worker/input_generator.h"
#include "engine/worker/scalar_types.h"

namespace hiera::engine::worker {

using nlohmann::json;

namespace {

// Frees on every path out, including a CudaFailure thrown mid-measurement.
struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(std::size_t bytes, const std::string& what) { check_cuda(cudaMalloc(&ptr, bytes), what); }
  ~DeviceMemory() {
    if (!context_abandoned()) cudaFree(ptr);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    check_cuda(cudaEventCreate(&start), "creating an event");
    check_cuda(cudaEventCreate(&stop), "creating an event");
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  template <typename Work>
  double median_ms(Work work, int warmup, int trials) {
    for (int i = 0; i < warmup; ++i) work();
    check_cuda(cudaDeviceSynchronize(), "warming up");
    std::vector<double> samples;
    for (int i = 0; i < trials; ++i) {
      check_cuda(cudaEventRecord(start), "recording an event");
      work();
      check_cuda(cudaEventRecord(stop), "recording an event");
      check_cuda(cudaDeviceSynchronize(), "synchronising");
      float ms = 0.0f;
      check_cuda(cudaEventElapsedTime(&ms, start, stop), "reading an event");
      samples.push_back(ms);
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  }
};

double measure_copy_gbs(const DeviceInfo& device) {
  // 2 GiB each way where memory allows (MEASURING.md), less on small GPUs.
  std::size_t bytes = std::size_t{2} << 30;
  while (bytes > (std::size_t{64} << 20) && 2 * bytes > device.memory_bytes / 2) bytes /= 2;
  DeviceMemory src(bytes, "allocating the copy probe's source");
  DeviceMemory dst(bytes, "allocating the copy probe's destination");
  check_cuda(cudaMemset(src.ptr, 1, bytes), "filling the copy probe's source");
  Events events;
  const double ms = events.median_ms(
      [&] { check_cuda(cudaMemcpyAsync(dst.ptr, src.ptr, bytes, cudaMemcpyDeviceToDevice), "copying"); }, 2, 10);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

const char* cublas_status_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "a cuBLAS error";
  }
}

void check_cublas(cublasStatus_t status, const std::string& what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaFailure(CudaFailure::Kind::Runtime, what + ": " + cublas_status_text(status), false);
  }
}

struct CublasHandle {
  cublasHandle_t handle = nullptr;
  CublasHandle() { check_cublas(cublasCreate(&handle), "creating a cuBLAS handle"); }
  ~CublasHandle() { cublasDestroy(handle); }
};

std::map<std::string, double> measure_gemm_tflops() {
  constexpr int n = 8192;
  constexpr std::size_t elements = std::size_t{n} * n;
  // Random data in [-1, 1): GEMM power (and so clocks) depends on the data; zeros would flatter.
  std::vector<float> host(elements);
  {
    std::vector<std::byte> raw(elements * sizeof(float));
    fill_random(ScalarType::Float32, raw.data(), elements, Distribution::Uniform, 20261129);
    std::memcpy(host.data(), raw.data(), raw.size());
    for (auto& v : host) v = 2.0f * v - 1.0f;
  }
  DeviceMemory a(elements * sizeof(float), "allocating the GEMM probe's A");
  DeviceMemory b(elements * sizeof(float), "allocating the GEMM probe's B");
  DeviceMemory c(elements * sizeof(float), "allocating the GEMM probe's C");
  CublasHandle cublas;
  // Default math: no TF32 unless a compute type asks for it.
  check_cublas(cublasSetMathMode(cublas.handle, CUBLAS_DEFAULT_MATH), "setting the cuBLAS math mode");
  Events events;
  const float alpha = 1.0f, beta = 0.0f;
  const double flops = 2.0 * n * static_cast<double>(n) * n;

  auto upload = [&](cudaDataType type) {
    std::vector<std::uint16_t> narrow;
    const void* data = host.data();
    std::size_t bytes = elements * sizeof(float);
    if (type == CUDA_R_16F || type == CUDA_R_16BF) {
      narrow.resize(elements);
      for (std::size_t i = 0; i < elements; ++i) narrow[i] = type == CUDA_R_16F ? float_to_half(host[i]) : float_to_bfloat16(host[i]);
      data = narrow.data();
      bytes = elements * sizeof(std::uint16_t);
    }
    check_cuda(cudaMemcpy(a.ptr, data, bytes, cudaMemcpyHostToDevice), "uploading GEMM data");
    // B holds the same values, shifted by one row, so A and B are not identical.
    check_cuda(cudaMemcpy(b.ptr, static_cast<const char*>(data) + bytes / n, bytes - bytes / n, cudaMemcpyHostToDevice),
               "uploading GEMM data");
    check_cuda(cudaMemcpy(static_cast<char*>(b.ptr) + bytes - bytes / n, data, bytes / n, cudaMemcpyHostToDevice),
               "uploading GEMM data");
  };

  struct Case {
    const char* name;
    cudaDataType type;
    cublasComputeType_t compute;
  };
  const Case cases[] = {{"float32", CUDA_R_32F, CUBLAS_COMPUTE_32F},
                        {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
                        {"float16", CUDA_R_16F, CUBLAS_COMPUTE_32F},
                        {"bfloat16", CUDA_R_16BF, CUBLAS_COMPUTE_32F}};
  std::map<std::string, double> tflops;
  cudaDataType uploaded = CUDA_R_64F;  // nothing yet
  for (const auto& gemm : cases) {
    if (gemm.type != uploaded) {
      upload(gemm.type);
      uploaded = gemm.type;
    }
    const double ms = events.median_ms(
        [&] {
          check_cublas(cublasGemmEx(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.ptr, gemm.type, n, b.ptr,
                                    gemm.type, n, &beta, c.ptr, gemm.type, n, gemm.compute, CUBLAS_GEMM_DEFAULT),
                       std::string("cublasGemmEx ") + gemm.name);
        },
        3, 10);
    tflops[gemm.name] = flops / (ms * 1e-3) / 1e12;
  }
  return tflops;
}

std::filesystem::path cache_file(const std::filesystem::path& cache_dir, const DeviceInfo& device) {
  return cache_dir / "probe" / (device.uuid + ".json");
}

json device_json(const DeviceInfo& device) {
  return {{"name", device.name},
          {"cc", device.cc()},
          {"sm_count", device.sm_count},
          {"sm_clock_mhz", device.sm_clock_mhz},
          {"mem_clock_mhz", device.mem_clock_mhz},
          {"memory_bytes", device.memory_bytes},
          {"l2_bytes", device.l2_bytes},
          {"smem_per_block_optin", device.smem_per_block_optin},
          {"driver", cuda_version_text(device.driver_version)},
          {"cuda_runtime", cuda_version_text(device.runtime_version)},
          {"uuid", device.uuid}};
}

}  // namespace

json probe_device(const DeviceInfo& device, const std::filesystem::path& cache_dir, bool refresh) {
  json result = device_json(device);
  const auto path = cache_file(cache_dir, device);
  if (!refresh) {
    std::ifstream in(path);
    if (in) {
      try {
        json cached = json::parse(in);
        // Compared as JSON values: string == json is ambiguous under C++20's reversed operators.
        if (cached.contains("driver") && cached["driver"] == result["driver"] && cached.contains("cuda_runtime") &&
            cached["cuda_runtime"] == result["cuda_runtime"] && cached.contains("measured")) {
          result["measured"] = cached["measured"];
          result["cached"] = true;
          return result;
        }
      } catch (const std::exception& e) {
        std::cerr << "hiera-worker: ignoring the unreadable probe cache " << path << ": " << e.what() << "\n";
      }
    }
  }
  std::cerr << "hiera-worker: measuring the device's ceilings (copy bandwidth, GEMM per dtype)\n";
  json measured;
  measured["copy_gbs"] = measure_copy_gbs(device);
  measured["gemm_tflops"] = measure_gemm_tflops();
  result["measured"] = measured;
  result["cached"] = false;

  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const auto temp = path.string() + ".tmp";
  {
    std::ofstream out(temp);
    out << result.dump(2) << "\n";
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) std::cerr << "hiera-worker: cannot cache the probe in " << path << ": " << ec.message() << "\n";
  return result;
}

GpuCeilings ceilings_from_probe(const json& probe) {
  GpuCeilings ceilings;
  const auto& measured = probe.at("measured");
  ceilings.bandwidth_gbs = measured.at("copy_gbs").get<double>();
  for (const auto& [name, value] : measured.at("gemm_tflops").items()) ceilings.peak_tflops[name] = value.get<double>();
  return ceilings;
}

}  // namespace hiera::engine::worker
