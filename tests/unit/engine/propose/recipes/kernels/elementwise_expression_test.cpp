// The expression builder: each elementwise op's formula (pattern, operands,
// helpers) as the generated kernels compute it, its refusals, and the device
// helpers' values, compiled here as host C++ from the same lines the kernels
// embed and compared with torch's.
#include "engine/propose/recipes/kernels/elementwise_expression.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "graph_builder.h"

// The device helpers as host functions. The CUDA intrinsics they use for
// casts get host stand-ins that round the same way (to nearest even).
namespace hiera_host_helpers {

inline float round_to_bits(float x, int significant_bits, int min_exponent) {
  if (x == 0.0f || !std::isfinite(x)) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| = m * 2^exponent, 0.5 <= m < 1
  const int bits = exponent < min_exponent ? significant_bits - (min_exponent - exponent) : significant_bits;
  const float scale = std::ldexp(1.0f, bits - exponent);
  return std::nearbyint(x * scale) / scale;
}
struct HostHalf {
  float value;
};
inline HostHalf __float2half_rn(float x) { return {round_to_bits(x, 11, -13)}; }
inline float __half2float(HostHalf h) { return h.value; }
inline HostHalf __float2bfloat16_rn(float x) { return {round_to_bits(x, 8, -125)}; }
inline float __bfloat162float(HostHalf h) { return h.value; }

inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
// The device's fast intrinsics, exact on the host: the formulas are what is checked here.
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }

#define HIERA_DEVICE_HELPER(name, ...) inline __VA_ARGS__
#include "engine/propose/recipes/kernels/device_helpers.inc"
#undef HIERA_DEVICE_HELPER

}  // namespace hiera_host_helpers

namespace {

using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using hiera::testing::string_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<long long> kShape = {2, 3};

// A graph with inputs x, y [2, 3] and one node `op` built by `add`.
template <typename Add>
OpGraph one_op(Add add) {
  GraphBuilder builder;
  builder.input("x", {2, 3}).input("y", {2, 3});
  add(builder);
  return builder.build({"op"});
}

ElementwiseFormula formula_of(const OpGraph& graph) {
  const auto formula = elementwise_formula(*graph.find("op"), graph);
  if (!formula) throw std::runtime_error("no formula");
  return *formula;
}

std::string unsupported_reason(const OpGraph& graph) {
  try {
    elementwise_formula(*graph.find("op"), graph);
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> operand_texts(const ElementwiseFormula& formula) {
  std::vector<std::string> out;
  for (const auto& operand : formula.operands) {
    switch (operand.kind) {
      case FormulaOperand::Kind::Node: out.push_back(operand.node); break;
      case FormulaOperand::Kind::Number: out.push_back(float_literal(operand.number)); break;
      case FormulaOperand::Kind::ModuleTensor: out.push_back(operand.python); break;
    }
  }
  return out;
}

TEST(ElementwiseExpression, ArithmeticWithTensorsAndScalars) {
  auto add_scalar = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "operator.add", "add", {node_arg("x"), number_arg(2.5)}, {}, {2, 3});
  }));
  EXPECT_EQ(add_scalar.pattern, "$0 + $1");
  EXPECT_THAT(operand_texts(add_scalar), ElementsAre("x", "2.5f"));

  auto sub_alpha = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.sub", "sub", {node_arg("x"), node_arg("y")}, {{"alpha", number_arg(2.0)}}, {2, 3});
  }));
  EXPECT_EQ(sub_alpha.pattern, "$0 - $2 * $1");
  EXPECT_THAT(operand_texts(sub_alpha), ElementsAre("x", "y", "2.0f"));

  // 2.0 - x traces to operator.sub(2.0, x); torch.rsub(x, 2.0) is the same value.
  auto reverse = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "operator.sub", "sub", {number_arg(2.0), node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_THAT(operand_texts(reverse), ElementsAre("2.0f", "x"));
  auto rsub = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.rsub", "sub", {node_arg("x"), number_arg(2.0)}, {}, {2, 3});
  }));
  EXPECT_EQ(rsub.pattern, "$0 - $1");
  EXPECT_THAT(operand_texts(rsub), ElementsAre("2.0f", "x"));

  // torch divides by a Python scalar as a multiplication by its float reciprocal.
  auto div_scalar = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "operator.truediv", "div", {node_arg("x"), number_arg(3.0)}, {}, {2, 3});
  }));
  EXPECT_EQ(div_scalar.pattern, "$0 * $1");
  EXPECT_THAT(operand_texts(div_scalar), ElementsAre("x", "0.33333334f"));
  EXPECT_EQ(formula_of(one_op([](GraphBuilder& b) {
              b.call("op", "call_function", "operator.truediv", "div", {node_arg("x"), node_arg("y")}, {}, {2, 3});
            })).pattern,
            "$0 / $1");
  EXPECT_THAT(unsupported_reason(one_op([](GraphBuilder& b) {
                b.call("op", "call_function", "torch.div", "div", {node_arg("x"), node_arg("y")},
                       {{"rounding_mode", string_arg("floor")}}, {2, 3});
              })),
              "op: division with a rounding mode");
}

