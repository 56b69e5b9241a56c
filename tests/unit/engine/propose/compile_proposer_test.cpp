// The torch.compile proposer: its candidates' exact text (golden files under
// tests/fixtures/propose/compile/; HIERA_UPDATE_FIXTURES=1 rewrites them from
// the current output, for review in the diff), each proposed once per run,
// nothing for CUDA targets or a source without Model, and how a source's
// torch.compile mode is read back (the report uses it).
#include "engine/propose/compile_proposer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include "build_paths.h"

namespace hiera::engine::propose {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(::hiera::testing::source_dir()) / "tests" / "fixtures" / "propose" / "compile";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_golden(const std::string& actual, const std::string& name) {
  const fs::path path = kFixtures / (name + ".py.golden");
  if (std::getenv("HIERA_UPDATE_FIXTURES")) std::ofstream(path, std::ios::binary) << actual;
  ASSERT_TRUE(fs::exists(path)) << "missing " << path << " (HIERA_UPDATE_FIXTURES=1 writes it)";
  EXPECT_EQ(actual, read(path)) << name << " differs from " << path << " (HIERA_UPDATE_FIXTURES=1 rewrites it)";
}

ProposalRequest s1_request(int count = 1) {
  ProposalRequest r;
  r.task_name = "reference.py::Model";
  r.language = Language::Python;
  r.space = knowledge::Space::S1;
  r.region = "whole graph";
  r.reference_source = read(kFixtures / "reference.py");
  r.count = count;
  return r;
}

Attempt attempt_of(const Candidate& c, std::string id) {
  Attempt a;
  a.candidate = c;
  a.candidate.id = std::move(id);
  return a;
}

Attempt verified(const Candidate& c, std::string id, double speedup) {
  Attempt a = attempt_of(c, std::move(id));
  a.compiled = a.correct = true;
  a.speedup = speedup;
  return a;
}

TEST(CompileProposer, TheReferenceCompiledInItsDefaultModeThenMaxAutotuneMatchTheirGoldenFiles) {
  CompileProposer proposer;
  EXPECT_EQ(proposer.name(), "torch.compile");
  EXPECT_FALSE(proposer.proposes_for_graph());
  // max-autotune waits until the default mode leads: the first turn has the default mode alone.
  ProposalRequest r = s1_request(2);
  const auto first = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(first.size(), 1u);
  r.history.push_back(verified(first[0], "c1", 1.4));
  const auto second = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(second.size(), 1u);
  for (const auto& c : {first[0], second[0]}) {
    EXPECT_EQ(c.proposer, "torch.compile");
    EXPECT_EQ(c.space, knowledge::Space::S1);
    EXPECT_EQ(c.region, "whole graph");
    EXPECT_FALSE(c.rejected);
    // The reference verbatim, then the subclass.
    EXPECT_EQ(c.source.rfind(s1_request().reference_source, 0), 0u);
  }
  EXPECT_EQ(first[0].notes, "torch.compile of the reference (mode default)");
  EXPECT_EQ(second[0].notes, "torch.compile of the reference (mode max-autotune-no-cudagraphs)");
  expect_golden(first[0].source, "reference_default");
  expect_golden(second[0].source, "reference_max_autotune");
  EXPECT_EQ(torch_compile_mode(first[0].source), "default");
  EXPECT_EQ(torch_compile_mode(second[0].source), "max-autotune-no-cudagraphs");
}

TEST(CompileProposer, MaxAutotuneOnlyWhenTheDefaultModeLeadsTheRun) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(2);
  const auto first = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(first.size(), 1u);
  // The default mode failed verification: no minute of autotuning after it.
  r.history.push_back(attempt_of(first[0], "c1"));
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // It passed, but a candidate of hiera's own is faster: still none.
  r.history.back() = verified(first[0], "c1", 1.2);
  Candidate own;
  own.proposer = "knowledge";
  own.source = read(kFixtures / "best_candidate.py");
  r.history.push_back(verified(own, "c2", 1.5));
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // The default mode ahead of it: max-autotune next.
  r.history.back().speedup = 1.1;
  const auto out = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(torch_compile_mode(out[0].source), "max-autotune-no-cudagraphs");
}

TEST(CompileProposer, MaxAutotuneOnlyInARunWithRoomForIt) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(2);
  r.history.push_back(verified(proposer.propose(r, CancellationToken{}).at(0), "c1", 1.4));
  // The default mode leads, but a run of 6 candidates has no minute for autotuning.
  r.budget = 6;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  r.budget = kMaxAutotuneMinBudget - 1;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  r.budget = kMaxAutotuneMinBudget;
  const auto out = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(torch_compile_mode(out[0].source), "max-autotune-no-cudagraphs");
}

