#pragma once
// Which lines' `hiera:` annotations belong to a kernel: those after the
// previous function of the file up to the kernel's own end (ANNOTATIONS.md:
// annotations belong to the kernel they precede). One reading, shared by the
// analysis facts, the annotation diagnostics and the inferred contract.
#include <cstddef>
#include <string_view>

#include "engine/analysis/analysis.h"
#include "engine/analysis/line_index.h"
#include "engine/spec/source_comments.h"

namespace hiera::engine::spec {

struct LineRange {
  int first = 1;  // 1-based, inclusive
  int last = 1;
};

// `function` indexes analysis.functions; `lines` indexes the text the analysis was made from.
LineRange kernel_annotation_lines(const analysis::Analysis& analysis, std::size_t function, const analysis::LineIndex& lines);

// Whether an annotation line has an `arg` or `launch` item, well formed or
// not: the kernel's launch contract has been begun (by the user or an action).
bool begins_launch_contract(const CommentLine& comment);

}  // namespace hiera::engine::spec
