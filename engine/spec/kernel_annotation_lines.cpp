#include "engine/spec/kernel_annotation_lines.h"

namespace hiera::engine::spec {

LineRange kernel_annotation_lines(const analysis::Analysis& analysis, std::size_t function, const analysis::LineIndex& lines) {
  auto last_line_of = [&](std::size_t index) {
    return static_cast<int>(lines.line_of(analysis.functions[index].span.end)) + 1;
  };
  return {function == 0 ? 1 : last_line_of(function - 1) + 1, last_line_of(function)};
}

}  // namespace hiera::engine::spec
