#include "cli/lsp_notice.h"

#include <unistd.h>

namespace hiera::cli {

std::string lsp_terminal_notice(const std::string& self) {
  return "hiera lsp: this is hiera's language server. It speaks the Language Server Protocol (JSON-RPC with "
         "Content-Length headers) on stdin and stdout, and is meant to be started by an editor, not typed at. "
         "To connect one: VS Code: install editors/vscode/hiera.vsix and set hiera.server.path to " +
         self +
         "; Neovim: put editors/nvim on the runtimepath and call require('hiera').setup({ cmd = { '" + self +
         "', 'lsp' } }); any other client: run `" + self +
         " lsp` as its stdio server command (README.md, \"Editor setup\"). Still serving on stdin: Ctrl-D ends it.\n";
}

std::string lsp_notice_for_stdin(int stdin_fd, const std::string& self) {
  return ::isatty(stdin_fd) == 1 ? lsp_terminal_notice(self) : std::string();
}

}  // namespace hiera::cli
