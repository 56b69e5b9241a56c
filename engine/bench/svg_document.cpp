#include "engine/bench/svg_document.h"

#include <cmath>
#include <cstdio>

namespace hiera::engine::bench {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string svg_number(double value) {
  if (!std::isfinite(value)) return "0";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  std::string s = text;
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

SvgDocument::SvgDocument(double width, double height, std::string_view title)
    : width_(width), height_(height), title_(title) {}

namespace {

std::string tooltip_element(std::string_view tooltip) {
  return tooltip.empty() ? std::string() : "<title>" + xml_escape(tooltip) + "</title>";
}

std::string with_space(std::string_view attributes) {
  return attributes.empty() ? std::string() : " " + std::string(attributes);
}

}  // namespace

void SvgDocument::line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view attributes) {
  body_ += "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" + svg_number(x2) + "\" y2=\"" +
           svg_number(y2) + "\" stroke=\"" + xml_escape(stroke) + "\"" + with_space(attributes) + "/>\n";
}

void SvgDocument::rect(double x, double y, double width, double height, std::string_view fill, std::string_view tooltip,
                       std::string_view attributes) {
  body_ += "<rect x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" width=\"" + svg_number(width) +
           "\" height=\"" + svg_number(height) + "\" fill=\"" + xml_escape(fill) + "\"" + with_space(attributes) + ">" +
           tooltip_element(tooltip) + "</rect>\n";
}

void SvgDocument::circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip,
                         std::string_view attributes) {
  body_ += "<circle cx=\"" + svg_number(cx) + "\" cy=\"" + svg_number(cy) + "\" r=\"" + svg_number(r) + "\" fill=\"" +
           xml_escape(fill) + "\"" + with_space(attributes) + ">" + tooltip_element(tooltip) + "</circle>\n";
}

void SvgDocument::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                           std::string_view attributes) {
  std::string list;
  for (const auto& [x, y] : points) list += (list.empty() ? "" : " ") + svg_number(x) + "," + svg_number(y);
  body_ += "<polyline points=\"" + list + "\" fill=\"none\" stroke=\"" + xml_escape(stroke) + "\"" +
           with_space(attributes) + "/>\n";
}

void SvgDocument::text(double x, double y, std::string_view content, std::string_view anchor, double size,
                       std::string_view attributes) {
  body_ += "<text x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" text-anchor=\"" + xml_escape(anchor) +
           "\" font-size=\"" + svg_number(size) + "\"" + with_space(attributes) + ">" + xml_escape(content) + "</text>\n";
}

std::string SvgDocument::str() const {
  const std::string w = svg_number(width_), h = svg_number(height_);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\">\n"
         "<title>" + xml_escape(title_) + "</title>\n"
         "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n" +
         body_ + "</svg>\n";
}

}  // namespace hiera::engine::bench
