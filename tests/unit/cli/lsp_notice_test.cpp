// What `hiera lsp` says on stderr when started by hand in a terminal, and
// that it keeps serving afterwards.
#include "cli/lsp_notice.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "subprocess.h"
#include "build_paths.h"

namespace {

using hiera::testing::run_process;

TEST(LspNotice, SaysWhatItIsAndHowToConnectAnEditor) {
  EXPECT_EQ(hiera::cli::lsp_terminal_notice("/opt/hiera/bin/hiera"),
            "hiera lsp: this is hiera's language server. It speaks the Language Server Protocol (JSON-RPC with "
            "Content-Length headers) on stdin and stdout, and is meant to be started by an editor, not typed at. "
            "To connect one: VS Code: install editors/vscode/hiera.vsix and set hiera.server.path to /opt/hiera/bin/hiera; "
            "Neovim: put editors/nvim on the runtimepath and call require('hiera').setup({ cmd = { '/opt/hiera/bin/hiera', "
            "'lsp' } }); any other client: run `/opt/hiera/bin/hiera lsp` as its stdio server command (README.md, "
            "\"Editor setup\"). Still serving on stdin: Ctrl-D ends it.\n");
}

TEST(LspNotice, OnlyForATerminal) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(hiera::cli::lsp_notice_for_stdin(fds[0], "hiera"), "");
  ::close(fds[0]);
  ::close(fds[1]);
  const int null = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(null, 0);
  EXPECT_EQ(hiera::cli::lsp_notice_for_stdin(null, "hiera"), "");
  ::close(null);
}

// Under a pty (script(1)), with its input kept open: the notice, and the
// server still running when `timeout` ends it (exit 124, not the EOF exit).
TEST(LspNotice, ATerminalGetsTheNoticeAndTheServerKeepsServing) {
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "script(1) is not installed";
  const std::string command =
      std::string("sleep 4 | /usr/bin/script -qec 'timeout 2 ") + ::hiera::testing::hiera_bin() + " lsp' /dev/null";
  const auto r = run_process({"/bin/sh", "-c", command}, "");
  EXPECT_EQ(r.exit_code, 124) << r.out << r.err;
  EXPECT_NE(r.out.find("hiera lsp: this is hiera's language server."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Still serving on stdin: Ctrl-D ends it."), std::string::npos) << r.out;
}

TEST(LspNotice, APipeGetsNoNotice) {
  const auto r = run_process({::hiera::testing::hiera_bin(), "lsp"}, "");
  EXPECT_EQ(r.err.find("this is hiera's language server"), std::string::npos) << r.err;
}

}  // namespace