TEST(ElementwiseExpression, PowUsesTorchsSpecialCases) {
  auto pow_of = [](double exponent) {
    return formula_of(one_op([&](GraphBuilder& b) {
      b.call("op", "call_function", "operator.pow", "pow", {node_arg("x"), number_arg(exponent)}, {}, {2, 3});
    }));
  };
  EXPECT_EQ(pow_of(2.0).pattern, "$0 * $0");
  EXPECT_EQ(pow_of(3.0).pattern, "$0 * $0 * $0");
  EXPECT_EQ(pow_of(0.5).pattern, "sqrtf($0)");
  EXPECT_EQ(pow_of(-0.5).pattern, "1.0f / sqrtf($0)");
  EXPECT_EQ(pow_of(-1.0).pattern, "1.0f / $0");
  EXPECT_EQ(pow_of(-2.0).pattern, "1.0f / ($0 * $0)");
  const auto general = pow_of(1.7);
  EXPECT_EQ(general.pattern, "powf($0, $1)");
  EXPECT_THAT(operand_texts(general), ElementsAre("x", "1.7f"));
  EXPECT_EQ(formula_of(one_op([](GraphBuilder& b) {
              b.call("op", "call_method", "square", "pow", {node_arg("x")}, {}, {2, 3});
            })).pattern,
            "$0 * $0");
}

TEST(ElementwiseExpression, ActivationsWithTheirParameters) {
  auto leaky = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.nn.functional.leaky_relu", "leaky_relu", {node_arg("x")},
           {{"negative_slope", number_arg(0.2)}, {"inplace", hiera::testing::bool_arg(false)}}, {2, 3});
  }));
  EXPECT_EQ(leaky.pattern, "hiera_leaky_relu($0, $1)");
  EXPECT_THAT(operand_texts(leaky), ElementsAre("x", "0.2f"));
  EXPECT_FALSE(leaky.in_place);

  auto gelu_tanh = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.nn.functional.gelu", "gelu", {node_arg("x")},
           {{"approximate", string_arg("tanh")}}, {2, 3});
  }));
  EXPECT_EQ(gelu_tanh.pattern, "hiera_gelu_tanh($0)");
  EXPECT_THAT(gelu_tanh.helpers, ElementsAre("hiera_gelu_tanh"));

  // Modules carry their parameters in the capture's attrs.
  auto gelu_module = formula_of(one_op([](GraphBuilder& b) {
    b.module("act", "GELU", {{"approximate", "none"}});
    b.call("op", "call_module", "act", "gelu", {node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_EQ(gelu_module.pattern, "hiera_gelu_erf($0)");
  auto softplus_module = formula_of(one_op([](GraphBuilder& b) {
    b.module("act", "Softplus", {{"beta", 2.0}, {"threshold", 1.0}});
    b.call("op", "call_module", "act", "softplus", {node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_EQ(softplus_module.pattern, "hiera_softplus($0, $1, $2)");
  EXPECT_THAT(operand_texts(softplus_module), ElementsAre("x", "2.0f", "1.0f"));
  EXPECT_EQ(unsupported_reason(one_op([](GraphBuilder& b) {
              b.module("act", "LeakyReLU", nlohmann::json::object());
              b.call("op", "call_module", "act", "leaky_relu", {node_arg("x")}, {}, {2, 3});
            })),
            "op: the capture did not record the module's negative_slope");

  // selu is elu with torch's alpha * scale and scale, each rounded to float first.
  auto selu = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.selu", "selu", {node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_EQ(selu.pattern, "hiera_elu($0, $1, $2, $3)");
  EXPECT_THAT(operand_texts(selu), ElementsAre("x", "1.7580993f", "1.050701f", "1.0f"));

  auto relu6 = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.nn.functional.relu6", "hardtanh", {node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_EQ(relu6.pattern, "hiera_clamp($0, $1, $2)");
  EXPECT_THAT(operand_texts(relu6), ElementsAre("x", "0.0f", "6.0f"));

  auto clamp_min = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.clamp_min", "clamp", {node_arg("x"), number_arg(0.5)}, {}, {2, 3});
  }));
  EXPECT_EQ(clamp_min.pattern, "hiera_clamp_min($0, $1)");
  auto clamp_both = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.clamp", "clamp", {node_arg("x")},
           {{"min", number_arg(-1.0)}, {"max", number_arg(1.0)}}, {2, 3});
  }));
  EXPECT_THAT(operand_texts(clamp_both), ElementsAre("x", "-1.0f", "1.0f"));

  auto relu_in_place = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_method", "relu_", "relu", {node_arg("x")}, {}, {2, 3});
  }));
  EXPECT_EQ(relu_in_place.pattern, "hiera_clamp_min($0, 0.0f)");
  EXPECT_TRUE(relu_in_place.in_place);
}

