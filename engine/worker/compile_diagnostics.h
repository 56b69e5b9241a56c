#pragma once
// Diagnostics read out of an NVRTC log ("file(line): error: message", then
// the source line echoed with two spaces of indent and a caret under the
// column), with line numbers mapped back to the candidate's own source.
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::worker {

struct CompileDiagnostic {
  int line = 0;    // 1-based in the candidate's own source; 0 when the problem lies in the prelude
  int column = 0;  // 1-based; 0 when the log shows none
  std::string severity;  // "error", "warning" or "information"
  std::string message;
};

// `source` is the text that was compiled (used to place the caret on tabs);
// `line_offset` is the number of prelude lines before the candidate's first.
std::vector<CompileDiagnostic> parse_nvrtc_log(std::string_view log, std::string_view source, int line_offset);

}  // namespace hiera::engine::worker
