#include "engine/spec/annotation_problems.h"

#include <cctype>

#include "engine/analysis/line_index.h"
#include "engine/spec/kernel_annotation_lines.h"
#include "engine/spec/source_comments.h"
#include "engine/spec/spec_builder.h"

namespace hiera::engine::spec {

namespace {

namespace an = engine::analysis;

bool is_annotation(const CommentLine& comment) {
  std::string_view text = comment.text;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (comment.block && !text.empty() && text.front() == '*') {
    text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  }
  return text.starts_with("hiera:");
}

// The line's text from its first non-space character to its end.
an::Span line_span(std::string_view text, const an::LineIndex& lines, std::size_t line) {
  std::size_t begin = lines.line_start(line);
  std::size_t end = line + 1 < lines.line_count() ? lines.line_start(line + 1) : text.size();
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  return {begin, end};
}

// The token at a 1-based line and byte column: up to a space or a separator of the syntax.
an::Span token_span(std::string_view text, const an::LineIndex& lines, int line, int column) {
  const an::Span whole = line_span(text, lines, static_cast<std::size_t>(line - 1));
  const std::size_t begin = lines.line_start(static_cast<std::size_t>(line - 1)) + static_cast<std::size_t>(column - 1);
  if (begin >= whole.end) return whole;
  std::size_t end = begin;
  while (end < whole.end && !std::isspace(static_cast<unsigned char>(text[end])) && text[end] != ';' && text[end] != ',' &&
         text[end] != '=' && text[end] != '|') {
    ++end;
  }
  if (end == begin) ++end;  // the separator itself ("missing value for 'atol'" at '=')
  return {begin, end};
}

bool is_contract_problem(const SpecProblem& p) { return p.line == 0 && p.message.starts_with("launch contract:"); }

void add(std::vector<AnnotationProblem>& out, std::string_view text, const an::LineIndex& lines,
         const SpecBuildResult& built, int line_offset, int first_annotation_line, bool contract_started,
         const std::string& target) {
  for (const auto& p : built.problems) {
    if (is_contract_problem(p) && !contract_started) continue;
    const an::Span span = p.line > 0 ? token_span(text, lines, p.line + line_offset, p.column)
                                     : line_span(text, lines, static_cast<std::size_t>(first_annotation_line - 1));
    out.push_back({span, target, p.message});
  }
}

}  // namespace

std::vector<AnnotationProblem> annotation_problems(std::string_view text, const an::Analysis& analysis) {
  std::vector<AnnotationProblem> out;
  if (text.find("hiera:") == std::string_view::npos) return out;
  const an::LineIndex lines(text);
  if (analysis.language == an::Language::Python) {
    const auto comments = comment_lines(text, SourceLanguage::Python);
    int first = 0;
    for (const auto& c : comments) {
      if (is_annotation(c)) {
        first = c.line;
        break;
      }
    }
    if (first == 0) return out;
    SpecInputs inputs;
    inputs.target = "::Model";
    inputs.kind = TargetKind::Pytorch;
    inputs.source = std::string(text);
    add(out, text, lines, build_spec(inputs), 0, first, true, "");
    return out;
  }
  const auto comments = comment_lines(text, SourceLanguage::Cuda);
  for (std::size_t i = 0; i < analysis.functions.size(); ++i) {
    const auto& kernel = analysis.functions[i];
    if (kernel.kind != an::CudaFunctionKind::Kernel) continue;
    const LineRange range = kernel_annotation_lines(analysis, i, lines);
    int first = 0;
    bool contract_started = false;
    for (const auto& c : comments) {
      if (c.line < range.first || c.line > range.last || !is_annotation(c)) continue;
      if (first == 0) first = c.line;
      contract_started = contract_started || begins_launch_contract(c);
    }
    if (first == 0) continue;
    // The kernel's own lines only, so that a file of many kernels is read once, not once per kernel.
    const std::size_t begin = lines.line_start(static_cast<std::size_t>(range.first - 1));
    const std::size_t end = static_cast<std::size_t>(range.last) < lines.line_count()
                                ? lines.line_start(static_cast<std::size_t>(range.last))
                                : text.size();
    SpecInputs inputs;
    inputs.target = "::" + kernel.name;
    inputs.kind = TargetKind::Cuda;
    inputs.source = std::string(text.substr(begin, end - begin));
    add(out, text, lines, build_spec(inputs), range.first - 1, first, contract_started, kernel.name);
  }
  return out;
}

}  // namespace hiera::engine::spec
