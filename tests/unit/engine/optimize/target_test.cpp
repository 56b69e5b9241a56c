// Targets of `hiera optimize FILE[::SYMBOL]`: which symbol is meant, and the
// clear refusals for everything that cannot be optimized.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/optimize/target.h"
#include "temp_directory.h"
#include "thrown_message.h"

namespace {

using hiera::engine::optimize::make_target;
using hiera::engine::optimize::TargetError;
using hiera::engine::spec::TargetKind;

const char* kModule =
    "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return super(Model, self)\n"
    "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n";

std::string error_of(const std::string& file, const std::string& symbol, const std::string& source) {
  return hiera::testing::thrown_message<TargetError>([&] { make_target(file, symbol, source); }, "(no error)");
}

TEST(OptimizeTarget, PythonDefaultsToModelAndRenamesItForTheBaseline) {
  const auto t = make_target("dir/m.py", "", kModule);
  EXPECT_EQ(t.kind, TargetKind::Pytorch);
  EXPECT_EQ(t.symbol, "Model");
  EXPECT_EQ(t.name(), "m.py::Model");
  EXPECT_EQ(t.reference_source(), kModule);
  const std::string candidate = t.reference_as_candidate();
  EXPECT_NE(candidate.find("class ModelNew(torch.nn.Module):"), std::string::npos);
  EXPECT_NE(candidate.find("super(ModelNew, self)"), std::string::npos);
  EXPECT_EQ(candidate.find("class Model("), std::string::npos);
}

TEST(OptimizeTarget, AModuleNotNamedModelBecomesTheRunnersEntryPoint) {
  const std::string source = "import torch.nn as nn\nclass Block(nn.Module):\n    pass\nclass Other(nn.Module):\n    pass\n"
                             "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n";
  const auto t = make_target("b.py", "Block", source);
  EXPECT_EQ(t.reference_source(), source + "\n\nModel = Block  # added by hiera: the runner's entry point\n");
  EXPECT_EQ(t.reference_as_candidate(), source + "\n\nModelNew = Block\n");
  EXPECT_EQ(error_of("b.py", "", source), "b.py: name the module to optimize (FILE::CLASS); nn.Module classes here: Block, Other");
  EXPECT_EQ(error_of("b.py", "Missing", source), "b.py: no nn.Module class 'Missing' (classes here: Block, Other)");
}

TEST(OptimizeTarget, CudaPicksTheOnlyKernelOrTheNamedOne) {
  const std::string one = "extern \"C\" __global__ void __launch_bounds__(256) saxpy(float* y) {}\n";
  EXPECT_EQ(make_target("k.cu", "", one).symbol, "saxpy");
  EXPECT_EQ(make_target("k.cu", "", one).kind, TargetKind::Cuda);
  const std::string two = one + "__global__ void scale(float* y) {}\n";
  EXPECT_EQ(make_target("k.cuh", "scale", two).symbol, "scale");
  EXPECT_EQ(error_of("k.cu", "", two), "k.cu: name the kernel to optimize (FILE::KERNEL); kernels here: saxpy, scale");
  EXPECT_EQ(error_of("k.cu", "", "void host() {}\n"), "k.cu: name the kernel to optimize (FILE::KERNEL); kernels here: none");
}

TEST(OptimizeTarget, RefusesOtherFilesAndModulesOutsideKernelBenchFormat) {
  EXPECT_EQ(error_of("notes.md", "", ""), "notes.md: hiera optimizes PyTorch modules (.py) and CUDA kernels (.cu, .cuh), not '.md' files");
  EXPECT_EQ(error_of("m.py", "", "import torch\nclass Model(torch.nn.Module):\n    pass\n"),
            "m.py: no get_inputs() function: hiera runs PyTorch modules in KernelBench format (the module, get_inputs() and "
            "get_init_inputs())");
  EXPECT_EQ(error_of("m.py", "", "x = 1\n"), "m.py: name the module to optimize (FILE::CLASS); nn.Module classes here: none");
  EXPECT_THROW(hiera::engine::optimize::load_target("/nonexistent/m.py"), TargetError);
  EXPECT_THROW(hiera::engine::optimize::load_target("m.py::"), TargetError);
}

}  // namespace

namespace {

// A source larger than one job-protocol frame can carry is refused by name and
// size, before it is read (the sparse file here costs no disk).
TEST(OptimizeTarget, ASourceOverTheLimitIsRefusedNamingTheLimitAndItsSize) {
  hiera::testing::TempDirectory dir("hiera-target-");
  const auto file = dir.path() / "big.py";
  std::ofstream(file) << kModule;
  std::filesystem::resize_file(file, 100u << 20);
  const std::string message = hiera::testing::thrown_message<TargetError>(
      [&] { hiera::engine::optimize::load_target(file.string()); }, "(no error)");
  EXPECT_EQ(message, file.string() +
                         ": 100.0 MiB (104857600 bytes) is over the limit of 16 MiB on a source to optimize (a job "
                         "carries it twice, as reference and candidate, in one job-protocol frame of at most 64 MiB)");
  // The same limit for a source given whole (an editor buffer).
  std::string source = kModule;
  source.resize(hiera::engine::optimize::kMaxSourceBytes + 1, '\n');
  EXPECT_EQ(error_of("m.py", "", source),
            "m.py: 16.0 MiB (16777217 bytes) is over the limit of 16 MiB on a source to optimize (a job carries it "
            "twice, as reference and candidate, in one job-protocol frame of at most 64 MiB)");
}

}  // namespace
