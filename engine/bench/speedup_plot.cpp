#include "engine/bench/speedup_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "engine/bench/svg_document.h"

namespace hiera::engine::bench {

namespace {

constexpr double kWidth = 720, kHeight = 420;
constexpr double kLeft = 70, kRight = 150, kTop = 50, kBottom = 60;

struct Series {
  std::string label;
  std::string color;
  std::string css_class;
  std::vector<std::pair<double, std::string>> points;  // speed-up, problem id; sorted by speed-up
};

Series series(const std::vector<ProblemResult>& results, std::optional<double> ProblemResult::*speedup, std::string label,
              std::string color, std::string css_class) {
  Series s{std::move(label), std::move(color), std::move(css_class), {}};
  for (const auto& r : results) {
    const auto& value = r.*speedup;
    if (value && std::isfinite(*value) && *value > 0) s.points.emplace_back(*value, r.id());
  }
  std::stable_sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return s;
}

std::string times_text(double speedup) {
  char text[32];
  std::snprintf(text, sizeof text, speedup < 10 ? "%.2fx" : "%.1fx", speedup);
  return text;
}

}  // namespace

std::string speedup_plot_svg(const std::vector<ProblemResult>& results, bool with_compile) {
  std::vector<Series> all;
  all.push_back(series(results, &ProblemResult::speedup_eager, "over eager", "#1f77b4", "eager"));
  if (with_compile) all.push_back(series(results, &ProblemResult::speedup_compile, "over torch.compile", "#ff7f0e", "compile"));

  // The axis spans whole powers of two, at least 0.5x..2x, so 1.0x is always inside.
  double lo = 0.5, hi = 2.0;
  for (const auto& s : all) {
    for (const auto& p : s.points) {
      lo = std::min(lo, p.first);
      hi = std::max(hi, p.first);
    }
  }
  const int lo_exp = static_cast<int>(std::floor(std::log2(lo)));
  const int hi_exp = static_cast<int>(std::ceil(std::log2(hi)));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto y_of = [&](double speedup) {
    return kTop + plot_h * (hi_exp - std::log2(speedup)) / static_cast<double>(hi_exp - lo_exp);
  };
  const std::size_t n = results.size();

  SvgDocument svg(kWidth, kHeight, "hiera bench: delivered speed-up per problem");
  svg.text(kWidth / 2, 24, "Delivered speed-up per problem (sorted, log scale)", "middle", 15, "font-weight=\"bold\"");
  // Axes and the y grid at each power of two (every other one when there are many).
  svg.line(kLeft, kTop, kLeft, kTop + plot_h, "black");
  svg.line(kLeft, kTop + plot_h, kLeft + plot_w, kTop + plot_h, "black");
  const int step = hi_exp - lo_exp > 12 ? 2 : 1;
  for (int e = lo_exp; e <= hi_exp; e += step) {
    const double y = y_of(std::ldexp(1.0, e));
    svg.line(kLeft - 4, y, kLeft + plot_w, y, "#dddddd", "class=\"grid\"");
    svg.text(kLeft - 8, y + 4, times_text(std::ldexp(1.0, e)), "end", 11);
  }
  // 1.0x: the original's speed, what the user keeps when nothing was faster.
  svg.line(kLeft, y_of(1.0), kLeft + plot_w, y_of(1.0), "#555555", "id=\"unity\" stroke-dasharray=\"6,4\" stroke-width=\"1.5\"");
  svg.text(kLeft + plot_w + 4, y_of(1.0) + 4, "1.0x", "start", 11);
  svg.text(kLeft + plot_w / 2, kHeight - 22, "problems, each series sorted by speed-up", "middle", 12);
  svg.text(18, kTop + plot_h / 2, "speed-up", "middle", 12,
           "transform=\"rotate(-90 18 " + svg_number(kTop + plot_h / 2) + ")\"");

  double legend_y = kTop + 10;
  for (const auto& s : all) {
    const std::size_t missing = n - s.points.size();
    // Each series spreads over the whole width, so two series of different lengths stay comparable.
    std::vector<std::pair<double, double>> xy;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const double x = s.points.size() <= 1 ? kLeft + plot_w / 2
                                            : kLeft + plot_w * static_cast<double>(i) / static_cast<double>(s.points.size() - 1);
      xy.emplace_back(x, y_of(s.points[i].first));
    }
    if (xy.size() > 1) svg.polyline(xy, s.color, "stroke-width=\"1.5\" class=\"" + s.css_class + "\"");
    for (std::size_t i = 0; i < xy.size(); ++i) {
      svg.circle(xy[i].first, xy[i].second, 3.5, s.color, s.points[i].second + ": " + times_text(s.points[i].first) + " " + s.label,
                 "class=\"" + s.css_class + "\"");
    }
    const double lx = kLeft + plot_w + 14;
    svg.line(lx, legend_y + 20, lx + 18, legend_y + 20, s.color, "stroke-width=\"3\"");
    svg.text(lx + 22, legend_y + 24, s.label, "start", 11);
    if (missing > 0) svg.text(lx + 22, legend_y + 38, std::to_string(missing) + " not measured", "start", 10);
    legend_y += 44;
  }
  if (n == 0) svg.text(kLeft + plot_w / 2, kTop + plot_h / 2, "no problems", "middle", 13);
  return svg.str();
}

}  // namespace hiera::engine::bench
