// The GPU toolchain hiera's worker is built on: NVRTC compiles for the
// device's own architecture and the driver API launches the result.
#include <gtest/gtest.h>

#include <cuda.h>
#include <nvrtc.h>

#include <string>
#include <vector>

namespace {

#define CU_OK(call)                                                     \
  do {                                                                  \
    CUresult r = (call);                                                \
    const char* error_name = nullptr;                                   \
    cuGetErrorName(r, &error_name);                                     \
    ASSERT_EQ(r, CUDA_SUCCESS) << #call << ": " << (error_name ? error_name : "?"); \
  } while (0)

class Gpu : public ::testing::Test {
 protected:
  CUdevice device{};
  CUcontext context{};
  void SetUp() override {
    int count = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      GTEST_SKIP() << "no CUDA device visible; GPU tests need a GPU";
    }
    CU_OK(cuDeviceGet(&device, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&context, device));
    CU_OK(cuCtxSetCurrent(context));
  }
  void TearDown() override {
    if (context) cuDevicePrimaryCtxRelease(device);
  }
};

TEST_F(Gpu, ReportsTheDevice) {
  char name[256] = {};
  CU_OK(cuDeviceGetName(name, sizeof name, device));
  int major = 0, minor = 0, sms = 0;
  CU_OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CU_OK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  std::printf("device: %s, sm_%d%d, %d SMs\n", name, major, minor, sms);
  EXPECT_GT(sms, 0);
  EXPECT_GE(major, 7);
}

TEST_F(Gpu, NvrtcCompilesForTheDeviceAndTheDriverLaunchesIt) {
  int major = 0, minor = 0;
  CU_OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CU_OK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  const char* source = R"(
    extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    })";
  nvrtcProgram program;
  ASSERT_EQ(nvrtcCreateProgram(&program, source, "saxpy.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  // Real machine code for this GPU (sm_90 on an H200), not PTX for the driver to JIT.
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
  const char* options[] = {arch.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(program, log.data());
  ASSERT_EQ(compiled, NVRTC_SUCCESS) << log;
  size_t cubin_size = 0;
  ASSERT_EQ(nvrtcGetCUBINSize(program, &cubin_size), NVRTC_SUCCESS);
  std::vector<char> cubin(cubin_size);
  ASSERT_EQ(nvrtcGetCUBIN(program, cubin.data()), NVRTC_SUCCESS);
  nvrtcDestroyProgram(&program);

  CUmodule module;
  CUfunction kernel;
  CU_OK(cuModuleLoadData(&module, cubin.data()));
  CU_OK(cuModuleGetFunction(&kernel, module, "saxpy"));

  const int n = (1 << 20) + 3;  // a tail that is not a multiple of the block
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) - 500.0f;
    y[i] = static_cast<float>(i % 7);
  }
  CUdeviceptr dx, dy;
  CU_OK(cuMemAlloc(&dx, n * sizeof(float)));
  CU_OK(cuMemAlloc(&dy, n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(dy, y.data(), n * sizeof(float)));
  float a = 2.0f;
  int count = n;
  void* args[] = {&a, &dx, &dy, &count};
  CU_OK(cuLaunchKernel(kernel, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_OK(cuCtxSynchronize());
  std::vector<float> out(n);
  CU_OK(cuMemcpyDtoH(out.data(), dy, n * sizeof(float)));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * x[i] + y[i]) << "at " << i;  // exact: small integers
  cuMemFree(dx);
  cuMemFree(dy);
  cuModuleUnload(module);
}

}  // namespace
