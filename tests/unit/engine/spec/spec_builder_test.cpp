// build_spec: every clause derivation (defaults, configuration, probe,
// annotations), their precedence, and every problem reported with its place.
#include "engine/spec/spec_builder.h"

#include <gtest/gtest.h>

#include "engine/optimize/optimizer.h"

namespace hiera::engine::spec {

void PrintTo(const SpecProblem& p, std::ostream* os) { *os << p.to_string(); }

namespace {

using nlohmann::json;
using Problems = std::vector<SpecProblem>;

// {name: [value, source, origin]} for compact expectations.
json summary(const TaskSpec& spec) {
  json out = json::object();
  for (const Clause& c : spec.clauses) out[c.name] = {c.value, to_string(c.source), c.origin};
  return out;
}

const char* kModule =
    "import torch\n"
    "\n"
    "class Model(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return torch.relu(x)\n"
    "\n"
    "batch_size = 16\n"
    "dim = 16384\n"
    "\n"
    "def get_inputs():\n"
    "    return [torch.randn(batch_size, dim)]\n";

const char* kSaxpy =
    "// hiera: size N=16777216\n"
    "// hiera: arg n scalar int32 = N\n"
    "// hiera: arg a scalar float32 = 2.5\n"
    "// hiera: arg x input float32[N]\n"
    "// hiera: arg y output float32[N]\n"
    "// hiera: launch grid=(N+255)/256 block=256\n"
    "// hiera: flops=2*N bytes=12*N\n"
    "__global__ void saxpy(int n, float a, const float* x, float* y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

SpecInputs module_inputs(std::string source = kModule) {
  SpecInputs inputs;
  inputs.target = "model.py::Model";
  inputs.kind = TargetKind::Pytorch;
  inputs.source = std::move(source);
  return inputs;
}

SpecInputs kernel_inputs(std::string source = kSaxpy) {
  SpecInputs inputs;
  inputs.target = "kernels.cu::saxpy";
  inputs.kind = TargetKind::Cuda;
  inputs.source = std::move(source);
  return inputs;
}

TEST(SpecBuilderTest, DefaultsOfAPytorchModule) {
  const SpecBuildResult result = build_spec(module_inputs());
  EXPECT_EQ(result.problems, Problems{});
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.spec.target, "model.py::Model");
  EXPECT_EQ(summary(result.spec), json::parse(R"j({
    "interface.inplace": [[], "default", "default"],
    "numerics.atol": [{"float32": 0.0001, "float16": 0.01, "bfloat16": 0.01}, "default", "default"],
    "numerics.rtol": [{"float32": 0.0001, "float16": 0.01, "bfloat16": 0.01}, "default", "default"],
    "numerics.allow": [[], "default", "default"],
    "numerics.deterministic": [true, "default", "default"],
    "numerics.nan_inf": ["propagate", "default", "default"],
    "invariants.no_input_mutation": [true, "default", "default"],
    "invariants.stateless": [true, "default", "default"],
    "performance.target_speedup": [1.0, "default", "default"],
    "environment.spaces": [["S1", "S2", "S3"], "default", "default"],
    "environment.libraries": [["torch"], "default", "default"],
    "environment.compile_budget_s": [60, "default", "default"],
    "environment.candidate_budget": [24, "default", "default"],
    "environment.time_budget_s": [1800, "default", "default"]})j"));
  // Every clause names its check.
  for (const Clause& c : result.spec.clauses) EXPECT_FALSE(c.enforced_by.empty()) << c.name;
}

// One set of defaults: the spec's budget defaults are the optimizer's, which
// README.md and the VS Code extension's package.json state.
TEST(SpecBuilderTest, BudgetDefaultsAreTheOptimizers) {
  const SpecBuildResult result = build_spec(kernel_inputs());
  EXPECT_EQ(result.spec.candidate_budget(), std::optional<std::int64_t>(optimize::kDefaultBudget));
  EXPECT_EQ(result.spec.time_budget_s(), std::optional<double>(optimize::kDefaultTimeLimitS));
}

TEST(SpecBuilderTest, DefaultsOfACudaKernelAllowOnlyKernels) {
  const SpecBuildResult result = build_spec(kernel_inputs());
  EXPECT_EQ(result.problems, Problems{});
  EXPECT_EQ(result.spec.spaces(), std::vector<std::string>{"S3"});
  EXPECT_EQ(result.spec.libraries(), std::vector<std::string>{"cuda"});
}

TEST(SpecBuilderTest, ConfigurationClauses) {
  SpecInputs inputs = module_inputs();
  inputs.configuration = json::parse(R"j({
    "numerics": {"atol": 1e-3, "rtol": {"float16": 5e-3}, "allow": ["tf32"], "deterministic": null},
    "invariants": {"stateless": true},
    "budget": {"candidates": 8, "minutes": 2.5, "compile_s": 30},
    "spaces": ["S1", "S2"], "libraries": ["torch", "cublas"], "target_speedup": 1.2,
    "worker": {"command": ["ssh", "gpu"]}, "gpu": null, "llm": {"endpoint": null}, "hints": {"enabled": true}})j");
  const SpecBuildResult result = build_spec(inputs);
  EXPECT_EQ(result.problems, Problems{});
  const json s = summary(result.spec);
  EXPECT_EQ(s["numerics.atol"], json::parse(R"([0.001, "configuration", "settings: hiera.numerics.atol"])"));
  EXPECT_EQ(s["numerics.rtol"],
            json::parse(R"([{"float32": 0.0001, "float16": 0.005, "bfloat16": 0.01}, "configuration", "settings: hiera.numerics.rtol"])"));
  EXPECT_EQ(s["numerics.allow"], json::parse(R"([["tf32"], "configuration", "settings: hiera.numerics.allow"])"));
  EXPECT_EQ(s["numerics.deterministic"], json::parse(R"([true, "default", "default"])"));  // null: not set
  EXPECT_EQ(s["invariants.stateless"], json::parse(R"([true, "configuration", "settings: hiera.invariants.stateless"])"));
  EXPECT_EQ(s["environment.candidate_budget"], json::parse(R"([8, "configuration", "settings: hiera.budget.candidates"])"));
  EXPECT_EQ(s["environment.time_budget_s"], json::parse(R"([150, "configuration", "settings: hiera.budget.minutes"])"));
  EXPECT_EQ(s["environment.compile_budget_s"], json::parse(R"([30, "configuration", "settings: hiera.budget.compile_s"])"));
  EXPECT_EQ(s["environment.spaces"], json::parse(R"([["S1", "S2"], "configuration", "settings: hiera.spaces"])"));
  EXPECT_EQ(s["environment.libraries"], json::parse(R"([["torch", "cublas"], "configuration", "settings: hiera.libraries"])"));
  EXPECT_EQ(s["performance.target_speedup"], json::parse(R"([1.2, "configuration", "settings: hiera.target_speedup"])"));
}

