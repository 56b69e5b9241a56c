// The CUDA hint rules on small kernels, each with the case it must flag and
// the cases it must leave alone.
#include "engine/analysis/cuda_hints.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "engine/analysis/analysis.h"
#include "engine/analysis/cuda_lexer.h"

namespace hiera::engine::analysis {
namespace {

struct Found {
  std::string rule;
  std::string at;  // the text under the hint's span
  bool operator==(const Found&) const = default;
};

void PrintTo(const Found& f, std::ostream* os) { *os << f.rule << " @ '" << f.at << "'"; }

std::vector<Hint> hints_of(const std::string& source) {
  CudaScan scan = scan_cuda(source, lex_cuda(source).tokens);
  std::vector<Hint> out;
  for (std::size_t f = 0; f < scan.functions.size(); ++f) {
    scan_cuda_body(source, scan, f);
    for (auto& h : cuda_hints(source, scan, f)) out.push_back(std::move(h));
  }
  return out;
}

std::vector<Found> found(const std::string& source) {
  std::vector<Found> out;
  for (const auto& h : hints_of(source)) out.push_back({h.rule, source.substr(h.span.begin, h.span.size())});
  return out;
}

TEST(CudaHintsTest, UncoalescedAccessNamesTheStride) {
  const std::string source =
      "__global__ void k(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = x[i * 16] + x[i];\n"
      "}\n";
  const auto hints = hints_of(source);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].rule, "cuda.uncoalesced_access");
  EXPECT_EQ(hints[0].severity, Severity::Warning);
  EXPECT_EQ(hints[0].recipe, "s3_shared_memory_transpose");
  EXPECT_EQ(hints[0].message, "'x[i * 16]': consecutive threads (threadIdx.x, threadIdx.x + 1) are 16 elements apart, so a warp's loads are not coalesced");
}

TEST(CudaHintsTest, AThreadWalkingItsOwnRowIsAReductionNotATranspose) {
  const std::string source =
      "__global__ void row_sum(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {\n"
      "  int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (row >= rows) return;\n"
      "  float sum = 0.0f;\n"
      "  for (int c = 0; c < cols; ++c) { sum += x[row * cols + c]; }\n"
      "  out[row] = sum;\n"
      "}\n"
      "__global__ void col_sum(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {\n"
      "  int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (col >= cols) return;\n"
      "  float sum = 0.0f;\n"
      "  for (int r = 0; r < rows; ++r) { sum += x[r * cols + col]; }\n"
      "  out[col] = sum;\n"
      "}\n";
  const auto hints = hints_of(source);
  ASSERT_EQ(hints.size(), 1u);  // the column sum's loads are neighbours: coalesced
  EXPECT_EQ(hints[0].rule, "cuda.uncoalesced_access");
  EXPECT_EQ(hints[0].recipe, "s3_warp_shuffle_row_reduction");
  EXPECT_EQ(hints[0].message, "'x[row * cols + c]': each thread reads its own row, 'c' stepping along it, so a warp's loads "
                              "are a runtime stride apart; give a row to a warp (or block) whose lanes read consecutive "
                              "elements and combine with __shfl_down_sync");
}

// cuda.grid_overrun reads across functions (the launcher's grid, the kernel's
// bounds check): it comes from the whole file's analysis.
std::vector<Found> file_found(const std::string& source) {
  std::vector<Found> out;
  for (const auto& h : analyze(source, Language::Cuda).hints) out.push_back({h.rule, source.substr(h.span.begin, h.span.size())});
  return out;
}

