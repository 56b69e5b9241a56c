#pragma once
// What `hiera lsp` says when someone starts it by hand in a terminal: it is a
// language server for an editor to start, how to connect one, and that it
// keeps serving (it does not exit: an editor may be piping through a pty).
#include <string>

namespace hiera::cli {

// One short paragraph for stderr; `self` is the path to name in the examples.
std::string lsp_terminal_notice(const std::string& self);

// The notice when stdin is a terminal (isatty), else "".
std::string lsp_notice_for_stdin(int stdin_fd, const std::string& self);

}  // namespace hiera::cli
