// The SVG writer: escaping, number format, and a document a real parser reads.
#include "engine/bench/svg_document.h"

#include <gtest/gtest.h>

#include "svg_parse.h"

namespace hiera::engine::bench {
namespace {

TEST(SvgDocument, EscapesMarkupAndDropsForbiddenControlCharacters) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\x1f\tz\n")), "xy\tz\n");
  EXPECT_EQ(xml_escape("größe 😀"), "größe 😀");  // UTF-8 passes through
}

TEST(SvgDocument, NumbersHaveAtMostTwoDecimalsAndNoTrailingZeros) {
  EXPECT_EQ(svg_number(12.5), "12.5");
  EXPECT_EQ(svg_number(3.0), "3");
  EXPECT_EQ(svg_number(-0.25), "-0.25");
  EXPECT_EQ(svg_number(1.0 / 3.0), "0.33");
  EXPECT_EQ(svg_number(-0.001), "0");
  EXPECT_EQ(svg_number(std::nan("")), "0");
}

TEST(SvgDocument, WritesADocumentARealXmlParserReads) {
  if (!testing::have_python()) GTEST_SKIP() << testing::kPython << " is not installed";
  SvgDocument svg(200, 100, "a <title> & more");
  svg.line(0, 0, 10, 10, "black", "id=\"l\"");
  svg.rect(1, 2, 3, 4, "#ff0000", "bar <1> & \"2\"", "class=\"bar\"");
  svg.circle(5, 5, 2, "blue");
  svg.polyline({{0, 0}, {1.5, 2.25}}, "green");
  svg.text(10, 20, "x < y & z", "middle", 11);
  const auto parsed = testing::parse_svg(svg.str());
  ASSERT_FALSE(parsed.contains("error")) << parsed["error"] << "\n" << svg.str();
  EXPECT_EQ(parsed["root"], "svg");
  EXPECT_EQ(parsed["width"], "200");
  EXPECT_EQ(parsed["title"], "a <title> & more");
  EXPECT_EQ(parsed["elements"], (nlohmann::json{{"svg", 1}, {"title", 2}, {"rect", 2}, {"line", 1}, {"circle", 1},
                                                {"polyline", 1}, {"text", 1}}));
  EXPECT_EQ(parsed["ids"], (nlohmann::json{"l"}));
  EXPECT_EQ(parsed["tooltips"], (nlohmann::json{"bar <1> & \"2\""}));
  EXPECT_EQ(parsed["texts"], (nlohmann::json{"x < y & z"}));
}

}  // namespace
}  // namespace hiera::engine::bench