TEST(ElementwiseExpression, MaxWithATensorIsMaximumAndWithADimIsNotElementwise) {
  auto binary = formula_of(one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.max", "max", {node_arg("x"), node_arg("y")}, {}, {2, 3});
  }));
  EXPECT_EQ(binary.pattern, "hiera_maximum($0, $1)");
  const OpGraph reduction = one_op([](GraphBuilder& b) {
    b.call("op", "call_function", "torch.max", "max", {node_arg("x"), int_arg(1)}, {}, {2});
  });
  EXPECT_FALSE(elementwise_formula(*reduction.find("op"), reduction).has_value());
}

TEST(ElementwiseExpression, WhereAndComparisons) {
  const OpGraph graph = [] {
    GraphBuilder b;
    b.input("x", {2, 3}).input("y", {2, 3});
    b.call("gt", "call_function", "operator.gt", "unknown", {node_arg("x"), number_arg(0.0)}, {}, {2, 3}, "bool");
    b.call("op", "call_function", "torch.where", "where", {node_arg("gt"), node_arg("x"), number_arg(0.5)}, {}, {2, 3});
    b.call("m", "call_method", "where", "where", {node_arg("x"), node_arg("gt"), node_arg("y")}, {}, {2, 3});
    return b.build({"op", "m"});
  }();
  const auto gt = *elementwise_formula(*graph.find("gt"), graph);
  EXPECT_EQ(gt.pattern, "($0 > $1)");
  EXPECT_TRUE(gt.boolean);
  const auto function = *elementwise_formula(*graph.find("op"), graph);
  EXPECT_EQ(function.pattern, "($0 ? $1 : $2)");
  EXPECT_THAT(operand_texts(function), ElementsAre("gt", "x", "0.5f"));
  const auto method = *elementwise_formula(*graph.find("m"), graph);
  EXPECT_THAT(operand_texts(method), ElementsAre("gt", "x", "y"));
}

TEST(ElementwiseExpression, DropoutIsAnIdentityOnlyWhenInactive) {
  auto functional = [](bool training, double p) {
    return one_op([&](GraphBuilder& b) {
      b.call("op", "call_function", "torch.nn.functional.dropout", "dropout", {node_arg("x")},
             {{"p", number_arg(p)}, {"training", hiera::testing::bool_arg(training)}}, {2, 3});
    });
  };
  EXPECT_EQ(formula_of(functional(false, 0.5)).pattern, "$0");
  EXPECT_EQ(formula_of(functional(true, 0.0)).pattern, "$0");
  EXPECT_EQ(unsupported_reason(functional(true, 0.5)), "op: dropout is active (training with p > 0), a random op");
  auto module = [](bool training) {
    GraphBuilder b;
    b.input("x", {2, 3}).module("drop", "Dropout", {{"p", 0.1}}).training(training);
    b.call("op", "call_module", "drop", "dropout", {node_arg("x")}, {}, {2, 3});
    return b.build({"op"});
  };
  EXPECT_EQ(formula_of(module(false)).pattern, "$0");
  EXPECT_THAT(unsupported_reason(module(true)), HasSubstr("dropout is active"));
}

