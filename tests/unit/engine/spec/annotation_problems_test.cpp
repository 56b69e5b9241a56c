// annotation_problems: build_spec's messages at the text they are about, per
// kernel, and nothing for a kernel that has no annotations or only estimates'.
#include <gtest/gtest.h>

#include "engine/analysis/analysis.h"
#include "engine/spec/annotation_problems.h"

namespace hiera::engine::spec {
namespace {

namespace an = engine::analysis;

std::vector<std::pair<std::string, std::string>> problems_of(const std::string& text, an::Language language) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : annotation_problems(text, an::analyze(text, language))) {
    out.emplace_back(std::string(p.span.text(text)), p.target + ": " + p.message);
  }
  return out;
}

TEST(AnnotationProblemsTest, CudaProblemsAtTheirTokensPerKernel) {
  const std::string text =
      "// hiera: size N=1024\n"
      "// hiera: arg x in float32[N]\n"
      "// hiera: launch grid=N/256\n"
      "__global__ void first(float* x) { x[threadIdx.x] = 0; }\n"
      "// hiera: atol=abc; ulp=2\n"
      "__global__ void second(float* y) { y[threadIdx.x] = 1; }\n"
      "__global__ void bare(float* z) { z[threadIdx.x] = 2; }\n";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"in", "first: unknown role 'in' (input, output, inout, scalar)"},
      {"launch", "first: launch needs block=..."},
      {"// hiera: size N=1024", "first: launch contract: no arguments: annotate each kernel parameter, in order, e.g. "
                                "'// hiera: arg x input float32[N]'"},
      {"// hiera: size N=1024", "first: launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'"},
      {"abc", "second: atol must be a non-negative number, got 'abc'"},
      {"ulp", "second: unknown key 'ulp' (known: atol, rtol, atol.DTYPE, rtol.DTYPE, allow, deterministic, nan, stateless, "
              "inplace, outputs, spaces, libraries, target, budget, time, compile, memory, flops, bytes; directives: size, "
              "second, range, shape, arg, launch)"},
  };
  EXPECT_EQ(problems_of(text, an::Language::Cuda), expected);
}

TEST(AnnotationProblemsTest, WellFormedOrAbsentAnnotationsHaveNone) {
  const std::string estimates_only =
      "// hiera: size N=1048576\n"
      "// hiera: flops=2*N bytes=12*N\n"
      "__global__ void saxpy(int n, float a, float* x, float* y) {}\n"
      "__global__ void plain(float* x) {}\n";
  EXPECT_EQ(problems_of(estimates_only, an::Language::Cuda), (std::vector<std::pair<std::string, std::string>>{}));
  const std::string complete =
      "// hiera: size N=1024\n"
      "// hiera: arg x output float32[N]\n"
      "// hiera: launch grid=N/256 block=256\n"
      "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n";
  EXPECT_EQ(problems_of(complete, an::Language::Cuda), (std::vector<std::pair<std::string, std::string>>{}));
}

TEST(AnnotationProblemsTest, ContractProblemsNameTheKernelsParameters) {
  const std::string text =
      "// hiera: size N=1024\n"
      "// hiera: arg y output float32[N]\n"
      "// hiera: arg x input float32[N]\n"
      "// hiera: launch grid=N/256 block=256\n"
      "__global__ void k(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }\n";
  EXPECT_EQ(problems_of(text, an::Language::Cuda),
            (std::vector<std::pair<std::string, std::string>>{
                {"// hiera: size N=1024", "k: launch contract: the arg annotations give (y, x) but kernel k takes (x, y)"}}));
}

TEST(AnnotationProblemsTest, PythonFileAsOneModule) {
  const std::string text =
      "import torch\n"
      "class Model(torch.nn.Module):  # hiera: atol=\n"
      "    def forward(self, x):\n"
      "        return x\n"
      "# hiera: launch grid=1 block=1; target=0.5x\n";
  EXPECT_EQ(problems_of(text, an::Language::Python),
            (std::vector<std::pair<std::string, std::string>>{
                {"=", ": missing value for 'atol'"},
                {"launch", ": clause 'interface.launch' applies to cuda targets only"},
                {"0.5x", ": target must be at least 1x (a speedup over the reference), got '0.5x'"},
            }));
}

}  // namespace
}  // namespace hiera::engine::spec
