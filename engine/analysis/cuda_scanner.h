#pragma once
// The structure of CUDA source, read from its tokens (cuda_lexer.h) with brace
// matching that survives half-typed code: functions (kernels, device and host
// functions) with parameters and bodies, launch sites, and, inside each body,
// what the hints need: loops, variable definitions, subscripts, calls and
// conditions, as token ranges. Namespaces and extern "C" blocks are
// transparent; struct bodies and macro bodies are skipped.
//
// Recovery: a body whose closing brace is missing ends before the next line
// that starts at column 0 with `__global__`, `__device__`, `__host__`,
// `template` or `__launch_bounds__`, or at a `}` in column 0 (when the body
// is indented); each recovery is a problem.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/cuda_findings.h"
#include "engine/analysis/syntax_problem.h"
#include "engine/analysis/token.h"
#include "engine/common/size_expression.h"

namespace hiera::engine::analysis {

// Indices [begin, end) into CudaScan::code.
struct TokenRange {
  std::uint32_t begin = 0, end = 0;
  bool empty() const { return begin >= end; }
};

struct CudaLoop {
  TokenRange header;      // inside the parentheses (empty for `do`)
  TokenRange body;
  std::string variable;   // the variable a `for` declares or assigns first
};

// `T name = value;`, `name = value;`, `dim3 name(a, b)`, `dim3 name{a, b}`.
struct CudaAssignment {
  std::string name;
  TokenRange value;
  Span span;              // the whole statement
  std::uint32_t at = 0;   // the name's token
  bool declaration = false;
  std::string type;       // the declared type's last word ("int", "dim3", "float"), "" for a plain assignment
};

struct CudaSubscript {
  std::uint32_t name = 0;             // token of the array or pointer name
  std::vector<TokenRange> indices;    // a[i] has one, a[i][j] two
  Span span;                          // name through the last ']'
  bool written = false;               // followed by an assignment operator or ++/--
};

struct CudaCall {
  std::uint32_t name = 0;
  TokenRange arguments;
  Span span;
};

struct SharedArray {
  std::string name;
  std::string type;                   // element type's last word: "float", "double", ...
  std::vector<TokenRange> dims;
  std::vector<Span> dim_spans;
  Span span;                          // the declaration
};

// What the hints read inside one function body, once scan_cuda_body has walked it.
struct CudaBody {
  TokenRange range;                    // inside the braces
  bool walked = false;
  std::vector<LaunchSite> launches;
  std::vector<CudaLoop> loops;
  std::vector<CudaAssignment> assignments;
  std::vector<CudaSubscript> subscripts;
  std::vector<CudaCall> calls;
  std::vector<TokenRange> conditions;  // if / while / for conditions and `?:` conditions
  std::vector<SharedArray> shared_arrays;
  std::vector<std::uint32_t> double_tokens;   // `double` type names
  std::vector<std::uint32_t> float_literals;  // floating literals without an f suffix
};

struct CudaScan {
  Tokens code;                          // the tokens without comments and directives
  std::vector<CudaFunction> functions;  // in source order, host functions included
  std::vector<CudaBody> bodies;         // parallel to functions
  std::vector<TokenRange> parameter_tokens;  // parallel to functions
  std::vector<SharedArray> shared_arrays;    // at file scope
  SizeMap constants;                    // #define N 32, constexpr / const integers at file scope
  std::vector<SyntaxProblem> problems;
};

// The file's structure: functions with their parameters and body ranges,
// constants, file-scope shared arrays, problems. Bodies are not walked yet:
// scan_cuda_body does that for one function (analysis.cpp skips the bodies it
// can reuse from the previous analysis).
CudaScan scan_cuda(std::string_view source, const Tokens& tokens);
void scan_cuda_body(std::string_view source, CudaScan& scan, std::size_t function);

// Whether the range is in a loop of the body (a loop's header or body).
bool in_loop(const CudaBody& body, std::uint32_t token);

// The value of an integer expression in the size grammar over `sizes`;
// nullopt for anything else (a call, a string, an unknown name), checked
// before evaluating so that the common case costs no exception.
std::optional<std::int64_t> evaluate_constant(std::string_view expression, const SizeMap& sizes);

}  // namespace hiera::engine::analysis
