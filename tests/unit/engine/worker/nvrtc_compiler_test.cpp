// NVRTC compilation (no GPU needed): real sm_90 cubins, diagnostics mapped
// to the candidate's own lines, and the content-addressed cubin cache.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/worker/compile_diagnostics.h"
#include "engine/worker/cubin_cache.h"
#include "engine/worker/nvrtc_compiler.h"
#include "temp_directory.h"

namespace {

using namespace hiera::engine::worker;

const char* kSaxpy = R"(extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

TEST(NvrtcCompiler, CompilesToAnSm90Cubin) {
  NvrtcCompiler compiler(std::nullopt);
  CompileRequest request;
  request.source = kSaxpy;
  const CompileResult result = compiler.compile(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.cache_hit);
  ASSERT_GE(result.cubin.size(), 4u);
  EXPECT_EQ(result.cubin.substr(0, 4), std::string("\x7f" "ELF", 4));
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_EQ(result.key.size(), 64u);
  EXPECT_GT(result.compile_ms, 0.0);
}

TEST(NvrtcCompiler, LowersKernelNamesForLaunching) {
  NvrtcCompiler compiler(std::nullopt);
  CompileRequest request;
  request.source = std::string(kSaxpy) + "template <typename T> __global__ void scale(T* y, T s) { y[threadIdx.x] *= s; }\n" +
                   "__global__ void plain(float* y) { y[0] = 1.0f; }\n";
  request.name_expressions = {"saxpy", "scale<float>", "plain"};
  const CompileResult result = compiler.compile(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.lowered_names.at("saxpy"), "saxpy");
  EXPECT_EQ(result.lowered_names.at("scale<float>").rfind("_Z5scaleIfE", 0), 0u) << result.lowered_names.at("scale<float>");
  EXPECT_EQ(result.lowered_names.at("plain"), "_Z5plainPf");
}

TEST(NvrtcCompiler, ErrorsCarryDiagnosticsOnTheCandidatesOwnLines) {
  NvrtcCompiler compiler(std::nullopt);
  CompileRequest request;
  // Two prelude lines, then the candidate: its line 3 holds the error.
  request.source = "#define PRELUDE 1\n#define PRELUDE2 2\n"
                   "extern \"C\" __global__ void k(float* y) {\n"
                   "  int i = threadIdx.x;\n"
                   "  y[i] = undefined_name;\n"
                   "}\n";
  request.line_offset = 2;
  const CompileResult result = compiler.compile(request);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.cubin.empty());
  EXPECT_NE(result.log.find("undefined_name"), std::string::npos) << result.log;
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.log;
  EXPECT_EQ(result.diagnostics[0].line, 3);
  EXPECT_EQ(result.diagnostics[0].column, 10);
  EXPECT_EQ(result.diagnostics[0].severity, "error");
  EXPECT_NE(result.diagnostics[0].message.find("identifier \"undefined_name\" is undefined"), std::string::npos);
}

TEST(NvrtcCompiler, InvalidArchitecturesAreRefused) {
  NvrtcCompiler compiler(std::nullopt);
  CompileRequest request;
  request.source = kSaxpy;
  for (const char* arch : {"compute_90", "sm90", "sm_90; rm -rf /", ""}) {
    request.arch = arch;
    EXPECT_THROW(compiler.compile(request), CompileError) << arch;
  }
  request.arch = "sm_90a";
  EXPECT_TRUE(compiler.compile(request).ok);
}

