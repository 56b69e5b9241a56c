#pragma once
// Tokens of Python source as an editor has it, possibly half typed: comments,
// strings with any prefix (r, b, f, u and their pairs) in single or triple
// quotes, numbers, operators, and a Newline token at the end of each logical
// line (not inside brackets, not after a backslash splice), so the scanner
// sees statements. Decorators are the `@` Punct at a logical line's start.
//
// Half-typed code: a single-quoted string ends at its line, flagged; an
// unterminated triple-quoted string runs to the end (as Python reads it). An
// unclosed bracket does not swallow the rest of the file: a line that starts
// with a keyword that cannot appear inside brackets (def, class, return,
// import, while, ...) or with a decorator at the bracket's own indentation
// closes every open bracket there. Every such recovery is listed as a problem.
#include <string_view>
#include <vector>

#include "engine/analysis/syntax_problem.h"
#include "engine/analysis/token.h"

namespace hiera::engine::analysis {

struct PythonLex {
  Tokens tokens;
  std::vector<SyntaxProblem> problems;
};

PythonLex lex_python(std::string_view source);

}  // namespace hiera::engine::analysis
