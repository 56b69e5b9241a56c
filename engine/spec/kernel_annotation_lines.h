#pragma once
// Which lines' `hiera:` annotations belong to a kernel: those after the
// previous function of the file up to the kernel's own end (ANNOTATIONS.md:
// annotations belong to the kernel they precede). One reading, shared by the
// analysis facts, the annotation diagnostics and the inferred contract.
#include <climits>
#include <cstddef>
#include <string_view>

#include "engine/analysis/analysis.h"
#include "engine/analysis/line_index.h"
#include "engine/spec/source_comments.h"

namespace hiera::engine::spec {

struct LineRange {
  int first = 1;  // 1-based, inclusive
  int last = 1;
  bool operator==(const LineRange&) const = default;
};

// `function` indexes analysis.functions; `lines` indexes the text the analysis was made from.
LineRange kernel_annotation_lines(const analysis::Analysis& analysis, std::size_t function, const analysis::LineIndex& lines);

// The lines of a CUDA target's annotations, as `hiera optimize` and the
// editor read them: its kernel's own (above) when `cuda_source` defines a
// kernel of that name ("scale<float>" and "ns::scale" name "scale"), else
// the whole file.
LineRange target_annotation_lines(std::string_view cuda_source, std::string_view kernel);

// Whether an annotation line has an `arg` or `launch` item, well formed or
// not: the kernel's launch contract has been begun (by the user or an action).
bool begins_launch_contract(const CommentLine& comment);

}  // namespace hiera::engine::spec