TEST(CudaHintsTest, ARoundedUpGridIntoAnUncheckedKernelOverruns) {
  const std::string kernel =
      "__global__ void scale(float* y, const float* x, float a) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  y[i] = a * x[i];\n"
      "}\n";
  const std::string checked =
      "__global__ void scale(float* y, const float* __restrict__ x, float a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i];\n"
      "}\n";
  const std::string over = "void run(float* y, const float* x, int rows) {\n  scale<<<(rows + 100) / 100, 100>>>(y, x, 2.0f);\n}\n";
  std::vector<Hint> overruns;
  for (const auto& h : analyze(kernel + over, Language::Cuda).hints) {
    if (h.rule == "cuda.grid_overrun") overruns.push_back(h);
  }
  ASSERT_EQ(overruns.size(), 1u);
  EXPECT_EQ((kernel + over).substr(overruns[0].span.begin, overruns[0].span.size()), "(rows + 100) / 100");
  EXPECT_EQ(overruns[0].severity, Severity::Warning);
  EXPECT_EQ(overruns[0].message, "grid '(rows + 100) / 100' rounds rows up by a whole block more than the ceiling (rows + 99) "
                                 "/ 100, and 'scale' never compares its index with a size: the last block's extra threads "
                                 "reach 'y[i]' past the end");
  // The usual ceiling through a variable, into the same kernel: still past the end when n % 256 != 0.
  const std::string variable = "void run(float* y, const float* x, int n) {\n  int blocks = (n + 255) / 256;\n"
                               "  scale<<<blocks, 256>>>(y, x, 2.0f);\n}\n";
  const auto via = file_found(kernel + variable);
  EXPECT_NE(std::find(via.begin(), via.end(), Found{"cuda.grid_overrun", "blocks"}), via.end());
  // A kernel that checks its index, a grid that does not round, or a grid of another form: no overrun.
  const std::string guarded = "void run(float* y, const float* x, int n) {\n  scale<<<(n + 255) / 256, 256>>>(y, x, 2.0f, n);\n}\n";
  EXPECT_EQ(file_found(checked + guarded), std::vector<Found>{});
  for (const std::string grid : {"n / 256", "(n + 255) >> 8", "(2 + 255) / 256", "(n - 1) / 256 + 1", "(n + 0) / 256"}) {
    SCOPED_TRACE(grid);
    const std::string launch = "void run(float* y, const float* x, int n) {\n  scale<<<" + grid + ", 256>>>(y, x, 2.0f);\n}\n";
    for (const auto& f : file_found(kernel + launch)) EXPECT_NE(f.rule, "cuda.grid_overrun");
  }
}

TEST(CudaHintsTest, ReadOnlyPointerGetsConstRestrictEdits) {
  const std::string source = "__global__ void k(float *x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }\n";
  const auto hints = hints_of(source);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].rule, "cuda.missing_restrict");
  EXPECT_EQ(source.substr(hints[0].span.begin, hints[0].span.size()), "float *x");
  ASSERT_EQ(hints[0].fix.size(), 2u);
  // Applying the edits (back to front) gives the declaration the hint asks for.
  std::string fixed = source;
  for (auto it = hints[0].fix.rbegin(); it != hints[0].fix.rend(); ++it) fixed.replace(it->span.begin, it->span.size(), it->new_text);
  EXPECT_EQ(fixed, "__global__ void k(const float * __restrict__x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }\n");
}

TEST(CudaHintsTest, PointersThatAreWrittenOrEscapeAreLeftAlone) {
  EXPECT_EQ(found("__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n"), std::vector<Found>{});
  EXPECT_EQ(found("__global__ void k(float* x, float* y) { y[0] = x[0]; g(x); }\n"), std::vector<Found>{});
  EXPECT_EQ(found("__global__ void k(float* x) { atomicAdd(&x[0], 1.f); }\n"), std::vector<Found>{});
  EXPECT_EQ(found("__global__ void k(const float* __restrict__ x, float* y) { y[0] = x[0]; }\n"), std::vector<Found>{});
}

TEST(CudaHintsTest, BoundsCheckLooksForAComparisonOfTheIndex) {
  const std::string unchecked = "__global__ void k(float* __restrict__ y) { y[blockIdx.x * blockDim.x + threadIdx.x] = 0.f; }\n";
  EXPECT_EQ(found(unchecked), (std::vector<Found>{{"cuda.missing_bounds_check", "y[blockIdx.x * blockDim.x + threadIdx.x]"}}));
  EXPECT_EQ(found("__global__ void k(float* __restrict__ y, int n) {\n"
                  "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  int i = t * 2;\n"
                  "  if (t >= n) return;\n"
                  "  y[i / 2] = 0.f;\n"
                  "}\n"),
            std::vector<Found>{});
}

