#include "engine/bench/sol_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/bench/svg_document.h"

namespace hiera::engine::bench {

namespace {

constexpr double kWidth = 720;
constexpr double kLabel = 240, kRight = 80, kTop = 50, kRow = 22, kBottom = 40;
constexpr std::size_t kMaxLabel = 36;

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

std::string shortened(const std::string& id) {
  return id.size() <= kMaxLabel ? id : "..." + id.substr(id.size() - (kMaxLabel - 3));
}

}  // namespace

std::string sol_plot_svg(const std::vector<ProblemResult>& results) {
  const double rows = static_cast<double>(std::max<std::size_t>(results.size(), 1));
  const double height = kTop + kRow * rows + kBottom;
  const double plot_w = kWidth - kLabel - kRight;
  const double bottom = kTop + kRow * rows;

  SvgDocument svg(kWidth, height, "hiera bench: fraction of the speed of light per problem");
  svg.text(kWidth / 2, 24, "Achieved fraction of the speed-of-light bound", "middle", 15, "font-weight=\"bold\"");
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = kLabel + plot_w * tick / 4.0;
    svg.line(x, kTop - 4, x, bottom, "#dddddd", "class=\"grid\"");
    svg.text(x, bottom + 16, std::to_string(tick * 25) + "%", "middle", 11);
  }
  svg.line(kLabel, kTop - 4, kLabel, bottom, "black");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ProblemResult& r = results[i];
    const double y = kTop + kRow * static_cast<double>(i);
    svg.text(kLabel - 8, y + kRow * 0.68, shortened(r.id()), "end", 11);
    const auto& f = r.sol_fraction;
    if (!f || !std::isfinite(*f) || *f < 0) {
      svg.text(kLabel + 6, y + kRow * 0.68, "n/a", "start", 11, "fill=\"#777777\"");
      continue;
    }
    const double width = plot_w * std::min(*f, 1.0);
    const std::string color = *f > 1.0 ? "#d62728" : "#2ca02c";
    svg.rect(kLabel, y + 3, std::max(width, 0.5), kRow - 6, color, r.id() + ": " + percent_text(*f) + " of its speed of light",
             "class=\"bar\"");
    svg.text(kLabel + width + 6, y + kRow * 0.68, percent_text(*f), "start", 11);
  }
  if (results.empty()) svg.text(kLabel + plot_w / 2, kTop + kRow * 0.68, "no problems", "middle", 12);
  return svg.str();
}

}  // namespace hiera::engine::bench