TEST(SpecBuilderTest, ConfigurationProblems) {
  SpecInputs inputs = module_inputs();
  inputs.configuration = json::parse(R"j({
    "numerics": {"ulp": 2, "atol": -1},
    "environment": {"memory_budget_bytes": 1000000},
    "invariants": 3,
    "budget": {"candidates": 0, "hours": 1},
    "spaces": ["S9"]})j");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{
                {0, 0,
                 "settings: hiera.budget.candidates: clause 'environment.candidate_budget': must be a positive integer, "
                 "got 0"},
                {0, 0, "settings: unknown key 'hiera.budget.hours' (candidates, minutes, time_s, compile_s)"},
                {0, 0,
                 "settings: hiera.environment.memory_budget_bytes: clause 'environment.memory_budget_bytes' is not a "
                 "contract: no check enforces it (nothing measures a candidate's memory use yet)"},
                {0, 0, "settings: hiera.invariants must be an object"},
                {0, 0,
                 "settings: hiera.numerics.atol: clause 'numerics.atol': must be a non-negative number or an object of "
                 "dtype (float64, float32, float16, bfloat16, *) to non-negative number, got -1"},
                {0, 0, "settings: hiera.numerics.ulp: clause 'numerics.ulp' is not a contract: no check enforces it"},
                {0, 0, "settings: hiera.spaces: clause 'environment.spaces': must be a non-empty list of S1, S2, S3, got [\"S9\"]"},
            }));
  inputs.configuration = json::parse(R"({"budget": {"minutes": 10, "time_s": 60}})");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{{0, 0, "settings: hiera.budget.minutes and hiera.budget.time_s both set the time budget: keep one"}}));
}