TEST(CudaHintsTest, BankConflictOnAColumnReadIsFixedByPadding) {
  const std::string source =
      "__global__ void k(float* __restrict__ out) {\n"
      "  __shared__ float t[32][32];\n"
      "  t[threadIdx.y][threadIdx.x] = 0.f;\n"
      "  out[threadIdx.x] = t[threadIdx.x][threadIdx.y];\n"
      "}\n";
  const auto hints = hints_of(source);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].rule, "cuda.shared_bank_conflict");
  EXPECT_EQ(source.substr(hints[0].span.begin, hints[0].span.size()), "t[threadIdx.x][threadIdx.y]");
  ASSERT_EQ(hints[0].fix.size(), 1u);
  EXPECT_EQ(source.substr(hints[0].fix[0].span.begin, hints[0].fix[0].span.size()), "32");
  EXPECT_EQ(hints[0].fix[0].new_text, "33");
  EXPECT_NE(hints[0].message.find("32-way bank conflict"), std::string::npos);
}

TEST(CudaHintsTest, AtomicsAndDoublesCountOnlyInsideLoops) {
  EXPECT_EQ(found("__global__ void k(float* s, const float* __restrict__ v) {\n"
                  "  atomicAdd(s, v[0] * 0.5);\n"
                  "  for (int j = 0; j < 4; ++j) atomicMax(s + j, 1);\n"
                  "}\n"),
            (std::vector<Found>{{"cuda.atomic_in_loop", "atomicMax(s + j, 1)"}}));
  const auto doubles = hints_of("__device__ float f(float v) { for (int j = 0; j < 4; ++j) { double d = v; v += 1e-3 * d; } return v; }\n");
  ASSERT_EQ(doubles.size(), 1u);  // the function works in double: its literal is not flagged
  EXPECT_EQ(doubles[0].message, "double-precision variable in a loop of 'f'");
  const std::string literal = "__device__ float g(float v) { for (int j = 0; j < 4; ++j) v *= 0.99; return v; }\n";
  const auto promoted = hints_of(literal);
  ASSERT_EQ(promoted.size(), 1u);
  EXPECT_EQ(promoted[0].fix, (std::vector<TextEdit>{{{literal.find("0.99") + 4, literal.find("0.99") + 4}, "f"}}));
}

TEST(CudaHintsTest, BlockSizesAreCheckedWhenTheyEvaluate) {
  const auto hints = hints_of(
      "void run() {\n"
      "  k<<<1, 1025>>>();\n"
      "  k<<<1, dim3(32, 3)>>>();\n"
      "  k<<<1, 48>>>();\n"
      "  int t = 0; k<<<1, t>>>();\n"
      "}\n");
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[0].severity, Severity::Error);
  EXPECT_EQ(hints[0].message, "block of 1025 threads: more than 1024, the launch of 'k' fails");
  EXPECT_EQ(hints[1].severity, Severity::Warning);
  EXPECT_EQ(hints[1].message, "block of 48 threads is not a multiple of 32: its last warp runs 16 of 32 lanes");
}

TEST(CudaHintsTest, LaunchInALoopOnlyWhenItUsesTheLoopVariable) {
  const std::string source =
      "void run(float* x) {\n"
      "  for (int b = 0; b < 4; ++b) k<<<1, 256>>>(x + b * 256);\n"
      "  for (int it = 0; it < 4; ++it) k<<<1, 256>>>(x);\n"
      "}\n";
  EXPECT_EQ(found(source), (std::vector<Found>{{"cuda.launch_in_loop", "k<<<1, 256>>>(x + b * 256)"}}));
}

}  // namespace
}  // namespace hiera::engine::analysis
