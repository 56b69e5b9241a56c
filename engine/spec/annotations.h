#pragma once
// `hiera:` annotations: a small syntax in source comments that states a
// target's contract where the code is (tolerances, allowed precision, shape
// ranges, which outputs matter, budgets) and, for a bare CUDA kernel that
// cannot be probed, its launch contract (sizes, arguments, launch geometry).
// The syntax, every key and every error are documented in ANNOTATIONS.md.
// Every problem is collected as an AnnotationError with its line and column,
// not just the first.
#include <climits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/spec/source_comments.h"

namespace hiera::engine::spec {

struct AnnotationError {
  int line = 0;    // 1-based
  int column = 0;  // 1-based byte column of the offending token
  std::string message;
  std::string to_string() const;  // "line 3, column 15: unknown key 'ulp' (...)"
  bool operator==(const AnnotationError&) const = default;
};

// One clause's value as the annotations give it, merged over every line that
// contributes to it (several `size` lines make one interface.sizes; `atol=`
// and `atol.float16=` make one numerics.atol).
struct AnnotatedClause {
  std::string name;  // "numerics.atol"
  nlohmann::json value;
  int line = 0;  // where it is first written: the key's (or directive's) position
  int column = 0;
  std::vector<int> lines;  // every contributing line, in order, without repeats
  std::string origin() const;  // "line 3" or "lines 3, 5"
  bool operator==(const AnnotatedClause&) const = default;
};

struct Annotations {
  std::vector<AnnotatedClause> clauses;  // in order of first appearance
  std::vector<AnnotationError> errors;   // in source order
};

// The annotations in the comments of `source` on lines [first_line, last_line]
// (1-based; a caller passes the target's range so that annotations of another
// kernel in the same file do not apply). Python sources take `# hiera: ...`,
// CUDA sources `// hiera: ...` and `/* hiera: ... */`. Values are checked
// against the clause registry for the language's target kind (Python: a
// PyTorch module, CUDA: a kernel); a clause that is not a contract is an error
// at the key that set it.
Annotations parse_annotations(std::string_view source, SourceLanguage language, int first_line = 1,
                              int last_line = INT_MAX);
// The same from comments already split out of the source (comment_lines, in
// source order): a caller that asks for many ranges of one file (every kernel
// of it) splits the comments once instead of once per range.
Annotations parse_annotations(std::span<const CommentLine> comments, SourceLanguage language, int first_line = 1,
                              int last_line = INT_MAX);

}  // namespace hiera::engine::spec
