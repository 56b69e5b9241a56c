// Python text as the knowledge proposer reads and writes it: literals that
// read back exactly, the names a statement reads (strings, attributes and
// keywords are not reads), substitution, and inlining a chain of nodes.
#include <gtest/gtest.h>

#include <limits>

#include "engine/propose/recipes/python_text.h"
#include "graph_fixtures.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::Arg;
using Names = std::vector<std::string>;

TEST(PythonText, FloatsReadBackExactly) {
  EXPECT_EQ(python_float(0.125), "0.125");
  EXPECT_EQ(python_float(2.0), "2.0");
  EXPECT_EQ(python_float(-3.0), "-3.0");
  EXPECT_EQ(python_float(1e-5), "1e-05");
  EXPECT_EQ(python_float(0.1), "0.1");
  EXPECT_EQ(python_float(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(python_float(1e300), "1e+300");
  EXPECT_EQ(python_float(std::numeric_limits<double>::infinity()), "float(\"inf\")");
  EXPECT_EQ(python_float(-std::numeric_limits<double>::infinity()), "float(\"-inf\")");
  EXPECT_EQ(python_float(std::numeric_limits<double>::quiet_NaN()), "float(\"nan\")");
}

TEST(PythonText, ArgumentsAsPython) {
  Arg n;
  n.kind = Arg::Kind::Node;
  n.node = "conv";
  Arg i;
  i.kind = Arg::Kind::Number;
  i.number = -1;
  i.is_integer = true;
  Arg f = i;
  f.is_integer = false;
  f.number = 0.5;
  Arg s;
  s.kind = Arg::Kind::String;
  s.text = "a\"b\\c\n";
  Arg list;
  list.kind = Arg::Kind::List;
  list.items = {i};
  Arg pair = list;
  pair.items = {n, f};
  Arg slice;
  slice.kind = Arg::Kind::Slice;
  slice.items = {i, Arg{}, f};
  Arg dtype;
  dtype.kind = Arg::Kind::Dtype;
  dtype.text = "bfloat16";
  Arg flag;
  flag.kind = Arg::Kind::Bool;
  flag.flag = true;
  Arg ellipsis;
  ellipsis.kind = Arg::Kind::Ellipsis;
  EXPECT_EQ(python_arg(n), "conv");
  EXPECT_EQ(python_arg(i), "-1");
  EXPECT_EQ(python_arg(f), "0.5");
  EXPECT_EQ(python_arg(s), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(python_arg(list), "(-1,)");
  EXPECT_EQ(python_arg(pair), "(conv, 0.5)");
  EXPECT_EQ(python_arg(slice), "slice(-1, None, 0.5)");
  EXPECT_EQ(python_arg(dtype), "torch.bfloat16");
  EXPECT_EQ(python_arg(flag), "True");
  EXPECT_EQ(python_arg(Arg{}), "None");
  EXPECT_EQ(python_arg(ellipsis), "...");
}

TEST(PythonText, AttributePaths) {
  EXPECT_EQ(python_attribute_path("conv"), "self.conv");
  EXPECT_EQ(python_attribute_path("block.fc.weight"), "self.block.fc.weight");
  EXPECT_EQ(python_attribute_path("layers.0.weight"), "getattr(self.layers, \"0\").weight");
  EXPECT_EQ(python_attribute_path("heads.a-b"), "getattr(self.heads, \"a-b\")");
  EXPECT_EQ(python_attribute_path("lambda"), "getattr(self, \"lambda\")");
}

TEST(PythonText, ReadNamesSkipsStringsAttributesKeywordsAndTargets) {
  EXPECT_EQ(read_names("y = torch.relu(x + self.bias)"), (Names{"torch", "x", "self"}));
  EXPECT_EQ(read_names("x.sum(dim=1, keepdim=True)"), (Names{"x"}));
  EXPECT_EQ(read_names("F.gelu(a, approximate='tanh') if a == b else c"), (Names{"F", "a", "b", "c"}));
  EXPECT_EQ(read_names("x if x.shape[1] == 1 else x.sum(1)"), (Names{"x"}));
  EXPECT_EQ(read_names("s = \"q + k\" + r'\\d\\'' + v"), (Names{"v"}));
  EXPECT_EQ(read_names("a, b = f(c)"), (Names{"f", "c"}));
  EXPECT_EQ(read_names("x * 1e-05 + 0x1f"), (Names{"x"}));
  EXPECT_EQ(read_names("not a and b is None  # c"), (Names{"a", "b"}));
  EXPECT_EQ(read_names("m <= n"), (Names{"m", "n"}));
}

TEST(PythonText, AssignedNames) {
  EXPECT_EQ(assigned_names("y = f(x)"), (Names{"y"}));
  EXPECT_EQ(assigned_names("a, b = f(x, k=1)"), (Names{"a", "b"}));
  EXPECT_EQ(assigned_names("f(x, k=1)"), (Names{}));
  EXPECT_EQ(assigned_names("y == z"), (Names{}));
}

TEST(PythonText, SubstitutesOnlyReads) {
  EXPECT_EQ(substitute_names("x + x.x + f(x=x) + 'x'", {{"x", "(y)"}}), "(y) + (y).x + f(x=(y)) + 'x'");
  EXPECT_EQ(substitute_names("mul = mul_1 * mul", {{"mul", "z"}}), "mul = mul_1 * z");
}

TEST(PythonText, InlinesAChainOfNodes) {
  const auto g = hiera::testing::captured_graph("attention");
  EXPECT_EQ(inline_expression(g, "matmul_1", {"softmax", "add", "mul", "matmul", "transpose"}),
            "(torch.softmax((((q @ (k.transpose(-2, -1))) * truediv) + mask), dim=-1)) @ v");
  EXPECT_EQ(inline_expression(g, "matmul_1", {}), "softmax @ v");
}

}  // namespace