TEST(NvrtcCompiler, TheCacheHitsOnTheSameInputsAndMissesOnAnyChange) {
  const hiera::testing::TempDirectory dir("hiera-worker-test-");
  NvrtcCompiler compiler(dir.path());
  CompileRequest request;
  request.source = kSaxpy;
  request.options = {"-DVARIANT=1"};
  const CompileResult first = compiler.compile(request);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / (first.key + ".cubin")));

  const CompileResult second = compiler.compile(request);
  EXPECT_TRUE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);

  request.options = {"-DVARIANT=2"};
  const CompileResult other_options = compiler.compile(request);
  EXPECT_FALSE(other_options.cache_hit);
  EXPECT_NE(other_options.key, first.key);

  request.options = {"-DVARIANT=1"};
  request.arch = "sm_80";
  const CompileResult other_arch = compiler.compile(request);
  EXPECT_FALSE(other_arch.cache_hit);
  EXPECT_NE(other_arch.key, first.key);

  // A second compiler on the same directory (another worker) hits too.
  request.arch = "sm_90";
  EXPECT_TRUE(NvrtcCompiler(dir.path()).compile(request).cache_hit);

  // Lowered names are cached with the cubin.
  request.name_expressions = {"saxpy"};
  EXPECT_FALSE(compiler.compile(request).cache_hit);
  const CompileResult named = compiler.compile(request);
  EXPECT_TRUE(named.cache_hit);
  EXPECT_EQ(named.lowered_names.at("saxpy"), "saxpy");
}

TEST(NvrtcCompiler, FailedCompilesAreNotCached) {
  const hiera::testing::TempDirectory dir("hiera-worker-test-");
  NvrtcCompiler compiler(dir.path());
  CompileRequest request;
  request.source = "__global__ void k() { nope; }";
  EXPECT_FALSE(compiler.compile(request).ok);
  EXPECT_FALSE(compiler.compile(request).cache_hit);
}

TEST(CubinCacheKey, IsStableAndSeparatesEveryField) {
  const std::vector<std::string> none;
  const std::vector<std::string> o3 = {"-O3"};
  const std::string key = cubin_cache_key({"src", o3, "sm_90", "13.0", none});
  EXPECT_EQ(key, cubin_cache_key({"src", o3, "sm_90", "13.0", none}));
  // A fixed value: the key must not change between runs, builds or machines.
  EXPECT_EQ(key, cubin_cache_key({std::string("src"), std::vector<std::string>{"-O3"}, "sm_90", "13.0", none}));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, cubin_cache_key({"src ", o3, "sm_90", "13.0", none}));
  EXPECT_NE(key, cubin_cache_key({"src", none, "sm_90", "13.0", none}));
  EXPECT_NE(key, cubin_cache_key({"src", o3, "sm_80", "13.0", none}));
  EXPECT_NE(key, cubin_cache_key({"src", o3, "sm_90", "13.1", none}));
  EXPECT_NE(key, cubin_cache_key({"src", o3, "sm_90", "13.0", std::vector<std::string>{"k"}}));
  // Field boundaries count: ("ab", ["c"]) is not ("a", ["bc"]).
  EXPECT_NE(cubin_cache_key({"ab", std::vector<std::string>{"c"}, "sm_90", "13.0", none}),
            cubin_cache_key({"a", std::vector<std::string>{"bc"}, "sm_90", "13.0", none}));
  EXPECT_NE(cubin_cache_key({"a", std::vector<std::string>{"b", "c"}, "sm_90", "13.0", none}),
            cubin_cache_key({"a", std::vector<std::string>{"b c"}, "sm_90", "13.0", none}));
}

TEST(CompileDiagnostics, ParsesSeveritiesColumnsAndThePrelude) {
  const std::string source = "line one\n\tx = y;\n    z = w;\n";
  const std::string log =
      "k.cu(1): error: in the prelude\n  line one\n  ^\n\n"
      "k.cu(2): warning #177-D: variable \"x\" was declared but never referenced\n  \tx = y;\n              ^\n\n"
      "k.cu(3): catastrophic error: cannot open source file \"nope.h\"\n\n"
      "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
      "1 catastrophic error detected in the compilation of \"k.cu\".\n";
  const auto d = parse_nvrtc_log(log, source, 1);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].line, 0);
  EXPECT_NE(d[0].message.find("(in the prelude, line 1)"), std::string::npos);
  EXPECT_EQ(d[1].severity, "warning");
  EXPECT_EQ(d[1].line, 1);
  EXPECT_EQ(d[1].column, 6);  // the caret under the 'y', after a tab shown as 8 columns
  EXPECT_EQ(d[2].severity, "error");
  EXPECT_EQ(d[2].line, 2);
  EXPECT_EQ(d[2].column, 0);
  EXPECT_EQ(d[2].message, "cannot open source file \"nope.h\"");
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