TEST(ElementwiseExpression, CastsRoundToTheirPrecision) {
  const OpGraph graph = [] {
    GraphBuilder b;
    b.input("x", {2, 3});
    b.call("h", "call_method", "half", "to", {node_arg("x")}, {}, {2, 3}, "float16");
    b.call("op", "call_method", "float", "to", {node_arg("h")}, {}, {2, 3}, "float32");
    return b.build({"op"});
  }();
  const auto half = *elementwise_formula(*graph.find("h"), graph);
  EXPECT_EQ(half.pattern, "hiera_round_half($0)");
  EXPECT_THAT(half.dtypes, ElementsAre("float16"));
  EXPECT_EQ(elementwise_formula(*graph.find("op"), graph)->pattern, "$0");
}

TEST(ElementwiseExpression, BatchNormWithRunningStatistics) {
  auto graph = [](bool training) {
    GraphBuilder b;
    b.input("x", {4, 8, 5, 5});
    b.module("bn", "BatchNorm2d", {{"eps", 1e-3}, {"momentum", 0.1}, {"affine", true}, {"track_running_stats", true}},
             {{"weight", {8}}, {"bias", {8}}}, {{"running_mean", {8}}, {"running_var", {8}}});
    b.training(training);
    b.call("op", "call_module", "bn", "batch_norm", {node_arg("x")}, {}, {4, 8, 5, 5});
    return b.build({"op"});
  };
  const auto formula = formula_of(graph(false));
  EXPECT_EQ(formula.pattern, "$4 * ($0 - $1) * (1.0f / sqrtf($2 + $3)) + $5");
  EXPECT_THAT(operand_texts(formula), ElementsAre("x", "self.bn.running_mean", "self.bn.running_var", "0.001f",
                                                  "self.bn.weight", "self.bn.bias"));
  EXPECT_THAT(formula.operands[1].broadcast_shape, ElementsAre(8, 1, 1));
  EXPECT_EQ(unsupported_reason(graph(true)),
            "op: batch norm uses batch statistics here (training mode or no running stats)");
}

TEST(ElementwiseExpression, ExpandAndHelpers) {
  ElementwiseFormula formula;
  formula.pattern = "hiera_maximum($0, $1) * $0";
  EXPECT_EQ(expand_formula(formula, {"a0_v", "2.0f"}), "hiera_maximum(a0_v, 2.0f) * a0_v");
  EXPECT_THROW(expand_formula(formula, {"a0_v"}), std::invalid_argument);

  const std::string hardswish = device_helpers({"hiera_hardswish"});
  const auto max_at = hardswish.find("float hiera_std_max(");
  const auto swish_at = hardswish.find("float hiera_hardswish(");
  ASSERT_NE(max_at, std::string::npos);
  ASSERT_NE(swish_at, std::string::npos);
  EXPECT_LT(max_at, swish_at);  // defined before use
  EXPECT_EQ(hardswish.rfind("__device__ __forceinline__ float hiera_std_max(float a, float b) { return a < b ? b : a; }", 0), 0u);
  EXPECT_EQ(device_helpers({}), "");
  EXPECT_THROW(device_helpers({"hiera_nope"}), std::invalid_argument);

  EXPECT_EQ(module_python("bn"), "self.bn");
  EXPECT_EQ(module_python("block.norm1"), "self.block.norm1");
  EXPECT_EQ(module_python("layers.0.bn"), "self.get_submodule('layers.0.bn')");
}

