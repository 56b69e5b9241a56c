#include "engine/worker/compile_diagnostics.h"

#include <regex>

namespace hiera::engine::worker {

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::string severity_of(const std::string& word) {
  if (word.find("error") != std::string::npos) return "error";  // "error", "catastrophic error", "fatal error"
  if (word.find("warning") != std::string::npos) return "warning";
  return "information";
}

// The echoed line expands tabs to 8 columns; walk the real line to turn the
// caret's display column into a character column.
int column_of_caret(std::size_t caret_display, std::string_view source_line) {
  std::size_t display = 0;
  for (std::size_t i = 0; i < source_line.size(); ++i) {
    const std::size_t width = source_line[i] == '\t' ? 8 - display % 8 : 1;
    if (caret_display < display + width) return static_cast<int>(i) + 1;
    display += width;
  }
  return static_cast<int>(caret_display - display + source_line.size()) + 1;
}

}  // namespace

std::vector<CompileDiagnostic> parse_nvrtc_log(std::string_view log, std::string_view source, int line_offset) {
  // "name.cu(12): error: identifier "x" is undefined", "(3): warning #177-D: ...",
  // "name.cu(1): catastrophic error: cannot open source file ..."
  static const std::regex kHeader(R"(^(.*)\((\d+)\): ((?:catastrophic |fatal )?(?:error|warning|remark)[^:]*): (.*)$)");
  const auto log_lines = split_lines(log);
  const auto source_lines = split_lines(source);
  std::vector<CompileDiagnostic> diagnostics;
  for (std::size_t i = 0; i < log_lines.size(); ++i) {
    const std::string line(log_lines[i]);
    std::smatch match;
    if (!std::regex_match(line, match, kHeader)) continue;
    const int log_line = std::stoi(match[2].str());
    CompileDiagnostic diagnostic;
    diagnostic.severity = severity_of(match[3].str());
    diagnostic.message = match[4].str();
    if (log_line > line_offset) {
      diagnostic.line = log_line - line_offset;
    } else {
      diagnostic.line = 0;
      diagnostic.message = "(in the prelude, line " + std::to_string(log_line) + ") " + diagnostic.message;
    }
    // The next two lines are the echoed source (indented by two) and the caret.
    if (i + 2 < log_lines.size()) {
      const std::string_view caret_line = log_lines[i + 2];
      const std::size_t caret = caret_line.find('^');
      const bool only_caret = caret != std::string_view::npos && caret_line.find_first_not_of(' ') == caret &&
                              caret_line.find_last_not_of(' ') == caret;
      if (only_caret && caret >= 2 && log_line >= 1 && static_cast<std::size_t>(log_line) <= source_lines.size()) {
        diagnostic.column = column_of_caret(caret - 2, source_lines[static_cast<std::size_t>(log_line) - 1]);
      }
    }
    diagnostics.push_back(std::move(diagnostic));
  }
  return diagnostics;
}

}  // namespace hiera::engine::worker
