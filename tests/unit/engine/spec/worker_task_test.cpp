// to_worker_task: the exact Task JSON of JOB_PROTOCOL.md for a PyTorch module
// and for a CUDA kernel, and how tolerances collapse to the one the task carries.
#include "engine/spec/worker_task.h"

#include <gtest/gtest.h>

#include "engine/spec/spec_builder.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {
namespace {

using nlohmann::json;

const char* kSaxpy =
    "// hiera: size N=16777216\n"
    "// hiera: range N=1024..16777216; second N=1000003\n"
    "// hiera: arg a scalar float32 = 2.5\n"
    "// hiera: arg x input float32[N]\n"
    "// hiera: arg y output float32[N]\n"
    "// hiera: arg n scalar int32 = N\n"
    "// hiera: launch grid=(N+255)/256 block=256\n"
    "// hiera: flops=2*N bytes=12*N\n"
    "// hiera: allow=fp16\n"
    "__global__ void saxpy(float a, const float* x, float* y, int n) {}\n";

const char* kModule =
    "import torch\n"
    "class Model(torch.nn.Module):  # hiera: atol=1e-3, rtol=1e-3; allow=tf32\n"
    "    def forward(self, x):\n"
    "        return torch.relu(x)\n"
    "batch_size = 16\n"
    "dim = 16384\n"
    "def get_inputs():\n"
    "    return [torch.randn(batch_size, dim)]\n"
    "# hiera: second batch_size=3; flops=batch_size*dim; inplace=x\n";

TaskSpec built(TargetKind kind, const std::string& target, const std::string& source, json probe = nullptr) {
  SpecInputs inputs;
  inputs.target = target;
  inputs.kind = kind;
  inputs.source = source;
  if (!probe.is_null()) inputs.probe = probe;
  SpecBuildResult result = build_spec(inputs);
  EXPECT_TRUE(result.ok()) << (result.problems.empty() ? "" : result.problems[0].to_string());
  return result.spec;
}

TEST(WorkerTaskTest, PytorchTaskExactly) {
  const TaskSpec spec = built(TargetKind::Pytorch, "model.py::Model", kModule,
                              json::parse(R"({"sizes": {"batch_size": 16, "dim": 16384},
                                              "outputs": [{"shape": [16, 16384], "dtype": "float32"}]})"));
  EXPECT_EQ(to_worker_task(spec, "REF", "CAND"), json::parse(R"j({
    "kind": "pytorch",
    "reference": {"source": "REF"},
    "candidate": {"source": "CAND"},
    "numerics": {"atol": 0.001, "rtol": 0.001, "allow": ["tf32", "inplace"]},
    "second_inputs": "(lambda g, saved: (g.update({'batch_size': 3}), get_inputs(), g.update(saved))[1])(globals(), {'batch_size': batch_size})",
    "device": "cuda",
    "flops": 262144,
    "bytes": null})j"));
}

TEST(WorkerTaskTest, PytorchTaskBeforeAnyProbeLeavesDefaultTolerancesToTheWorker) {
  const TaskSpec spec = built(TargetKind::Pytorch, "model.py::Model", "class Model: pass\n");
  CandidateTask candidate;
  candidate.device = "cpu";
  EXPECT_EQ(to_worker_task(spec, "REF", "CAND", candidate), json::parse(R"j({
    "kind": "pytorch",
    "reference": {"source": "REF"},
    "candidate": {"source": "CAND"},
    "numerics": {"allow": []},
    "second_inputs": null,
    "device": "cpu",
    "flops": null,
    "bytes": null})j"));
}

TEST(WorkerTaskTest, CudaTaskExactly) {
  const TaskSpec spec = built(TargetKind::Cuda, "kernels.cu::saxpy", kSaxpy);
  CandidateTask candidate;
  candidate.kernel = "saxpy_fast";
  candidate.launch = Launch{{{"(N+1023)/1024", "1", "1"}, {"256", "1", "1"}, "0"}};
  candidate.candidate_options = {"-O3", "--use_fast_math"};
  EXPECT_EQ(to_worker_task(spec, "REF", "CAND", candidate), json::parse(R"j({
    "kind": "cuda",
    "reference": {"source": "REF", "kernel": "saxpy", "options": []},
    "candidate": {"source": "CAND", "kernel": "saxpy_fast", "options": ["-O3", "--use_fast_math"]},
    "contract": {
      "sizes": {"N": 16777216},
      "second_sizes": {"N": 1000003},
      "args": [
        {"name": "a", "role": "scalar", "type": "float32", "value": "2.5"},
        {"name": "x", "role": "input", "type": "float32", "extent": "N"},
        {"name": "y", "role": "output", "type": "float32", "extent": "N"},
        {"name": "n", "role": "scalar", "type": "int32", "value": "N"}],
      "reference_launch": {"grid": ["(N+255)/256", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"},
      "candidate_launch": {"grid": ["(N+1023)/1024", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"},
      "flops": "2*N", "bytes": "12*N",
      "inout_allowed": false},
    "numerics": {"atol": 0.0001, "rtol": 0.0001, "allow": ["fp16"]}})j"));
}

TEST(WorkerTaskTest, CudaCandidateDefaultsToTheReferencesKernelAndLaunch) {
  const std::string source = std::string("// hiera: inplace=x\n") + kSaxpy;
  const json task = to_worker_task(built(TargetKind::Cuda, "kernels.cu::saxpy", source), "REF", "CAND");
  EXPECT_EQ(task["candidate"], json::parse(R"({"source": "CAND", "kernel": "saxpy", "options": []})"));
  EXPECT_EQ(task["contract"]["candidate_launch"], task["contract"]["reference_launch"]);
  EXPECT_TRUE(task["contract"]["inout_allowed"].get<bool>());
}

TEST(WorkerTaskTest, TheLoosestToleranceOverTheOutputDtypesPresent) {
  TaskSpec spec;
  spec.kind = TargetKind::Cuda;
  spec.apply("numerics.atol", json{{"float32", 1e-4}, {"float16", 1e-2}, {"bfloat16", 1e-2}}, Source::Default, "default");
  spec.apply("numerics.rtol", json{{"float32", 1e-5}, {"float16", 2e-3}}, Source::Annotation, "line 1");
  spec.apply("interface.args", json::parse(R"([{"name": "y", "role": "output", "type": "float32", "extent": "4"}])"),
             Source::Annotation, "line 2");
  EXPECT_EQ(task_tolerance(spec, "numerics.atol"), 1e-4);
  EXPECT_EQ(task_tolerance(spec, "numerics.rtol"), 1e-5);
  spec.apply("interface.args", json::parse(R"([{"name": "y", "role": "output", "type": "float32", "extent": "4"},
                                                {"name": "z", "role": "output", "type": "float16", "extent": "4"},
                                                {"name": "w", "role": "inout", "type": "float64", "extent": "4"}])"),
             Source::Annotation, "line 2");
  EXPECT_EQ(task_tolerance(spec, "numerics.atol"), 1e-2);
  EXPECT_EQ(task_tolerance(spec, "numerics.rtol"), 2e-3);
  // A dtype the clause does not list takes the worker's default for it (float64: 1e-4).
  spec.apply("numerics.rtol", json{{"float32", 1e-6}, {"float16", 1e-6}}, Source::Annotation, "line 3");
  EXPECT_EQ(task_tolerance(spec, "numerics.rtol"), 1e-4);
  // "*" covers every dtype.
  spec.apply("numerics.rtol", 1e-6, Source::Annotation, "line 3");
  EXPECT_EQ(task_tolerance(spec, "numerics.rtol"), 1e-6);

  // Output dtypes unknown: the loosest value a non-default clause lists.
  TaskSpec module;
  module.apply("numerics.atol", json{{"float32", 1e-4}, {"float16", 5e-3}}, Source::Configuration, "settings: hiera.numerics.atol");
  EXPECT_EQ(task_tolerance(module, "numerics.atol"), 5e-3);
  EXPECT_EQ(task_tolerance(module, "numerics.rtol"), std::nullopt);
}

TEST(WorkerTaskTest, SecondInputsExpression) {
  TaskSpec spec;
  EXPECT_EQ(second_inputs_expression(spec), std::nullopt);
  spec.apply("invariants.shape_generality", json{{"dim", 4093}, {"batch_size", 3}}, Source::Annotation, "line 1");
  EXPECT_EQ(second_inputs_expression(spec),
            "(lambda g, saved: (g.update({'batch_size': 3, 'dim': 4093}), get_inputs(), g.update(saved))[1])"
            "(globals(), {'batch_size': batch_size, 'dim': dim})");
}

TEST(WorkerTaskTest, ACudaSpecWithoutAContractCannotBecomeATask) {
  TaskSpec spec;
  spec.target = "k.cu::k";
  spec.kind = TargetKind::Cuda;
  try {
    to_worker_task(spec, "REF", "CAND");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "task spec 'k.cu::k' has no kernel arguments (interface.args)");
  }
}

}  // namespace
}  // namespace hiera::engine::spec