TEST(ElementwiseExpression, FloatLiteralsRoundTrip) {
  EXPECT_EQ(float_literal(2.0), "2.0f");
  EXPECT_EQ(float_literal(0.1), "0.1f");
  EXPECT_EQ(float_literal(-0.0), "-0.0f");
  EXPECT_EQ(float_literal(1.0 / 3.0), "0.33333334f");
  EXPECT_EQ(float_literal(1e20), "1e+20f");
  EXPECT_EQ(float_literal(std::numeric_limits<double>::infinity()), "__int_as_float(0x7f800000)");
  EXPECT_EQ(float_literal(-std::numeric_limits<double>::infinity()), "__int_as_float(0xff800000)");
  EXPECT_EQ(float_literal(std::nan("")), "__int_as_float(0x7fc00000)");
}

// torch's values for x = -25, -4, -1.5, -0.3, 0, 0.7, 2.5, 30 (float32), printed with
// /usr/bin/python3 (torch 1.13, CPU): e.g. torch.nn.functional.gelu(x).tolist() with "%.9g".
const float kX[] = {-25.0f, -4.0f, -1.5f, -0.3f, 0.0f, 0.7f, 2.5f, 30.0f};
void expect_matches_torch(const char* what, float (*f)(float), const std::vector<float>& torch_values) {
  for (std::size_t i = 0; i < torch_values.size(); ++i) {
    const float got = f(kX[i]);
    EXPECT_NEAR(got, torch_values[i], 2e-6f * std::max(1.0f, std::fabs(torch_values[i]))) << what << "(" << kX[i] << ")";
  }
}

TEST(ElementwiseExpression, HelpersComputeTorchsValues) {
  using namespace hiera_host_helpers;
  expect_matches_torch("gelu", hiera_gelu_erf,
                       {0.0f, -0.000126719475f, -0.10021086f, -0.114626586f, 0.0f, 0.530625463f, 2.48447585f, 30.0f});
  expect_matches_torch("gelu_tanh", hiera_gelu_tanh,
                       {-0.0f, -7.02142715e-05f, -0.100428432f, -0.114629082f, 0.0f, 0.530570149f, 2.48491573f, 30.0f});
  expect_matches_torch("sigmoid", hiera_sigmoid,
                       {1.38879429e-11f, 0.0179862101f, 0.182425529f, 0.425557494f, 0.5f, 0.668187737f, 0.924141824f, 1.0f});
  expect_matches_torch("silu", hiera_silu,
                       {-3.47198575e-10f, -0.0719448403f, -0.273638278f, -0.127667248f, 0.0f, 0.467731416f, 2.31035447f, 30.0f});
  // The bfloat16 / half forms: the same formulas through the fast intrinsics.
  expect_matches_torch("sigmoid_fast", hiera_sigmoid_fast,
                       {1.38879429e-11f, 0.0179862101f, 0.182425529f, 0.425557494f, 0.5f, 0.668187737f, 0.924141824f, 1.0f});
  expect_matches_torch("silu_fast", hiera_silu_fast,
                       {-3.47198575e-10f, -0.0719448403f, -0.273638278f, -0.127667248f, 0.0f, 0.467731416f, 2.31035447f, 30.0f});
  expect_matches_torch("mish", hiera_mish,
                       {-3.47198603e-10f, -0.0725917518f, -0.298099756f, -0.15113318f, 0.0f, 0.561148345f, 2.47139239f, 30.0f});
  expect_matches_torch("hardswish", hiera_hardswish,
                       {-0.0f, -0.0f, -0.375f, -0.135000005f, 0.0f, 0.431666642f, 2.29166675f, 30.0f});
  expect_matches_torch("hardsigmoid", hiera_hardsigmoid,
                       {0.0f, 0.0f, 0.25f, 0.450000018f, 0.5f, 0.616666675f, 0.916666687f, 1.0f});
  expect_matches_torch("leaky_relu(0.2)", [](float x) { return hiera_leaky_relu(x, 0.2f); },
                       {-5.0f, -0.800000012f, -0.300000012f, -0.0600000024f, 0.0f, 0.699999988f, 2.5f, 30.0f});
  expect_matches_torch("elu(0.5)", [](float x) { return hiera_elu(x, 0.5f, 1.0f, 1.0f); },
                       {-0.5f, -0.490842193f, -0.388434917f, -0.129590899f, 0.0f, 0.699999988f, 2.5f, 30.0f});
  // selu: the operands the builder gives (ActivationsWithTheirParameters).
  expect_matches_torch("selu", [](float x) { return hiera_elu(x, 1.75809932f, 1.05070102f, 1.0f); },
                       {-1.75809932f, -1.72589862f, -1.36581433f, -0.455667347f, 0.0f, 0.73549068f, 2.62675261f, 31.5210304f});
  expect_matches_torch("softplus(beta=2, threshold=1)", [](float x) { return hiera_softplus(x, 2.0f, 1.0f); },
                       {9.64374947e-23f, 0.000167703183f, 0.024293676f, 0.218743965f, 0.346573591f, 0.699999988f, 2.5f, 30.0f});
  expect_matches_torch("softplus", [](float x) { return hiera_softplus(x, 1.0f, 20.0f); },
                       {1.38879437e-11f, 0.0181499291f, 0.201413289f, 0.554355264f, 0.693147182f, 1.10318601f, 2.57888985f, 30.0f});
  expect_matches_torch("clamp(-1, 2)", [](float x) { return hiera_clamp(x, -1.0f, 2.0f); },
                       {-1.0f, -1.0f, -1.0f, -0.300000012f, 0.0f, 0.699999988f, 2.0f, 2.0f});
  expect_matches_torch("relu", [](float x) { return hiera_clamp_min(x, 0.0f); },
                       {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.699999988f, 2.5f, 30.0f});
}

