// Python statements by indentation and expressions by precedence, including
// what half-typed code leaves: a header without a body, a call not closed.
#include "engine/analysis/python_syntax.h"

#include <gtest/gtest.h>

#include "engine/analysis/python_lexer.h"

namespace hiera::engine::analysis {
namespace {

struct Parsed {
  std::string source;
  PythonSyntax syntax;
  explicit Parsed(std::string text) : source(std::move(text)), syntax(parse_python(source, lex_python(source).tokens)) {}
  std::string text(PyRange r) const {
    if (r.empty()) return "";
    return source.substr(syntax.code[r.begin].begin, syntax.code[r.end - 1].end - syntax.code[r.begin].begin);
  }
  std::string text(Span s) const { return source.substr(s.begin, s.end - s.begin); }
};

// An expression tree in prefix form: "(+ a (* b c))".
std::string sexp(const PyExprTree& tree, int node) {
  if (node < 0) return "_";
  const PyExpr& e = tree.at(node);
  switch (e.kind) {
    case PyExprKind::Name:
    case PyExprKind::Number:
    case PyExprKind::String:
    case PyExprKind::Constant: return std::string(e.text);
    case PyExprKind::Error: return "<error>";
    default: break;
  }
  static const char* names[] = {"name", "num", "str", "const", "attr", "call", "sub", "binop", "unary", "cmp", "bool", "ifexp",
                                "tuple", "list", "dict", "set", "comp", "lambda", "star", "slice", "error"};
  std::string out = "(" + std::string(names[static_cast<int>(e.kind)]);
  if (!e.text.empty() && e.kind != PyExprKind::Comprehension && e.kind != PyExprKind::Lambda) out += " " + std::string(e.text);
  for (std::size_t i = 0; i < e.children.size(); ++i) {
    out += " ";
    if (e.kind == PyExprKind::Call && i > 0 && !e.roles[i - 1].empty()) out += std::string(e.roles[i - 1]) + "=";
    out += sexp(tree, e.children[i]);
  }
  return out + ")";
}

std::string expression(const std::string& text) {
  const Parsed p(text + "\n");
  const auto& s = p.syntax.statements.at(0);
  const PyExprTree tree = parse_expression(p.source, p.syntax, s.value);
  return sexp(tree, tree.root);
}

TEST(PythonSyntaxTest, PrecedenceAndAssociativity) {
  EXPECT_EQ(expression("a + b * c ** -d ** e"), "(binop + a (binop * b (binop ** c (unary - (binop ** d e)))))");
  EXPECT_EQ(expression("a @ b / c - d"), "(binop - (binop / (binop @ a b) c) d)");
  EXPECT_EQ(expression("not a < b and c or d"), "(bool or (bool and (unary not (cmp < a b)) c) d)");
  EXPECT_EQ(expression("x if c else y"), "(ifexp if x c y)");
  EXPECT_EQ(expression("a not in b is not c"), "(cmp is not (cmp not in a b) c)");
}

TEST(PythonSyntaxTest, CallsAttributesSubscriptsAndSlices) {
  EXPECT_EQ(expression("torch.relu(x, inplace=True)"), "(call (attr relu torch) x inplace=True)");
  EXPECT_EQ(expression("f(*args, **kw)"), "(call f *=args **=kw)");
  EXPECT_EQ(expression("x[:, 1:-1:2, None, ...]"), "(sub x (tuple (slice : _ _ _) (slice : 1 (unary - 1) 2) None ...))");
  EXPECT_EQ(expression("x.shape[0]"), "(sub (attr shape x) 0)");
}

TEST(PythonSyntaxTest, ComprehensionsAndCollections) {
  EXPECT_EQ(expression("[f(x) for x in range(n) if x]"), "(comp (call f x) x (call range n) x)");
  EXPECT_EQ(expression("{k: v for k, v in d}"), "(comp v (tuple k v) d k)");
  EXPECT_EQ(expression("(1, *rest)"), "(tuple 1 (star * rest))");
  EXPECT_EQ(expression("sum(x for x in y)"), "(call sum (comp x x y))");
  EXPECT_EQ(expression("{'a': 1, **b}"), "(dict 'a' 1 b)");
}

TEST(PythonSyntaxTest, HalfTypedExpressionsBecomeErrorNodes) {
  EXPECT_EQ(expression("f(x,"), "(call f x)");
  EXPECT_EQ(expression("x."), "(attr x)");
  EXPECT_EQ(expression("a +"), "(binop + a <error>)");
}

TEST(PythonSyntaxTest, StatementsNestByIndentation) {
  const Parsed p(
      "import torch\n"
      "class M(nn.Module):\n"
      "    @torch.no_grad()\n"
      "    def forward(self, x):\n"
      "        y = z = x * 2\n"
      "        y += 1\n"
      "        for i in range(3):\n"
      "            if i: y = y + i\n"
      "        return y\n"
      "n: int = 4\n");
  const auto& top = p.syntax.statements;
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].kind, PyStmtKind::Import);
  ASSERT_EQ(top[1].kind, PyStmtKind::Class);
  EXPECT_EQ(p.text(top[1].targets.at(0)), "nn.Module");
  const PyStmt& forward = top[1].body.at(0);
  EXPECT_EQ(forward.kind, PyStmtKind::Def);
  ASSERT_EQ(forward.decorators.size(), 1u);
  EXPECT_EQ(p.text(forward.decorators[0]), "torch.no_grad()");
  EXPECT_EQ(p.text(forward.parameters), "self, x");
  ASSERT_EQ(forward.body.size(), 4u);
  EXPECT_EQ(forward.body[0].kind, PyStmtKind::Assign);
  ASSERT_EQ(forward.body[0].targets.size(), 2u);
  EXPECT_EQ(p.text(forward.body[0].targets[1]), "z");
  EXPECT_EQ(p.text(forward.body[0].value), "x * 2");
  EXPECT_EQ(forward.body[1].kind, PyStmtKind::AugAssign);
  EXPECT_EQ(forward.body[1].op, "+=");
  const PyStmt& loop = forward.body[2];
  EXPECT_EQ(loop.kind, PyStmtKind::For);
  EXPECT_EQ(p.text(loop.targets[0]), "i");
  EXPECT_EQ(p.text(loop.value), "range(3)");
  ASSERT_EQ(loop.body.size(), 1u);
  EXPECT_EQ(loop.body[0].kind, PyStmtKind::If);
  ASSERT_EQ(loop.body[0].body.size(), 1u);  // the body on the header's line
  EXPECT_EQ(p.text(loop.body[0].body[0].value), "y + i");
  EXPECT_EQ(forward.body[3].kind, PyStmtKind::Return);
  EXPECT_EQ(p.text(forward.span), "def forward(self, x):\n        y = z = x * 2\n        y += 1\n        for i in range(3):\n"
                                  "            if i: y = y + i\n        return y");
  EXPECT_EQ(top[2].kind, PyStmtKind::Assign);
  EXPECT_EQ(p.text(top[2].targets[0]), "n");
  EXPECT_TRUE(p.syntax.problems.empty());
}

