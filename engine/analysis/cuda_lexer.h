#pragma once
// Tokens of CUDA C++ source as an editor has it, possibly half typed: line and
// block comments, string and character literals (prefixes, escapes, raw
// strings R"d(...)d"), numbers with digit separators, whole preprocessor lines
// (so a macro body's braces and `<<<` never reach the scanner) and the launch
// brackets `<<<` `>>>` as single tokens. Nothing is an error: an unterminated
// literal or comment ends where the line (or the text) does, flagged, and is
// listed as a problem.
#include <string_view>
#include <vector>

#include "engine/analysis/syntax_problem.h"
#include "engine/analysis/token.h"

namespace hiera::engine::analysis {

struct CudaLex {
  Tokens tokens;
  std::vector<SyntaxProblem> problems;
};

CudaLex lex_cuda(std::string_view source);

}  // namespace hiera::engine::analysis
