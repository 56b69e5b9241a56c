#include "engine/facade/source_splice.h"

#include <algorithm>
#include <set>

#include "engine/analysis/analysis.h"
#include "engine/analysis/cuda_lexer.h"
#include "engine/analysis/python_lexer.h"
#include "engine/analysis/python_syntax.h"

namespace hiera::engine::facade {

namespace {

// Text compared without trailing spaces on each line, so re-indented copies still match.
std::string normalized(std::string_view text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    out += line;
    out += '\n';
    start = end + 1;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::size_t end_of_line(const std::string& text, std::size_t at) {
  const auto newline = text.find('\n', at);
  return newline == std::string::npos ? text.size() : newline + 1;
}

const analysis::CudaFunction* find_kernel(const analysis::Analysis& a, const std::string& name) {
  for (const auto& f : a.functions) {
    if (f.kind == analysis::CudaFunctionKind::Kernel && f.name == name && f.body) return &f;
  }
  return nullptr;
}

// The types as a caller sees them: __restrict__ changes nothing at a call site.
std::vector<std::string> parameter_types(const analysis::CudaFunction& f) {
  std::vector<std::string> types;
  for (const auto& p : f.parameters) {
    std::string type;
    std::size_t start = 0;
    while (start < p.type.size()) {
      auto end = p.type.find(' ', start);
      if (end == std::string::npos) end = p.type.size();
      const std::string word = p.type.substr(start, end - start);
      if (!word.empty() && word != "__restrict__" && word != "__restrict") type += (type.empty() ? "" : " ") + word;
      start = end + 1;
    }
    types.push_back(type);
  }
  return types;
}

// The `hiera: launch ...` annotation's text after "launch" in a CUDA source; "" when none.
std::string launch_annotation(const std::string& source) {
  for (const auto& t : analysis::lex_cuda(source).tokens) {
    if (t.kind != analysis::TokenKind::Comment) continue;
    const std::string_view text = t.text(source);
    const auto at = text.find("hiera: launch ");
    if (at == std::string_view::npos) continue;
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string rest(text.substr(at + 14, end - at - 14));
    if (auto close = rest.find("*/"); close != std::string::npos) rest.erase(close);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.pop_back();
    return rest;
  }
  return "";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

struct PyItem {
  analysis::PyStmtKind kind;
  std::string name;  // Def/Class: its name; Assign: a lone Name target; else ""
  std::string text;
  std::size_t end = 0;
};

std::vector<PyItem> top_level(const std::string& source) {
  const auto lex = analysis::lex_python(source);
  const auto syntax = analysis::parse_python(source, lex.tokens);
  std::vector<PyItem> items;
  for (const auto& s : syntax.statements) {
    std::size_t begin = s.span.begin;
    if (!s.decorators.empty() && s.decorators.front().begin > 0) {
      begin = std::min<std::size_t>(begin, syntax.code[s.decorators.front().begin - 1].begin);  // its '@'
    }
    PyItem item{s.kind, "", source.substr(begin, s.span.end - begin), s.span.end};
    if (s.kind == analysis::PyStmtKind::Def || s.kind == analysis::PyStmtKind::Class) {
      item.name = std::string(syntax.code[s.name].text(source));
    } else if (s.kind == analysis::PyStmtKind::Assign && s.targets.size() == 1 && s.targets[0].end == s.targets[0].begin + 1) {
      item.name = std::string(syntax.code[s.targets[0].begin].text(source));
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

std::vector<analysis::TextEdit> kernel_replacement(const std::string& document, const std::string& kernel,
                                                   const std::string& delivered, const std::string& delivered_kernel,
                                                   const std::string& annotation) {
  const auto original = analysis::analyze(document, analysis::Language::Cuda);
  const auto* old_kernel = find_kernel(original, kernel);
  if (!old_kernel) throw SourceSpliceError("the document no longer defines the kernel " + kernel);
  const auto fresh = analysis::analyze(delivered, analysis::Language::Cuda);
  const std::string wanted = delivered_kernel.empty() ? kernel : delivered_kernel;
  const auto* new_kernel = find_kernel(fresh, wanted);
  if (!new_kernel) throw SourceSpliceError("the delivered source defines no kernel " + wanted);
  if (parameter_types(*old_kernel) != parameter_types(*new_kernel)) {
    throw SourceSpliceError("the delivered kernel's parameters (" + joined(parameter_types(*new_kernel), ", ") +
                             ") differ from " + kernel + "'s (" + joined(parameter_types(*old_kernel), ", ") + ")");
  }
  // The delivered kernel under the original name: launch sites call it by that name.
  std::string kernel_text = delivered.substr(new_kernel->span.begin, new_kernel->span.size());
  kernel_text.replace(new_kernel->name_span.begin - new_kernel->span.begin, new_kernel->name_span.size(), kernel);

  // A kernel verified under another launch geometry needs its launch sites changed too: say so.
  std::string launch_note;
  const std::string new_launch = launch_annotation(delivered);
  if (!new_launch.empty() && new_launch != launch_annotation(document)) {
    const std::string prefix = annotation.rfind("# ", 0) == 0 ? "# " : "// ";
    launch_note = prefix + "It was verified with the launch " + new_launch + ": update the launch sites and their annotation.\n";
  }

  std::set<std::string> defined;
  for (const auto& f : original.functions) {
    if (f.body) defined.insert(f.name);
  }
  std::string helpers;
  for (const auto& f : fresh.functions) {
    if (&f == new_kernel || !f.body || f.kind == analysis::CudaFunctionKind::Kernel || defined.count(f.name)) continue;
    helpers += delivered.substr(f.span.begin, f.span.size()) + "\n\n";
  }

  std::set<std::string> directives;
  std::size_t after_directives = 0;
  for (const auto& t : analysis::lex_cuda(document).tokens) {
    if (t.kind != analysis::TokenKind::Directive) continue;
    directives.insert(normalized(t.text(document)));
    if (t.end <= old_kernel->span.begin) after_directives = end_of_line(document, t.end);
  }
  std::string new_directives;
  for (const auto& t : analysis::lex_cuda(delivered).tokens) {
    if (t.kind != analysis::TokenKind::Directive) continue;
    const std::string text = normalized(t.text(delivered));
    if (directives.insert(text).second) new_directives += text + "\n";
  }

  std::vector<analysis::TextEdit> edits;
  if (!new_directives.empty()) {
    // After a last line without a newline, start a line of our own.
    const bool needs_break = after_directives > 0 && document[after_directives - 1] != '\n';
    edits.push_back({{after_directives, after_directives}, (needs_break ? "\n" : "") + new_directives});
  }
  edits.push_back({{old_kernel->span.begin, old_kernel->span.end}, annotation + launch_note + helpers + kernel_text});
  return edits;
}

std::vector<analysis::TextEdit> module_insertion(const std::string& document, const std::string& module,
                                                 const std::string& delivered, const std::string& annotation) {
  const auto present = top_level(document);
  const auto found = std::find_if(present.begin(), present.end(), [&](const PyItem& item) {
    return item.kind == analysis::PyStmtKind::Class && item.name == module;
  });
  if (found == present.end()) throw SourceSpliceError("the document no longer defines the class " + module);
  std::set<std::string> texts;
  std::size_t after_imports = 0;
  for (const auto& item : present) {
    texts.insert(normalized(item.text));
    if (item.kind == analysis::PyStmtKind::Import && item.end <= found->end) after_imports = end_of_line(document, item.end);
  }
  // The harness's names: the document has its own, the delivered copies would shadow them.
  const std::set<std::string> harness = {module, "Model", "get_inputs", "get_init_inputs"};
  std::vector<std::string> imports, blocks;
  for (const auto& item : top_level(delivered)) {
    if (!texts.insert(normalized(item.text)).second) continue;
    if (item.kind == analysis::PyStmtKind::Import) {
      imports.push_back(item.text);
    } else if (!(harness.count(item.name) && (item.kind == analysis::PyStmtKind::Class || item.kind == analysis::PyStmtKind::Def ||
                                              item.kind == analysis::PyStmtKind::Assign))) {
      blocks.push_back(item.text);
    }
  }
  if (blocks.empty()) throw SourceSpliceError("the delivered source adds nothing to the document");
  std::vector<analysis::TextEdit> edits;
  if (!imports.empty()) {
    const bool needs_break = after_imports > 0 && document[after_imports - 1] != '\n';
    edits.push_back({{after_imports, after_imports},
                     (needs_break ? "\n" : "") + joined(imports, "\n") + (after_imports == 0 ? "\n\n" : "\n")});
  }
  edits.push_back({{found->end, found->end}, "\n\n\n" + annotation + joined(blocks, "\n\n\n")});
  return edits;
}

}  // namespace hiera::engine::facade
