// libFuzzer target: arbitrary bytes as a .cu and as a .py document, through
// analyze_source as `hiera analyze` calls it (annotation problems, the JSON it
// prints) and as the editor calls it (re-analysis from an earlier version).
// The facade throws nothing (engine/facade/README.md, "Exceptions: none"), so
// any exception fails, as do a crash, a sanitizer report, a hang (-timeout),
// a range outside the text, or a re-analysis that differs from a fresh one.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/analysis/analysis_json.h"
#include "engine/facade/document_analysis.h"
#include "engine/spec/annotation_problems.h"

namespace {

using namespace hiera::engine;
using analysis::Analysis;
using analysis::Language;
using analysis::Span;

[[noreturn]] void fail(const char* what, Language language) {
  std::fprintf(stderr, "fuzz_analyze_source (%s): %s\n", language == Language::Cuda ? "cuda" : "python", what);
  std::abort();
}

// A range is byte offsets into the text: anything else misplaces a diagnostic
// or, in a quick fix, corrupts the user's file.
bool in_text(const Span& span, std::size_t size) { return span.begin <= span.end && span.end <= size; }
bool in_text(const std::optional<Span>& span, std::size_t size) { return !span || in_text(*span, size); }

bool ranges_in_text(const Analysis& a, std::size_t size) {
  for (const auto& f : a.functions) {
    if (!in_text(f.span, size) || !in_text(f.name_span, size) || !in_text(f.body, size)) return false;
    for (const auto& p : f.parameters) if (!in_text(p.span, size)) return false;
  }
  for (const auto& l : a.launches) {
    if (!in_text(l.span, size) || !in_text(l.kernel_span, size) || !in_text(l.grid_span, size) ||
        !in_text(l.block_span, size))
      return false;
    for (const auto& s : l.sizing) if (!in_text(s.span, size)) return false;
  }
  for (const auto& m : a.modules) {
    if (!in_text(m.span, size) || !in_text(m.name_span, size) || !in_text(m.init, size) || !in_text(m.forward, size))
      return false;
    for (const auto& layer : m.layers) if (!in_text(layer.span, size)) return false;
    for (const auto& op : m.ops) if (!in_text(op.span, size)) return false;
  }
  if (a.kernelbench) {
    if (!in_text(a.kernelbench->get_inputs, size) || !in_text(a.kernelbench->get_init_inputs, size)) return false;
    for (const auto& i : a.kernelbench->inputs) if (!in_text(i.span, size)) return false;
    for (const auto& i : a.kernelbench->init_inputs) if (!in_text(i.span, size)) return false;
  }
  for (const auto& h : a.hints) {
    if (!in_text(h.span, size)) return false;
    for (const auto& e : h.fix) if (!in_text(e.span, size)) return false;
  }
  for (const auto& p : a.problems) if (!in_text(p.span, size)) return false;
  return true;
}

// Reuse must give exactly what a fresh analysis gives (analysis.h); the cache
// and the reuse count are the only fields allowed to differ.
bool same_findings(const Analysis& x, const Analysis& y) {
  return x.language == y.language && x.functions == y.functions && x.launches == y.launches &&
         x.modules == y.modules && x.kernelbench == y.kernelbench && x.hints == y.hints && x.problems == y.problems &&
         x.items == y.items;
}

// The version the editor held before: the text without one of its lines
// (which one is picked by the text's length, so every line gets its turn).
std::string earlier_version(const std::string& text) {
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  std::size_t drop = text.size() % lines, begin = 0;
  for (; drop > 0; --drop) begin = text.find('\n', begin) + 1;
  const std::size_t end = text.find('\n', begin);
  return text.substr(0, begin) + (end == std::string::npos ? std::string() : text.substr(end + 1));
}

void analyze_as(const std::string& text, Language language) {
  // `hiera analyze FILE --json`: the analysis, its annotation problems, the JSON.
  const auto fresh = facade::analyze_source(text, language);
  if (!ranges_in_text(fresh.analysis, text.size())) fail("a range outside the text", language);
  for (const auto& p : spec::annotation_problems(text, fresh.analysis)) {
    if (!in_text(p.span, text.size())) fail("an annotation problem outside the text", language);
  }
  (void)analysis::to_json(fresh.analysis, text).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);

  // The editor: the document's earlier version, then this one reusing it.
  const std::string before = earlier_version(text);
  const auto previous = facade::analyze_source(before, language);
  const auto again = facade::analyze_source(text, language, &previous.analysis, previous.structure.get());
  if (!same_findings(again.analysis, fresh.analysis)) fail("re-analysis differs from a fresh analysis", language);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (Language language : {Language::Cuda, Language::Python}) {
    try {
      analyze_as(text, language);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_analyze_source: analysis threw: %s\n", e.what());
      fail("an exception escaped the facade", language);
    }
  }
  return 0;
}