TEST(SpecBuilderTest, ProbeFacts) {
  SpecInputs inputs = module_inputs();
  inputs.probe = json::parse(R"j({
    "device": "NVIDIA H200",
    "inputs": [{"shape": [16, 16384], "dtype": "float32"}],
    "outputs": [{"shape": [16, 16384], "dtype": "float32"}, {"shape": [16], "dtype": "int64"}],
    "sizes": {"batch_size": 16, "dim": 16384},
    "reference_ms": 0.031,
    "regions": [{"name": "relu_kernel", "calls": 1, "total_ns": 31000}],
    "speed_of_light_ms": 0.0005,
    "deterministic": false,
    "inplace": ["x"],
    "nan_inf": false})j");
  const SpecBuildResult result = build_spec(inputs);
  EXPECT_EQ(result.problems, Problems{});
  const std::string on = "reference run on NVIDIA H200";
  const json s = summary(result.spec);
  EXPECT_EQ(s["interface.inputs"], json({json::parse(R"([{"shape": [16, 16384], "dtype": "float32"}])"), "probe", on}));
  EXPECT_EQ(s["interface.outputs"], json({2, "probe", on}));
  EXPECT_EQ(s["interface.shapes"], json({json::parse("[[16, 16384], [16]]"), "probe", on}));
  EXPECT_EQ(s["interface.dtypes"], json({json{"float32", "int64"}, "probe", on}));
  EXPECT_EQ(s["interface.sizes"], json({json{{"batch_size", 16}, {"dim", 16384}}, "probe", on}));
  EXPECT_EQ(s["interface.inplace"], json({json{"x"}, "probe", on}));
  EXPECT_EQ(s["performance.reference_ms"], json({0.031, "probe", on}));
  EXPECT_EQ(s["performance.regions"], json({json::parse(R"([{"name": "relu_kernel", "calls": 1, "total_ns": 31000}])"), "probe", on}));
  EXPECT_EQ(s["performance.speed_of_light_ms"], json({0.0005, "probe", on}));
  EXPECT_EQ(s["numerics.deterministic"], json({false, "probe", on}));
  EXPECT_EQ(result.spec.find("interface.outputs")->enforced_by, "count");
  EXPECT_EQ(result.spec.find("interface.shapes")->enforced_by, "shape");
  EXPECT_EQ(result.spec.find("interface.dtypes")->enforced_by, "dtype");
  EXPECT_EQ(result.spec.output_dtypes(), (std::vector<std::string>{"float32", "int64"}));
}

TEST(SpecBuilderTest, ProbeProblems) {
  SpecInputs inputs = module_inputs();
  inputs.probe = json::parse(R"j({"outputs": [], "strides": [[1]], "reference_ms": -1, "nan_inf": "no"})j");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{{0, 0, "probe: nan_inf: must be true or false"},
                      {0, 0, "probe: outputs: must be a non-empty list of {\"shape\": [dims], \"dtype\": name}"},
                      {0, 0, "probe: reference_ms: clause 'performance.reference_ms': must be a positive number, got -1"},
                      {0, 0,
                       "probe: unknown fact 'strides' (device, inputs, outputs, sizes, reference_ms, regions, "
                       "speed_of_light_ms, deterministic, inplace, nan_inf)"}}));
  // Without a device the origin says only where.
  inputs.probe = json::parse(R"({"reference_ms": 1.5})");
  EXPECT_EQ(build_spec(inputs).spec.find("performance.reference_ms")->origin, "reference run");
}

TEST(SpecBuilderTest, PrecedenceChainAnnotationWins) {
  // numerics.deterministic from all four sources.
  SpecInputs inputs = module_inputs(std::string(kModule) + "# hiera: deterministic=true\n");
  inputs.configuration = json::parse(R"({"numerics": {"deterministic": false}})");
  inputs.probe = json::parse(R"({"device": "NVIDIA H200", "deterministic": false})");
  const SpecBuildResult result = build_spec(inputs);
  EXPECT_EQ(result.problems, Problems{});
  const Clause* clause = result.spec.find("numerics.deterministic");
  ASSERT_NE(clause, nullptr);
  EXPECT_EQ(*clause, (Clause{"numerics.deterministic", Family::Numerics, true, Source::Annotation, "line 12",
                             "determinism",
                             {{true, Source::Default, "default"},
                              {false, Source::Configuration, "settings: hiera.numerics.deterministic"},
                              {false, Source::Probe, "reference run on NVIDIA H200"}}}));
  // And the probe beats the configuration where no annotation speaks.
  inputs.source = kModule;
  EXPECT_EQ(build_spec(inputs).spec.find("numerics.deterministic")->source, Source::Probe);
  // The chain shows in the report.
  EXPECT_NE(result.spec.to_markdown().find(
                "- `numerics.deterministic`: annotation (line 12) overrides `false` from probe (reference run on NVIDIA "
                "H200), `false` from configuration (settings: hiera.numerics.deterministic), `true` from default\n"),
            std::string::npos);
}

