#include "engine/spec/kernel_annotation_lines.h"

#include <cctype>

namespace hiera::engine::spec {

LineRange kernel_annotation_lines(const analysis::Analysis& analysis, std::size_t function, const analysis::LineIndex& lines) {
  auto last_line_of = [&](std::size_t index) {
    return static_cast<int>(lines.line_of(analysis.functions[index].span.end)) + 1;
  };
  return {function == 0 ? 1 : last_line_of(function - 1) + 1, last_line_of(function)};
}

LineRange target_annotation_lines(std::string_view cuda_source, std::string_view kernel) {
  kernel = kernel.substr(0, kernel.find('<'));
  if (const auto scope = kernel.rfind("::"); scope != std::string_view::npos) kernel = kernel.substr(scope + 2);
  const auto analysis = analysis::analyze(cuda_source, analysis::Language::Cuda);
  for (std::size_t i = 0; i < analysis.functions.size(); ++i) {
    const auto& f = analysis.functions[i];
    if (f.kind == analysis::CudaFunctionKind::Kernel && f.name == kernel) {
      return kernel_annotation_lines(analysis, i, analysis::LineIndex(cuda_source));
    }
  }
  return {1, INT_MAX};
}

bool begins_launch_contract(const CommentLine& comment) {
  const std::string& text = comment.text;
  const std::size_t marker = text.find("hiera:");
  if (marker == std::string::npos) return false;
  for (std::size_t at = marker + 6; at < text.size();) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (text.compare(at, 4, "arg ") == 0 || text.compare(at, 6, "launch") == 0) return true;
    at = text.find_first_of(";,", at);
    if (at != std::string::npos) ++at;
  }
  return false;
}

}  // namespace hiera::engine::spec