TEST(CompileProposer, EachCandidateIsProposedOncePerRun) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  const auto first = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(torch_compile_mode(first[0].source), "default");
  // Asked again in the same run (its history holds the first, verified and leading): the second mode, then nothing.
  r.history.push_back(verified(first[0], "c1", 1.3));
  const auto second = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(torch_compile_mode(second[0].source), "max-autotune-no-cudagraphs");
  r.history.push_back(attempt_of(second[0], "c2"));
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // Another S1 step of the same run: still nothing new.
  r.region = "linear";
  r.count = 4;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // A new run (an empty history) proposes them again: the proposer keeps no state of its own.
  r.history.clear();
  EXPECT_EQ(proposer.propose(r, CancellationToken{}).size(), 1u);
}

TEST(CompileProposer, NothingOnATorchWithoutTorchCompile) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(2);
  r.torch_version = "1.13.0a0+git49444c3";
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  r.torch_version = "2.11.0+cu130";
  EXPECT_EQ(proposer.propose(r, CancellationToken{}).size(), 1u);
  EXPECT_FALSE(has_torch_compile("1.13.0"));
  EXPECT_FALSE(has_torch_compile("0.4.1"));
  EXPECT_TRUE(has_torch_compile("2.0.0"));
  EXPECT_TRUE(has_torch_compile("10.1"));
  EXPECT_TRUE(has_torch_compile(""));         // unknown: verification says
  EXPECT_TRUE(has_torch_compile("nightly"));  // not a number: verification says
}

TEST(CompileProposer, NothingForCudaTargetsOrASourceWithoutModel) {
  CompileProposer proposer;
  ProposalRequest cuda = s1_request(2);
  cuda.language = Language::Cuda;
  cuda.reference_source = "__global__ void scale(float* x, float s) { x[threadIdx.x] *= s; }\n";
  cuda.current_best_source = "__global__ void scale(float* x, float s) { x[threadIdx.x] = x[threadIdx.x] * s; }\n";
  EXPECT_TRUE(proposer.propose(cuda, CancellationToken{}).empty());

  ProposalRequest no_model = s1_request(2);
  no_model.reference_source = "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n";
  EXPECT_TRUE(proposer.propose(no_model, CancellationToken{}).empty());
  // A class whose name only starts with Model is not Model.
  no_model.reference_source = "import torch\n\nclass ModelBase(torch.nn.Module):\n    pass\n";
  EXPECT_TRUE(proposer.propose(no_model, CancellationToken{}).empty());
}

TEST(CompileProposer, TheReferenceIsCompiledInS1StepsOnly) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(2);
  r.space = knowledge::Space::S2;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  r.space = knowledge::Space::S3;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
}

TEST(CompileProposer, HierasBestSoFarIsCompiledOnceInAnyStepAndMatchesItsGoldenFile) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  r.space = knowledge::Space::S3;
  Candidate best;
  best.proposer = "knowledge";
  best.source = read(kFixtures / "best_candidate.py");
  best.recipes = {"linear_bias_addmm"};
  r.history.push_back(attempt_of(best, "c4"));
  r.current_best_source = best.source;
  const auto out = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].space, knowledge::Space::S3);
  EXPECT_EQ(out[0].notes, "torch.compile of the best candidate so far (mode default) (c4)");
  EXPECT_EQ(out[0].recipes, (std::vector<std::string>{"linear_bias_addmm"}));
  expect_golden(out[0].source, "best_default");
  EXPECT_EQ(out[0].source.rfind(best.source, 0), 0u);

  // Once per run.
  r.history.push_back(attempt_of(out[0], "c5"));
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());

  // In an S1 step it comes after the reference's default mode.
  ProposalRequest s1 = s1_request(3);
  s1.current_best_source = best.source;
  const auto three = proposer.propose(s1, CancellationToken{});
  ASSERT_EQ(three.size(), 2u);  // max-autotune waits for the default mode to lead
  EXPECT_EQ(three[0].notes, "torch.compile of the reference (mode default)");
  EXPECT_EQ(three[1].notes, "torch.compile of the best candidate so far (mode default)");
}

TEST(CompileProposer, ABestThatIsTheReferenceOrAlreadyCompiledIsNotCompiledAgain) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  r.space = knowledge::Space::S2;
  r.current_best_source = r.reference_source;
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // The best is the compiled reference itself.
  r.current_best_source = compiled_module(r.reference_source, "Model", kCompileModeDefault);
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  // A best without ModelNew (not a module hiera could subclass).
  r.current_best_source = "import torch\n";
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
}

TEST(CompileProposer, ABestThatLaunchesNvrtcKernelsIsNotCompiled) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  r.space = knowledge::Space::S3;
  const std::string best = read(kFixtures / "best_candidate.py");
  EXPECT_FALSE(launches_nvrtc_kernels(best));
  // The same module with the knowledge proposer's kernel table: torch.compile would trace the ctypes launch.
  r.current_best_source = best + "\n_KERNEL_COMPILERS = {}\n";
  EXPECT_TRUE(launches_nvrtc_kernels(r.current_best_source));
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
  r.current_best_source = best;
  EXPECT_EQ(proposer.propose(r, CancellationToken{}).size(), 1u);
}