TEST(PythonSyntaxTest, AHeaderWithoutABodyIsAProblem) {
  const Parsed p("class M:\n    def forward(self, x):\n\ndef after():\n    pass\n");
  ASSERT_EQ(p.syntax.statements.size(), 2u);
  const PyStmt& forward = p.syntax.statements[0].body.at(0);
  EXPECT_FALSE(forward.has_body);
  EXPECT_EQ(p.text(forward.span), "def forward(self, x):");
  ASSERT_EQ(p.syntax.problems.size(), 1u);
  EXPECT_EQ(p.syntax.problems[0].message, "'forward' has no body");
  EXPECT_EQ(p.syntax.statements[1].kind, PyStmtKind::Def);
}

TEST(PythonSyntaxTest, ABodyOfOnlyDecoratorsIsNoBody) {
  // Found by fuzz_analyze_source: the class's body was empty, and its end was read from it.
  const Parsed p("class Encoder(nn.Module):\n    @@@@\n\nx = 1\n");
  ASSERT_EQ(p.syntax.statements.size(), 2u);
  const PyStmt& encoder = p.syntax.statements[0];
  EXPECT_FALSE(encoder.has_body);
  EXPECT_TRUE(encoder.body.empty());
  EXPECT_EQ(p.text(encoder.span), "class Encoder(nn.Module):");
  ASSERT_EQ(p.syntax.problems.size(), 1u);
  EXPECT_EQ(p.syntax.problems[0].message, "'Encoder' has no body");
  EXPECT_EQ(p.syntax.statements[1].kind, PyStmtKind::Assign);
}

TEST(PythonSyntaxTest, MissingColonAndUnexpectedIndentAreProblems) {
  const Parsed p("def f(x)\n    return x\n  y = 1\n");
  ASSERT_EQ(p.syntax.problems.size(), 2u);
  EXPECT_EQ(p.syntax.problems[0].message, "expected ':' after the header");
  EXPECT_EQ(p.syntax.problems[1].message, "unexpected indent");
  // The body is what is indented under the header; the dedented line reads as the next statement.
  EXPECT_EQ(p.syntax.statements.at(0).body.size(), 1u);
  EXPECT_EQ(p.syntax.statements.size(), 2u);
}

TEST(PythonSyntaxTest, ParametersWithAnnotationsDefaultsAndStars) {
  const Parsed p("def f(self, x: int = 3, *args, y=None, **kw): pass\n");
  const auto params = parse_parameters(p.source, p.syntax, p.syntax.statements.at(0).parameters);
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[1].name, "x");
  EXPECT_EQ(p.text(params[1].annotation), "int");
  EXPECT_EQ(p.text(params[1].default_value), "3");
  EXPECT_EQ(params[2].star, "*");
  EXPECT_EQ(params[3].name, "y");
  EXPECT_EQ(params[4].star, "**");
  EXPECT_EQ(p.text(params[4].span), "**kw");
}

}  // namespace
}  // namespace hiera::engine::analysis