TEST(SpecBuilderTest, AnnotatedTolerancesOverConfiguredOnes) {
  SpecInputs inputs = module_inputs(std::string("# hiera: atol.float16=5e-3, rtol=1e-2\n") + kModule);
  inputs.configuration = json::parse(R"({"numerics": {"atol": 1e-3}})");
  const TaskSpec spec = build_spec(inputs).spec;
  EXPECT_EQ(spec.find("numerics.atol")->value, json::parse(R"({"*": 0.001, "float16": 0.005})"));
  EXPECT_EQ(spec.find("numerics.atol")->origin, "line 1");
  EXPECT_EQ(spec.find("numerics.rtol")->value, 0.01);
  EXPECT_EQ(spec.atol("float32"), 0.001);
  EXPECT_EQ(spec.atol("float16"), 0.005);
}

TEST(SpecBuilderTest, AnnotationProblemsKeepTheirPlace) {
  const SpecBuildResult result =
      build_spec(module_inputs(std::string(kModule) + "# hiera: atol=big; memory=1GB\n# hiera: arg x input float32[N]\n"));
  EXPECT_EQ(result.problems,
            (Problems{{12, 15, "atol must be a non-negative number, got 'big'"},
                      {12, 20,
                       "clause 'environment.memory_budget_bytes' is not a contract: no check enforces it (nothing "
                       "measures a candidate's memory use yet)"},
                      {13, 10, "clause 'interface.args' applies to cuda targets only"}}));
  EXPECT_EQ(result.problems[0].to_string(), "line 12, column 15: atol must be a non-negative number, got 'big'");
}

TEST(SpecBuilderTest, CompleteCudaLaunchContract) {
  const SpecBuildResult result = build_spec(kernel_inputs());
  EXPECT_EQ(result.problems, Problems{});
  const json s = summary(result.spec);
  EXPECT_EQ(s["interface.sizes"], json::parse(R"([{"N": 16777216}, "annotation", "line 1"])"));
  EXPECT_EQ(s["interface.args"][2].get<std::string>(), "lines 2, 3, 4, 5");
  EXPECT_EQ(s["interface.launch"][0],
            json::parse(R"j({"grid": ["(N+255)/256", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"})j"));
  EXPECT_EQ(s["performance.flops"], json::parse(R"(["2*N", "annotation", "line 7"])"));
}

TEST(SpecBuilderTest, IncompleteCudaLaunchContractNamesWhatIsMissing) {
  EXPECT_EQ(build_spec(kernel_inputs("__global__ void saxpy(float* y) {}\n")).problems,
            (Problems{{0, 0,
                       "launch contract: no arguments: annotate each kernel parameter, in order, e.g. '// hiera: arg x "
                       "input float32[N]'"},
                      {0, 0, "launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'"}}));
  EXPECT_EQ(build_spec(kernel_inputs("// hiera: arg x input float32[N]\n"
                                     "// hiera: launch grid=(M+255)/256 block=256\n"
                                     "__global__ void saxpy(const float* x) {}\n"))
                .problems,
            (Problems{{0, 0, "launch contract: no output argument (an arg with role output or inout)"},
                      {0, 0, "launch contract: size 'N' is not given (used by arg x): '// hiera: size N=...'"},
                      {0, 0, "launch contract: size 'M' is not given (used by launch grid): '// hiera: size M=...'"}}));
}

TEST(SpecBuilderTest, ArgumentsMustMatchTheKernelsParameters) {
  std::string swapped = kSaxpy;
  swapped.replace(swapped.find("int n, float a"), 14, "float a, int n");
  EXPECT_EQ(build_spec(kernel_inputs(swapped)).problems,
            (Problems{{0, 0, "launch contract: the arg annotations give (n, a, x, y) but kernel saxpy takes (a, n, x, y)"}}));
}