TEST(ElementwiseExpression, HelpersPropagateNanAsTorchDoes) {
  using namespace hiera_host_helpers;
  const float nan = std::nanf("");
  // torch.relu, hardswish, clamp and maximum of NaN are NaN in either operand (checked with /usr/bin/python3).
  EXPECT_TRUE(std::isnan(hiera_clamp_min(nan, 0.0f)));
  EXPECT_TRUE(std::isnan(hiera_hardswish(nan)));
  EXPECT_TRUE(std::isnan(hiera_clamp(nan, 0.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(hiera_maximum(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(hiera_maximum(1.0f, nan)));
  EXPECT_TRUE(std::isnan(hiera_minimum(1.0f, nan)));
}

// The multiplier and shift as the emitted module's _divider packs them (module_emitter.cpp).
unsigned long long divider(unsigned long long d) {
  unsigned shift = 0;
  while ((1ULL << shift) < d) ++shift;
  return (static_cast<unsigned long long>(shift) << 32) | ((((1ULL << 32) * ((1ULL << shift) - d)) / d + 1) & 0xffffffffULL);
}

TEST(ElementwiseExpression, IndexDivisionWithoutADivideIsExactOverTheWholeIntRange) {
  using namespace hiera_host_helpers;
  std::vector<long long> divisors;
  for (long long d = 1; d <= 2048; ++d) divisors.push_back(d);
  for (long long d : {3LL * 64 * 64, 65536LL, 65535LL, 65537LL, 1000003LL, (1LL << 30) - 1, 1LL << 30, (1LL << 30) + 1,
                      (1LL << 31) - 2, (1LL << 31) - 1})
    divisors.push_back(d);
  std::vector<long long> numerators = {0, 1, 2, 1LL << 30, (1LL << 31) - 2, (1LL << 31) - 1};
  for (long long k = 0; k < 300; ++k) numerators.push_back((k * 7919 * 104729 + k * k * 31) % (1LL << 31));
  for (const long long d : divisors) {
    const unsigned long long magic = divider(static_cast<unsigned long long>(d));
    for (const long long base : numerators) {
      for (const long long n : {base, base - base % d, base - base % d + d - 1, base - base % d - 1}) {
        if (n < 0 || n >= (1LL << 31)) continue;
        ASSERT_EQ(hiera_div(static_cast<int>(n), magic), n / d) << n << " / " << d;
        ASSERT_EQ(hiera_mod(static_cast<int>(n), static_cast<int>(d), magic), n % d) << n << " % " << d;
      }
    }
  }
}

TEST(ElementwiseExpression, CastHelpersRoundToNearestEven) {
  using namespace hiera_host_helpers;
  // torch.tensor(0.1).half().float() and .bfloat16().float() (checked with /usr/bin/python3).
  EXPECT_EQ(hiera_round_half(0.1f), 0.0999755859375f);
  EXPECT_EQ(hiera_round_bfloat16(0.1f), 0.10009765625f);
}

}  // namespace
