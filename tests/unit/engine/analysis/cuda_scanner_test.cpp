// The CUDA scanner: functions and their parameters, launch sites with the
// host code that sizes them, the body facts hints read, and recovery.
#include "engine/analysis/cuda_scanner.h"

#include <gtest/gtest.h>

#include "engine/analysis/cuda_lexer.h"

namespace hiera::engine::analysis {
namespace {

struct Scanned {
  std::string source;
  CudaScan scan;
  explicit Scanned(std::string text) : source(std::move(text)), scan(scan_cuda(source, lex_cuda(source).tokens)) {
    for (std::size_t f = 0; f < scan.functions.size(); ++f) scan_cuda_body(source, scan, f);
  }
  std::string text(Span s) const { return source.substr(s.begin, s.end - s.begin); }
  std::vector<LaunchSite> launches() const {
    std::vector<LaunchSite> out;
    for (const auto& b : scan.bodies) out.insert(out.end(), b.launches.begin(), b.launches.end());
    return out;
  }
};

TEST(CudaScannerTest, KernelsDeviceAndHostFunctionsWithParameters) {
  const Scanned s(
      "namespace ops {\n"
      "template <typename T, int N>\n"
      "__global__ void __launch_bounds__(256, 2) scale(const T* __restrict__ x, T * y, float const* z, int n = 4, float) {}\n"
      "}  // namespace ops\n"
      "extern \"C\" __device__ __forceinline__ float twice(float v) { return 2 * v; }\n"
      "__global__ void declared(float* p);\n"
      "static void host(void) {}\n");
  ASSERT_EQ(s.scan.functions.size(), 4u);
  const CudaFunction& k = s.scan.functions[0];
  EXPECT_EQ(k.kind, CudaFunctionKind::Kernel);
  EXPECT_EQ(k.name, "scale");
  EXPECT_EQ(k.template_parameters, "typename T, int N");
  EXPECT_EQ(k.launch_bounds, "256, 2");
  EXPECT_EQ(s.text(k.span).substr(0, 21), "template <typename T,");
  EXPECT_EQ(s.text(k.name_span), "scale");
  EXPECT_EQ(s.text(*k.body), "{}");
  ASSERT_EQ(k.parameters.size(), 5u);
  EXPECT_EQ(k.parameters[0], (CudaParameter{"x", "const T* __restrict__", k.parameters[0].span, true, true, true}));
  EXPECT_EQ(s.text(k.parameters[0].span), "const T* __restrict__ x");
  EXPECT_EQ(k.parameters[1].type, "T*");
  EXPECT_FALSE(k.parameters[1].is_const);
  EXPECT_EQ(k.parameters[2].type, "float const*");
  EXPECT_TRUE(k.parameters[2].is_const);
  EXPECT_EQ(k.parameters[3].name, "n");
  EXPECT_FALSE(k.parameters[3].pointer);
  EXPECT_EQ(k.parameters[4].name, "");  // unnamed
  EXPECT_EQ(k.parameters[4].type, "float");
  EXPECT_EQ(s.scan.functions[1].kind, CudaFunctionKind::Device);
  EXPECT_EQ(s.scan.functions[1].name, "twice");
  EXPECT_EQ(s.scan.functions[2].name, "declared");
  EXPECT_FALSE(s.scan.functions[2].body.has_value());
  EXPECT_TRUE(s.scan.functions[2].complete);
  EXPECT_EQ(s.scan.functions[3].kind, CudaFunctionKind::Host);
  EXPECT_TRUE(s.scan.functions[3].parameters.empty());
  EXPECT_TRUE(s.scan.problems.empty());
}

TEST(CudaScannerTest, ConstantsFromDefinesAndConstIntegers) {
  const Scanned s("#define TILE 32\n#define F(x) x\nconstexpr int kRows = TILE * 4;\nconst int kBad = f(3);\n#define HALF (TILE / 2)  // c\n");
  EXPECT_EQ(s.scan.constants, (SizeMap{{"HALF", 16}, {"TILE", 32}, {"kRows", 128}}));
}

TEST(CudaScannerTest, ChevronLaunchWithSizingAndBlockThreads) {
  const Scanned s(
      "#define BS 128\n"
      "void run(float* x, int n, cudaStream_t st) {\n"
      "  int threads = BS * 2;\n"
      "  int blocks = (n + threads - 1) / threads;\n"
      "  ns::kernel<float, 4><<<blocks, threads, 64 * sizeof(float), st>>>(x, n);\n"
      "  dim3 block(8, 8, 2);\n"
      "  dim3 grid = dim3(n / 64);\n"
      "  other<<<grid, block>>>(x);\n"
      "}\n");
  const auto launches = s.launches();
  ASSERT_EQ(launches.size(), 2u);
  const LaunchSite& a = launches[0];
  EXPECT_EQ(a.kernel, "kernel");
  EXPECT_EQ(s.text(a.span), "ns::kernel<float, 4><<<blocks, threads, 64 * sizeof(float), st>>>(x, n)");
  EXPECT_EQ(s.text(a.kernel_span), "kernel");
  EXPECT_EQ(a.grid, "blocks");
  EXPECT_EQ(a.block, "threads");
  EXPECT_EQ(a.shared_bytes, "64 * sizeof(float)");
  EXPECT_EQ(a.stream, "st");
  EXPECT_EQ(a.arguments, (std::vector<std::string>{"x", "n"}));
  EXPECT_EQ(a.caller, "run");
  EXPECT_FALSE(a.in_loop);
  EXPECT_EQ(a.block_threads, 256);
  ASSERT_EQ(a.sizing.size(), 2u);
  EXPECT_EQ(a.sizing[0].name, "threads");
  EXPECT_EQ(a.sizing[0].expression, "BS * 2");
  EXPECT_EQ(s.text(a.sizing[0].span), "int threads = BS * 2");
  EXPECT_EQ(a.sizing[1].name, "blocks");
  const LaunchSite& b = launches[1];
  EXPECT_EQ(b.block_threads, 128);
  ASSERT_EQ(b.sizing.size(), 2u);
  EXPECT_EQ(s.text(b.sizing[0].span), "dim3 block(8, 8, 2)");
  EXPECT_EQ(b.sizing[1].expression, "dim3(n / 64)");
}

TEST(CudaScannerTest, CudaLaunchKernelAndLaunchesInLoops) {
  const Scanned s(
      "void run(float* x) {\n"
      "  for (int i = 0; i < 4; ++i) k<<<1, 32>>>(x + i);\n"
      "  cudaLaunchKernel(reinterpret_cast<const void*>(&k2<float>), dim3(4), dim3(64), args, 0, s);\n"
      "}\n");
  const auto launches = s.launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_TRUE(launches[0].in_loop);
  EXPECT_EQ(launches[1].form, LaunchForm::LaunchKernel);
  EXPECT_EQ(launches[1].kernel, "k2");
  EXPECT_EQ(launches[1].grid, "dim3(4)");
  EXPECT_EQ(launches[1].block, "dim3(64)");
  EXPECT_EQ(launches[1].block_threads, 64);
  EXPECT_EQ(launches[1].stream, "s");
  EXPECT_EQ(launches[1].arguments, (std::vector<std::string>{"args"}));
  ASSERT_EQ(s.scan.bodies[0].loops.size(), 1u);
  EXPECT_EQ(s.scan.bodies[0].loops[0].variable, "i");
}

TEST(CudaScannerTest, BodyFactsForTheHints) {
  const Scanned s(
      "__global__ void k(float* a, double* d, int n) {\n"
      "  __shared__ float tile[32][33];\n"
      "  int i = threadIdx.x;\n"
      "  while (i < n) { a[i] += 1.5; i += 32; }\n"
      "  do { double v = 2.0; d[0] = v; } while (n-- > 0);\n"
      "  if (i == 0) atomicAdd(&a[0], tile[i][0]);\n"
      "}\n");
  const CudaBody& body = s.scan.bodies.at(0);
  ASSERT_EQ(body.shared_arrays.size(), 1u);
  EXPECT_EQ(body.shared_arrays[0].name, "tile");
  EXPECT_EQ(body.shared_arrays[0].type, "float");
  EXPECT_EQ(s.text(body.shared_arrays[0].dim_spans[1]), "33");
  ASSERT_EQ(body.loops.size(), 2u);  // while and do-while
  EXPECT_EQ(body.conditions.size(), 3u);
  ASSERT_EQ(body.subscripts.size(), 4u);  // the declaration tile[32][33] is not an access
  EXPECT_TRUE(body.subscripts[0].written);   // a[i] +=
  EXPECT_TRUE(body.subscripts[1].written);   // d[0] =
  EXPECT_FALSE(body.subscripts[2].written);  // a[0] (its address is taken)
  EXPECT_EQ(body.subscripts[3].indices.size(), 2u);
  EXPECT_EQ(body.float_literals.size(), 2u);
  EXPECT_EQ(body.double_tokens.size(), 1u);
  ASSERT_EQ(body.calls.size(), 1u);
  EXPECT_EQ(s.text(body.calls[0].span), "atomicAdd(&a[0], tile[i][0])");
}

TEST(CudaScannerTest, ABodyLeftOpenEndsAtTheNextKernel) {
  const Scanned s(
      "__global__ void a(float* x) {\n"
      "  if (x) {\n"
      "    x[0] = 1;\n"
      "__global__ void b(float* y) { y[0] = 2; }\n");
  ASSERT_EQ(s.scan.functions.size(), 2u);
  EXPECT_FALSE(s.scan.functions[0].complete);
  EXPECT_EQ(s.text(s.scan.functions[0].span), "__global__ void a(float* x) {\n  if (x) {\n    x[0] = 1;");
  EXPECT_TRUE(s.scan.functions[1].complete);
  ASSERT_EQ(s.scan.problems.size(), 1u);
  EXPECT_EQ(s.scan.problems[0].message, "unclosed '{': the body ends where the next function begins");
  EXPECT_EQ(s.text(s.scan.problems[0].span), "{");
}

TEST(CudaScannerTest, AnInnerBlockLeftOpenEndsAtAColumnZeroBrace) {
  const Scanned s("void f() {\n  if (1) {\n    g();\n}\nvoid h() {}\n");
  ASSERT_EQ(s.scan.functions.size(), 2u);
  EXPECT_TRUE(s.scan.functions[0].complete);
  EXPECT_EQ(s.scan.functions[1].name, "h");
  ASSERT_EQ(s.scan.problems.size(), 1u);
  EXPECT_EQ(s.scan.problems[0].message, "unclosed '{'");
}

TEST(CudaScannerTest, HeadsCutShortAndStrayBraces) {
  const Scanned s("}\n__global__ void k(float* x, int n\n__global__ void m() {}\n");
  ASSERT_EQ(s.scan.functions.size(), 2u);
  EXPECT_EQ(s.scan.functions[0].name, "k");
  EXPECT_FALSE(s.scan.functions[0].complete);
  EXPECT_EQ(s.scan.functions[0].parameters.size(), 2u);
  EXPECT_EQ(s.scan.functions[1].name, "m");
  ASSERT_EQ(s.scan.problems.size(), 2u);
  EXPECT_EQ(s.scan.problems[0].message, "unmatched '}'");
  EXPECT_EQ(s.scan.problems[1].message, "unclosed '(' in the parameter list of 'k'");
}

TEST(CudaScannerTest, StructBodiesAreScopesAndInitializersAreSkipped) {
  const Scanned s("struct P { __device__ float f() { return 1; } };\nint table[] = {1, 2};\nenum class E { A, B };\n"
                  "__global__ void k() {}\n");
  ASSERT_EQ(s.scan.functions.size(), 2u);
  EXPECT_EQ(s.scan.functions[0].name, "f");  // a member function, found inside its struct
  EXPECT_EQ(s.scan.functions[1].name, "k");
  EXPECT_TRUE(s.scan.problems.empty());
}

TEST(CudaScannerTest, EvaluateConstantReadsOnlyTheSizeGrammar) {
  const SizeMap sizes{{"N", 10}};
  EXPECT_EQ(evaluate_constant("(N + 2) * 3 % 7", sizes), 1);
  EXPECT_EQ(evaluate_constant("N << 2", sizes), std::nullopt);
  EXPECT_EQ(evaluate_constant("M + 1", sizes), std::nullopt);
  EXPECT_EQ(evaluate_constant("\"text\"", sizes), std::nullopt);
  EXPECT_EQ(evaluate_constant("N / 0", sizes), std::nullopt);
  EXPECT_EQ(evaluate_constant("", sizes), std::nullopt);
}

}  // namespace
}  // namespace hiera::engine::analysis
