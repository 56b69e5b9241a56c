// The check kernels' NVRTC program (no GPU needed): it embeds check_math.h and
// check_kernels.cu exactly as they are in the tree, and NVRTC compiles every
// kernel of it for sm_90, without FMA contraction and without a warning.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/worker/check_program.h"
#include "engine/worker/nvrtc_compiler.h"
#include "build_paths.h"

namespace {

using namespace hiera::engine::worker;

std::string read_source(const std::string& path) {
  std::ifstream in(std::filesystem::path(::hiera::testing::source_dir()) / path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CheckProgram, EmbedsTheSharedHeaderAndTheKernelsAsTheyAreInTheTree) {
  const std::string math = read_source("engine/worker/check_math.h");
  const std::string kernels = read_source("engine/worker/check_kernels.cu");
  ASSERT_FALSE(math.empty());
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(check_program_source(), "#line 1 \"engine/worker/check_math.h\"\n" + math +
                                        "\n#line 1 \"engine/worker/check_kernels.cu\"\n" + kernels);
}

TEST(CheckProgram, NamesOneKernelOfEachKindPerType) {
  EXPECT_EQ(check_generate_kernel(ScalarType::Float32), "hiera_check_generate<0>");
  EXPECT_EQ(check_compare_kernel(ScalarType::BFloat16), "hiera_check_compare<2>");
  EXPECT_EQ(check_changed_kernel(ScalarType::UInt8), "hiera_check_changed<6>");
  const CompileRequest request = check_compile_request("sm_90");
  EXPECT_EQ(request.name_expressions.size(), 21u);
  EXPECT_EQ(request.options, std::vector<std::string>{"--fmad=false"});
  EXPECT_EQ(request.arch, "sm_90");
}

TEST(CheckProgram, NvrtcCompilesEveryCheckKernelForSm90) {
  NvrtcCompiler compiler(std::nullopt);
  const CompileResult result = compiler.compile(check_compile_request("sm_90"));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_TRUE(result.diagnostics.empty()) << result.log;  // not even a warning
  EXPECT_EQ(result.cubin.substr(0, 4), std::string("\x7f" "ELF", 4));
  ASSERT_EQ(result.lowered_names.size(), 21u);
  // Templates, so C++-mangled: the launch looks them up by these names.
  EXPECT_EQ(result.lowered_names.at("hiera_check_generate<0>"), "_Z20hiera_check_generateILi0EEvPvyiyidd");
  for (const auto& [expression, mangled] : result.lowered_names) {
    EXPECT_EQ(mangled.rfind("_Z", 0), 0u) << expression;
  }
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
