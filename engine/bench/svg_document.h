#pragma once
// A small SVG 1.1 writer for the bench plots: shapes and text appended in
// order, attribute values and text escaped, numbers in a fixed short form.
// No plotting library: the plots are a few dozen elements each.
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::bench {

// &, <, >, " and ' as XML entities; control characters other than tab and newline dropped.
std::string xml_escape(std::string_view text);

class SvgDocument {
 public:
  SvgDocument(double width, double height, std::string_view title);

  // `attributes`: further attributes, already formatted (`class="bar"`); may be empty.
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view attributes = {});
  void rect(double x, double y, double width, double height, std::string_view fill, std::string_view tooltip = {},
            std::string_view attributes = {});
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = {},
              std::string_view attributes = {});
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                std::string_view attributes = {});
  // anchor: start, middle or end.
  void text(double x, double y, std::string_view content, std::string_view anchor = "start", double size = 12,
            std::string_view attributes = {});

  // The whole document, with the XML declaration.
  std::string str() const;

 private:
  double width_;
  double height_;
  std::string title_;
  std::string body_;
};

// "12.5", "3", "-0.25": at most two decimals, no trailing zeros.
std::string svg_number(double value);

}  // namespace hiera::engine::bench
