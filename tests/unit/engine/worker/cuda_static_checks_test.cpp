// Static checks on candidate CUDA sources: each forbidden pattern is caught
// (with its line), a clean kernel passes, comments do not count, and the
// precision rules follow numerics.allow.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include "engine/worker/cuda_static_checks.h"

namespace {

using hiera::engine::worker::check_cuda_source;
using hiera::engine::worker::StaticCheckOptions;
using hiera::engine::worker::strip_comments;

const char* kCleanKernel = R"(
#include <cstdint>
// A clean kernel: may mention cudaStreamCreate, std::thread or __half in comments.
/* cudaEventRecord, cudaDeviceSynchronize, fork() */
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int half = n / 2;  // a variable named half is fine
  if (i < n) tile[threadIdx.x] = a * x[i];
  __syncthreads();
  if (i < n) y[i] = tile[threadIdx.x] + (i < half ? 0.0f : 0.0f);
  const char* text = "// not a comment";
  (void)text;
}
)";

std::vector<std::string> rules_of(const std::string& source, StaticCheckOptions options = {}) {
  std::vector<std::string> rules;
  for (const auto& finding : check_cuda_source(source, options)) rules.push_back(finding.rule);
  return rules;
}

TEST(CudaStaticChecks, ACleanKernelPasses) { EXPECT_TRUE(check_cuda_source(kCleanKernel, {}).empty()); }

TEST(CudaStaticChecks, EachForbiddenPatternIsRejected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cudaStream_t s; cudaStreamCreate(&s);", "stream"},
      {"cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);", "stream"},
      {"cuStreamCreate(&s, 0);", "stream"},
      {"cudaGraphLaunch(g, 0);", "stream"},
      {"std::thread t([]{});", "thread_or_process"},
      {"std :: async(f);", "thread_or_process"},
      {"pthread_create(&t, 0, f, 0);", "thread_or_process"},
      {"if (fork() == 0) {}", "thread_or_process"},
      {"system (\"nvidia-smi\");", "thread_or_process"},
      {"FILE* p = popen(\"ls\", \"r\");", "thread_or_process"},
      {"execvp(\"sh\", args);", "thread_or_process"},
      {"cudaEvent_t e; cudaEventRecord(e);", "timer"},
      {"cuEventElapsedTime(&ms, a, b);", "timer"},
      {"nvmlDeviceSetGpuLockedClocks(d, 1, 2);", "timer"},
      {"clock_settime(CLOCK_REALTIME, &ts);", "timer"},
      {"cudaProfilerStop();", "timer"},
      {"cudaDeviceSynchronize();", "synchronisation"},
      {"cudaStreamSynchronize(0);", "synchronisation"},
      {"cudaDeviceSetLimit(cudaLimitStackSize, 1);", "synchronisation"},
      {"__half h = __float2half(x[i]);", "fp16"},
      {"#include <cuda_fp16.h>", "fp16"},
      {"y[i] = __half2float(__hmul(a, b));", "fp16"},
      {"asm(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ...\");", "fp16"},
      {"__nv_bfloat16 b = __float2bfloat16(v);", "bf16"},
      {"#include \"cuda_bf16.h\"", "bf16"},
      {"wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;", "tf32"},
      {"asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(t) : \"f\"(v));", "tf32"},
      {"__nv_fp8_e4m3 q(v);", "fp8"},
  };
  for (const auto& [line, rule] : cases) {
    const std::string source = "__global__ void k(float* y) {\n  " + line + "\n}\n";
    const auto findings = check_cuda_source(source, {});
    ASSERT_FALSE(findings.empty()) << "not caught: " << line;
    EXPECT_EQ(findings.front().rule, rule) << line;
    EXPECT_EQ(findings.front().line, 2) << line;
    EXPECT_NE(findings.front().message.find("line 2"), std::string::npos) << findings.front().message;
  }
}

TEST(CudaStaticChecks, ReducedPrecisionIsAllowedWhenNumericsAllowIt) {
  const std::string fp16 = "#include <cuda_fp16.h>\n__global__ void k(__half* y) { y[0] = __float2half(1.0f); }\n";
  EXPECT_EQ(rules_of(fp16), (std::vector<std::string>{"fp16", "fp16"}));
  StaticCheckOptions allow;
  allow.allow_fp16 = true;
  EXPECT_TRUE(rules_of(fp16, allow).empty());
  const std::string bf16 = "__global__ void k(__nv_bfloat16* y) {}\n";
  EXPECT_EQ(rules_of(bf16, allow), std::vector<std::string>{"bf16"});  // fp16 allowance does not cover bf16
  allow.allow_bf16 = true;
  EXPECT_TRUE(rules_of(bf16, allow).empty());
  allow.allow_tf32 = true;
  EXPECT_TRUE(rules_of("// tf32\nasm(\"cvt.rna.tf32.f32 %0, %1;\");", allow).empty());
  // Streams and timers stay forbidden whatever numerics allow.
  EXPECT_EQ(rules_of("cudaEventRecord(e);", allow), std::vector<std::string>{"timer"});
}

TEST(CudaStaticChecks, EveryViolationIsReportedWithItsOwnLine) {
  const std::string source = "__global__ void k() {}\nvoid f() {\n  cudaStreamCreate(&s);\n  std::thread t;\n  cudaEventRecord(e);\n}\n";
  const auto findings = check_cuda_source(source, {});
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].line, 3);
  EXPECT_EQ(findings[1].line, 4);
  EXPECT_EQ(findings[2].line, 5);
}

TEST(CudaStaticChecks, StripCommentsKeepsLinesAndStrings) {
  EXPECT_EQ(strip_comments("a // b\nc /* d\ne */ f"), "a     \nc     \n     f");
  EXPECT_EQ(strip_comments("s = \"// x /* y\"; // z"), "s = \"// x /* y\";     ");
  EXPECT_EQ(strip_comments("c = '\"'; // q"), "c = '\"';     ");
  EXPECT_EQ(strip_comments("a = \"\\\"// still a string\";"), "a = \"\\\"// still a string\";");
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