TEST(SpecBuilderTest, TargetLinesSelectAnnotations) {
  const std::string two =
      std::string(kSaxpy) +
      "// hiera: size N=1024\n"
      "// hiera: arg x inout float32[N]\n"
      "// hiera: launch grid=N/256 block=256\n"
      "__global__ void scale(float* x) {}\n";
  SpecInputs inputs = kernel_inputs(two);
  inputs.target = "kernels.cu::scale";
  inputs.first_line = 12;
  inputs.last_line = 15;
  const SpecBuildResult result = build_spec(inputs);
  EXPECT_EQ(result.problems, Problems{});
  EXPECT_EQ(result.spec.sizes(), (SizeMap{{"N", 1024}}));
  EXPECT_EQ(result.spec.args().size(), 1u);
  EXPECT_EQ(result.spec.find("interface.sizes")->origin, "line 12");
}

TEST(SpecBuilderTest, ShapeRangeGivesASecondSize) {
  std::string source = std::string("// hiera: range N=1024..16777216\n") + kSaxpy;
  const SpecBuildResult result = build_spec(kernel_inputs(source));
  EXPECT_EQ(result.problems, Problems{});
  const Clause* second = result.spec.find("invariants.shape_generality");
  ASSERT_NE(second, nullptr);
  // The largest odd size in the range: odd sizes catch unhandled tails.
  EXPECT_EQ(second->value, json::parse(R"({"N": 16777215})"));
  EXPECT_EQ(second->source, Source::Annotation);
  EXPECT_EQ(second->origin, "derived from interface.shape_range (line 1)");
  // An explicit second size stays.
  source = std::string("// hiera: range N=1024..16777216; second N=1000003\n") + kSaxpy;
  EXPECT_EQ(build_spec(kernel_inputs(source)).spec.second_sizes(), (SizeMap{{"N", 1000003}}));
}

TEST(SpecBuilderTest, ShapeRangeProblems) {
  const std::string source = std::string("// hiera: range N=1..64 M=1..8; second N=100\n") + kSaxpy;
  EXPECT_EQ(build_spec(kernel_inputs(source)).problems,
            (Problems{{0, 0, "contract: shape range 'M' names no size (sizes: N)"},
                      {0, 0, "contract: size N=16777216 is outside its range 1..64"},
                      {0, 0, "contract: second size N=100 is outside its range 1..64"}}));
  // A module's sizes are known from the probe; before it, names cannot be checked.
  SpecInputs inputs = module_inputs(std::string(kModule) + "# hiera: range batch=1..64\n");
  EXPECT_EQ(build_spec(inputs).problems, Problems{});
  inputs.probe = json::parse(R"({"sizes": {"batch_size": 16, "dim": 16384}})");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{{0, 0, "contract: shape range 'batch' names no size (sizes: batch_size, dim)"}}));
}

TEST(SpecBuilderTest, InplaceAndComparedOutputsMustNameArguments) {
  const std::string source = std::string("// hiera: inplace=y|q; outputs=y|x\n") + kSaxpy;
  EXPECT_EQ(build_spec(kernel_inputs(source)).problems,
            (Problems{{0, 0, "contract: inplace names 'y', which is not an input argument"},
                      {0, 0, "contract: inplace names 'q', which is not an input argument"},
                      {0, 0, "contract: outputs names \"x\", which is not an output argument"}}));
  SpecInputs inputs = module_inputs(std::string(kModule) + "# hiera: outputs=0|3|out\n");
  inputs.probe = json::parse(R"({"outputs": [{"shape": [2], "dtype": "float32"}, {"shape": [2], "dtype": "float32"}]})");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{{0, 0, "contract: outputs names output 3 but forward returns 2 output(s)"},
                      {0, 0, "contract: outputs of a PyTorch module are output indices, got \"out\""}}));
}

TEST(SpecBuilderTest, ForbiddingNanWhenTheReferenceProducesIt) {
  SpecInputs inputs = module_inputs(std::string(kModule) + "# hiera: nan=forbid\n");
  inputs.probe = json::parse(R"({"nan_inf": true})");
  EXPECT_EQ(build_spec(inputs).problems,
            (Problems{{0, 0, "contract: nan_inf is forbid but the reference itself produces NaN/Inf"}}));
  inputs.probe = json::parse(R"({"nan_inf": false})");
  EXPECT_EQ(build_spec(inputs).problems, Problems{});
}

TEST(SpecBuilderTest, TargetSymbol) {
  EXPECT_EQ(target_symbol("kernels.cu::saxpy"), "saxpy");
  EXPECT_EQ(target_symbol("kernels.cu::scale<float>"), "scale<float>");
  EXPECT_EQ(target_symbol("saxpy"), "saxpy");
}

}  // namespace
}  // namespace hiera::engine::spec
