#pragma once
// The problems of a file's `hiera:` annotations, each at the text it is
// about, worded as `hiera optimize` words them (build_spec's SpecProblem):
// for an editor's diagnostics and `hiera analyze`. A CUDA kernel is checked
// with the annotations of its own lines (kernel_annotation_lines.h), a
// Python file as one module. A kernel without annotations has no problems
// (nothing was written; its missing launch contract is an action, not an
// error), and one whose annotations give no `arg` and no `launch` (only
// sizes or flops, for estimates) is not told that its launch contract is
// incomplete.
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/analysis.h"

namespace hiera::engine::spec {

struct AnnotationProblem {
  analysis::Span span;  // the offending token; the annotation's line for a problem of the whole contract
  std::string target;   // the kernel ("saxpy"); "" for a Python file
  std::string message;  // SpecProblem::message, without its position
  bool operator==(const AnnotationProblem&) const = default;
};

// `analysis` is of `text` (facts or not: only the functions' positions are read).
std::vector<AnnotationProblem> annotation_problems(std::string_view text, const analysis::Analysis& analysis);

}  // namespace hiera::engine::spec
