#pragma once
// One status line on a terminal, shared by `hiera optimize` and `hiera bench`:
// redrawn in place when the stream is a TTY, appended as plain lines (one per
// change) when it is a file or pipe; thread-safe, unchanged text not redrawn.
#include <cstdio>
#include <mutex>
#include <string>

namespace hiera::cli {

// Cut to `width` characters with "..." (no cut for width <= 0).
std::string fit_to_width(std::string line, int width);
// "[#####...............]": `done` of `total` over a 20-character bar.
std::string progress_bar(int done, int total);

class StatusLine {
 public:
  // `tty`: redraw in place; otherwise append lines. `out` is usually stderr.
  StatusLine(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  bool tty() const { return tty_; }
  void show(const std::string& line);
  // A line of its own above the status line (a TTY's is redrawn below it),
  // for news that must stay on screen: an allocation submitted or ended.
  void note(const std::string& text);
  // Ends the line so what follows starts on a fresh one.
  void finish();

 private:
  std::FILE* out_;
  bool tty_;
  std::mutex mutex_;
  std::string last_;
  bool drawn_ = false;
};

}  // namespace hiera::cli
