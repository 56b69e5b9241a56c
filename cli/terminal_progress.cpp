#include "cli/terminal_progress.h"

#include <algorithm>
#include <cstdio>

namespace hiera::cli {

std::string TerminalProgress::render(const engine::optimize::OptimizeProgress& p, int width) {
  std::string line;
  if (p.budget > 0) {
    constexpr int kBar = 20;
    const int filled = std::clamp(p.tried * kBar / p.budget, 0, kBar);
    line = "[" + std::string(filled, '#') + std::string(kBar - filled, '.') + "] " + std::to_string(p.tried) + "/" +
           std::to_string(p.budget) + " candidates, " + std::to_string(p.verified) + " verified";
  }
  if (p.best_speedup) {
    char best[32];
    std::snprintf(best, sizeof best, "%.2fx", *p.best_speedup);
    line += std::string(line.empty() ? "" : ", ") + "best " + best;
  }
  line += std::string(line.empty() ? "" : " | ") + p.phase + (p.message.empty() ? "" : ": " + p.message);
  if (width > 0 && static_cast<int>(line.size()) > width) line = line.substr(0, std::max(0, width - 3)) + "...";
  return line;
}

void TerminalProgress::update(const engine::optimize::OptimizeProgress& progress) {
  std::lock_guard lock(mutex_);
  const std::string line = render(progress, tty_ ? 120 : 0);
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

void TerminalProgress::finish() {
  std::lock_guard lock(mutex_);
  if (tty_ && drawn_) std::fputc('\n', out_);
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace hiera::cli
