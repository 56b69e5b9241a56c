#pragma once
// The bench plots checked with a real XML parser: /usr/bin/python3's
// xml.etree reads the SVG and reports its structure as JSON (what the tests
// compare). Tests skip without that python.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "subprocess.h"

namespace hiera::engine::bench::testing {

inline constexpr const char* kPython = "/usr/bin/python3";

// {"root": tag, "width": ..., "title": ..., "elements": {tag: count},
//  "classes": {"tag.class": count}, "ids": [...], "tooltips": [...], "texts": [...]};
// {"error": message} when the text is not well-formed XML.
inline nlohmann::json parse_svg(const std::string& svg) {
  static const char* script = R"(
import json, sys, xml.etree.ElementTree as ET
try:
    root = ET.fromstring(sys.stdin.buffer.read())
except ET.ParseError as e:
    print(json.dumps({"error": str(e)})); sys.exit(0)
ns = "{http://www.w3.org/2000/svg}"
tag = lambda e: e.tag.replace(ns, "")
out = {"root": tag(root), "width": root.get("width"), "height": root.get("height"),
       "title": root.find(ns + "title").text, "elements": {}, "classes": {}, "ids": [], "tooltips": [], "texts": []}
for e in root.iter():
    t = tag(e)
    out["elements"][t] = out["elements"].get(t, 0) + 1
    if e.get("class"):
        k = t + "." + e.get("class")
        out["classes"][k] = out["classes"].get(k, 0) + 1
    if e.get("id"): out["ids"].append(e.get("id"))
    if t == "text": out["texts"].append(e.text)
    if t in ("circle", "rect") and e.find(ns + "title") is not None: out["tooltips"].append(e.find(ns + "title").text)
print(json.dumps(out))
)";
  const auto run = hiera::testing::run_process({kPython, "-c", script}, svg);
  if (run.exit_code != 0) return {{"error", "python failed: " + run.err}};
  return nlohmann::json::parse(run.out);
}

inline bool have_python() { return std::filesystem::exists(kPython); }

}  // namespace hiera::engine::bench::testing