TEST(CompileProposer, AModuleWhoseKernelRegionsRunOutsideTheTraceIsCompiled) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  r.space = knowledge::Space::S3;
  // The knowledge proposer's opaque regions: each launch inside a function under _hiera_eager
  // (torch.compiler.disable), so dynamo never reaches the ctypes launch.
  r.current_best_source = read(kFixtures / "best_candidate.py") + "\n_KERNEL_COMPILERS = {}\n\n\ndef _hiera_eager(function):\n"
                          "    return function\n\n\n@_hiera_eager\ndef _hiera_region_y(self, x):\n    return x\n";
  EXPECT_FALSE(launches_nvrtc_kernels(r.current_best_source));
  ASSERT_EQ(proposer.propose(r, CancellationToken{}).size(), 1u);
  // The name alone inside forward's text is not the module-level helper.
  EXPECT_TRUE(launches_nvrtc_kernels("_KERNEL_COMPILERS = {}\nx = _hiera_eager\n"));
}

TEST(CompileProposer, WhereTheCompiledReferenceLeadsHierasFastestCompilableModuleIsCompiled) {
  CompileProposer proposer;
  ProposalRequest r = s1_request(1);
  r.space = knowledge::Space::S3;
  const std::string best = read(kFixtures / "best_candidate.py");
  Candidate compiled_reference, own, with_kernels;
  compiled_reference.source = compiled_module(r.reference_source, "Model", kCompileModeDefault);
  own.source = best;
  own.recipes = {"linear_bias_addmm"};
  with_kernels.source = best + "\n_KERNEL_COMPILERS = {}\n";
  r.history = {verified(compiled_reference, "c1", 2.0), verified(own, "c2", 1.2), verified(with_kernels, "c3", 1.5)};
  r.current_best_source = compiled_reference.source;  // torch.compile of the reference leads
  const auto out = proposer.propose(r, CancellationToken{});
  ASSERT_EQ(out.size(), 1u);
  // c3 is faster but launches NVRTC kernels, which torch.compile cannot trace: c2 is compiled.
  EXPECT_EQ(out[0].notes, "torch.compile of hiera's fastest module that torch.compile can take (mode default) (c2)");
  EXPECT_EQ(out[0].source, compiled_module(best, "ModelNew", kCompileModeDefault));
  EXPECT_EQ(out[0].recipes, (std::vector<std::string>{"linear_bias_addmm"}));
  // Not verified faster than the reference: nothing to build on.
  r.history[1] = verified(own, "c2", 0.97);
  EXPECT_TRUE(proposer.propose(r, CancellationToken{}).empty());
}

TEST(CompileProposer, CancellationIsHonoured) {
  CompileProposer proposer;
  CancellationToken cancel;
  cancel.cancel();
  EXPECT_THROW(proposer.propose(s1_request(), cancel), Cancelled);
}

TEST(CompileProposer, DefinesClassReadsTopLevelClassStatements) {
  EXPECT_TRUE(defines_class("class Model(nn.Module):\n", "Model"));
  EXPECT_TRUE(defines_class("import torch\nclass Model:\n    pass\n", "Model"));
  EXPECT_TRUE(defines_class("x = 1\nclass  ModelNew (Model):\n", "ModelNew"));
  EXPECT_FALSE(defines_class("class ModelNew(Model):\n", "Model"));
  EXPECT_FALSE(defines_class("    class Model(nn.Module):\n", "Model"));  // nested: not the module's
  EXPECT_FALSE(defines_class("# class Model(nn.Module):\n", "Model"));
  EXPECT_FALSE(defines_class("", "Model"));
}

TEST(CompileProposer, TorchCompileModeIsReadFromTheFirstCallOutsideCommentsAndStrings) {
  EXPECT_EQ(torch_compile_mode("y = torch.compile(model)\n"), "default");
  EXPECT_EQ(torch_compile_mode("y = torch.compile(model, mode=\"reduce-overhead\")\n"), "reduce-overhead");
  EXPECT_EQ(torch_compile_mode("y = torch.compile(\n    model,\n    mode='max-autotune',  # tuned\n)\n"), "max-autotune");
  EXPECT_EQ(torch_compile_mode("y = torch.compile(f, fullgraph=True, mode=MODE)\n"), "MODE");
  EXPECT_EQ(torch_compile_mode("y = torch.compile(f, options={'mode': 'x'}, model_mode='y')\n"), "default");
  EXPECT_EQ(torch_compile_mode("y = torch . compile (f)\n"), "default");
  EXPECT_EQ(torch_compile_mode("# torch.compile(f, mode='a')\ns = \"torch.compile(f)\"\n"), std::nullopt);
  EXPECT_EQ(torch_compile_mode("s = '''\ntorch.compile(f)\n'''\nmytorch.compile(f)\n"), std::nullopt);
  EXPECT_EQ(torch_compile_mode("x = torch.compiled(f)\ny = torch.compile\n"), std::nullopt);
  EXPECT_EQ(torch_compile_mode("import torch\n"), std::nullopt);
}

}  // namespace
}  // namespace hiera::engine::propose
