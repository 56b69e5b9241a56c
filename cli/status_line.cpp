#include "cli/status_line.h"

#include <algorithm>

namespace hiera::cli {

std::string fit_to_width(std::string line, int width) {
  if (width > 0 && static_cast<int>(line.size()) > width) line = line.substr(0, std::max(0, width - 3)) + "...";
  return line;
}

std::string progress_bar(int done, int total) {
  constexpr int kBar = 20;
  const int filled = total > 0 ? std::clamp(done * kBar / total, 0, kBar) : 0;
  return "[" + std::string(filled, '#') + std::string(kBar - filled, '.') + "]";
}

void StatusLine::show(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (line == last_) return;
  last_ = line;
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());  // carriage return, clear to end of line
    drawn_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void StatusLine::note(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (tty_ && drawn_) {
    std::fprintf(out_, "\r\033[K%s\n%s", text.c_str(), last_.c_str());
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void StatusLine::finish() {
  std::lock_guard lock(mutex_);
  if (tty_ && drawn_) std::fputc('\n', out_);
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace hiera::cli
