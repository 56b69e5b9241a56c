#pragma once
// Python statements and expressions, parsed from python_lexer.h's tokens and
// tolerant of half-typed code. Statements come from logical lines and
// indentation (a compound statement's body is the lines indented deeper than
// its header, or what follows its ':' on the same line); their parts are kept
// as token ranges, and expressions are parsed only where a scanner asks
// (parse_expression), so the bulk of a large file costs only its statements.
// A header with no body (`def forward(self, x):` at the end of the text) is a
// statement with has_body false and a problem.
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/analysis/syntax_problem.h"
#include "engine/analysis/token.h"

namespace hiera::engine::analysis {

// Indices [begin, end) into PythonSyntax::code.
struct PyRange {
  std::uint32_t begin = 0, end = 0;
  bool empty() const { return begin >= end; }
};

enum class PyStmtKind {
  Expr, Assign, AugAssign, Return, If, Elif, Else, For, While, With, Try, Except, Finally, Match, Case, Def, Class, Import,
  Pass, Other
};

struct PyStmt {
  PyStmtKind kind = PyStmtKind::Other;
  Span span;                 // the statement, its body included
  Span header;               // the first logical line (to its ':' for compound statements)
  std::uint32_t indent = 0;  // column of its first token
  PyRange tokens;            // the header's tokens (without the Newline)
  std::vector<PyRange> targets;  // Assign: each target; AugAssign: one; For: the loop target; Class: bases
  PyRange value;             // Assign/AugAssign: value; Return/Expr: the expression; If/Elif/While: condition; For: iterable
  std::string_view op;       // AugAssign: "+=" ...
  std::uint32_t name = 0;    // Def/Class: the name's token
  PyRange parameters;        // Def: inside the parentheses
  std::vector<PyRange> decorators;  // Def/Class: each decorator's expression
  std::vector<PyStmt> body;
  bool has_body = true;      // false for a compound header with nothing under it
};

struct PyParameter {
  std::string_view name;
  Span span;
  PyRange annotation;  // after ':'
  PyRange default_value;
  std::string_view star;  // "", "*" or "**"
};

enum class PyExprKind {
  Name, Number, String, Constant, Attribute, Call, Subscript, BinOp, UnaryOp, Compare, BoolOp, IfExp,
  Tuple, List, Dict, Set, Comprehension, Lambda, Starred, Slice, Error
};

struct PyExpr {
  PyExprKind kind = PyExprKind::Error;
  Span span;
  std::string_view text;  // Name: the name; Attribute: the attribute; operators: the operator; literals: as written
  std::vector<int> children;  // Attribute: value; Call: callee, then arguments; Subscript: value, index;
                              // BinOp/Compare/BoolOp: operands; UnaryOp/Starred: operand; IfExp: body, test, orelse;
                              // Tuple/List/Set: items; Dict: key, value pairs; Slice: lower, upper, step (-1 when absent);
                              // Comprehension: element, then per clause target, iterable, conditions (a dict
                              // comprehension's key last); Lambda: body
  std::vector<std::string_view> roles;  // Call: per argument its keyword ("" positional, "*", "**");
                                        // Comprehension: per child "element", "target", "iter", "if", "key"
};

struct PyExprTree {
  std::vector<PyExpr> nodes;
  int root = -1;
  const PyExpr& at(int i) const { return nodes.at(static_cast<std::size_t>(i)); }
};

struct PythonSyntax {
  Tokens code;                     // the tokens without comments, Newlines kept
  std::vector<PyStmt> statements;  // the module's top level
  std::vector<SyntaxProblem> problems;
};

PythonSyntax parse_python(std::string_view source, const Tokens& tokens);

// The expression over `range` (a tuple when it has top-level commas). Never
// fails: what cannot be read becomes an Error node.
PyExprTree parse_expression(std::string_view source, const PythonSyntax& syntax, PyRange range);

std::vector<PyParameter> parse_parameters(std::string_view source, const PythonSyntax& syntax, PyRange range);

}  // namespace hiera::engine::analysis
