#include "engine/propose/recipes/python_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>

namespace hiera::engine::propose::recipes {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_keyword(std::string_view word) {
  static const std::set<std::string_view> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kKeywords.count(word) > 0;
}

// One identifier the scanner met: where it is and whether it is a read.
struct Identifier {
  std::size_t begin, end;
  bool read;
};

// Skips a string literal starting at i (the quote, after any prefix); returns the index after it.
std::size_t skip_string(std::string_view text, std::size_t i) {
  const char quote = text[i];
  const bool triple = i + 2 < text.size() && text[i + 1] == quote && text[i + 2] == quote;
  std::size_t j = i + (triple ? 3 : 1);
  while (j < text.size()) {
    if (text[j] == '\\') {  // an escaped character; in a raw string too, a quote after '\\' does not end it
      j += 2;
      continue;
    }
    if (text[j] == quote) {
      if (!triple) return j + 1;
      if (j + 2 < text.size() && text[j + 1] == quote && text[j + 2] == quote) return j + 3;
    }
    ++j;
  }
  return text.size();
}

void scan(std::string_view text, const std::function<void(const Identifier&)>& visit) {
  std::size_t i = 0;
  int depth = 0;  // bracket depth: `name =` at depth 0 is an assignment, inside a call a keyword
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      i = skip_string(text, i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < text.size() && (ident_char(text[i]) || text[i] == '.')) ++i;  // 1e-5, 0x1f, 2.0
    } else if (ident_start(c)) {
      std::size_t j = i;
      while (j < text.size() && ident_char(text[j])) ++j;
      const std::string_view word = text.substr(i, j - i);
      // A string prefix (r"", b'', f"", rb"") directly before a quote.
      if (j < text.size() && (text[j] == '"' || text[j] == '\'') && word.size() <= 2) {
        bool prefix = true;
        for (char p : word) {
          const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(p)));
          prefix = prefix && (l == 'r' || l == 'b' || l == 'f' || l == 'u');
        }
        if (prefix) {
          i = skip_string(text, j);
          continue;
        }
      }
      std::size_t before = i;
      while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
      const bool attribute = before > 0 && text[before - 1] == '.';
      std::size_t after = j;
      while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
      const bool followed_by_assign =
          after < text.size() && text[after] == '=' && (after + 1 >= text.size() || text[after + 1] != '=');
      // `a, b = ...` at depth 0: a comma-separated target list before the '='.
      bool target_list = false;
      if (depth == 0 && !followed_by_assign && after < text.size() && text[after] == ',') {
        const std::size_t eq = text.find('=', after);
        const std::size_t open = text.find_first_of("([{", after);
        target_list = eq != std::string_view::npos && (open == std::string_view::npos || open > eq) &&
                      (eq + 1 >= text.size() || text[eq + 1] != '=') && text[eq - 1] != '!' && text[eq - 1] != '<' &&
                      text[eq - 1] != '>';
      }
      const bool read = !attribute && !followed_by_assign && !target_list && !is_keyword(word);
      visit({i, j, read});
      i = j;
    } else {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      ++i;
    }
  }
}

}  // namespace

std::string python_float(double value) {
  if (std::isnan(value)) return "float(\"nan\")";
  if (std::isinf(value)) return value > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string python_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string python_plus(const std::string& text, std::int64_t value) {
  if (value == 0) return text;
  return text + (value > 0 ? " + " : " - ") + std::to_string(value > 0 ? value : -value);
}

std::string python_arg(const graph::Arg& arg) {
  using Kind = graph::Arg::Kind;
  switch (arg.kind) {
    case Kind::Node: return arg.node;
    case Kind::Number:
      if (arg.is_integer && std::isfinite(arg.number)) return std::to_string(static_cast<std::int64_t>(arg.number));
      return python_float(arg.number);
    case Kind::Bool: return arg.flag ? "True" : "False";
    case Kind::String: return python_string(arg.text);
    case Kind::None: return "None";
    case Kind::List: {
      std::string out = "(";
      for (std::size_t i = 0; i < arg.items.size(); ++i) out += (i ? ", " : "") + python_arg(arg.items[i]);
      return out + (arg.items.size() == 1 ? ",)" : ")");
    }
    case Kind::Slice: {
      std::string out = "slice(";
      for (std::size_t i = 0; i < arg.items.size(); ++i) out += (i ? ", " : "") + python_arg(arg.items[i]);
      return out + ")";
    }
    case Kind::Dtype: return "torch." + arg.text;
    case Kind::Ellipsis: return "...";
    case Kind::Other: return arg.text;
  }
  return "None";
}

std::string python_attribute_path(std::string_view path) {
  // getattr works for every registered name, also "0" in a Sequential or a ModuleDict key with a '-'.
  std::string out = "self";
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string_view part = path.substr(start, dot - start);
    bool identifier = !part.empty() && ident_start(part[0]) && !is_keyword(part);
    for (const char c : part) identifier = identifier && ident_char(c);
    out = identifier ? out + "." + std::string(part) : "getattr(" + out + ", " + python_string(part) + ")";
    start = dot + 1;
  }
  return out;
}

std::vector<std::string> read_names(std::string_view text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  scan(text, [&](const Identifier& id) {
    if (!id.read) return;
    std::string name(text.substr(id.begin, id.end - id.begin));
    if (seen.insert(name).second) out.push_back(std::move(name));
  });
  return out;
}

std::vector<std::string> assigned_names(std::string_view statement) {
  std::vector<std::string> out;
  scan(statement, [&](const Identifier& id) {
    if (id.read) return;
    std::size_t before = id.begin;
    while (before > 0 && (statement[before - 1] == ' ' || statement[before - 1] == '\t')) --before;
    if (before > 0 && statement[before - 1] == '.') return;  // an attribute
    // Only targets before the first '=' of the statement (not keyword arguments).
    const std::size_t eq = statement.find('=');
    const std::size_t open = statement.find_first_of("([{");
    if (eq != std::string_view::npos && id.end <= eq && (open == std::string_view::npos || open > eq)) {
      out.emplace_back(statement.substr(id.begin, id.end - id.begin));
    }
  });
  return out;
}

std::string substitute_names(std::string_view text, const std::map<std::string, std::string>& replacements) {
  std::string out;
  std::size_t copied = 0;
  scan(text, [&](const Identifier& id) {
    if (!id.read) return;
    const auto it = replacements.find(std::string(text.substr(id.begin, id.end - id.begin)));
    if (it == replacements.end()) return;
    out.append(text.substr(copied, id.begin - copied));
    out += it->second;
    copied = id.end;
  });
  out.append(text.substr(copied));
  return out;
}

std::string inline_expression(const graph::OpGraph& graph, const std::string& node,
                              const std::set<std::string>& inline_nodes) {
  const graph::Node* n = graph.find(node);
  if (!n) throw std::invalid_argument("inline_expression: no node '" + node + "'");
  std::map<std::string, std::string> replacements;
  for (const auto& name : read_names(n->code)) {
    if (name != node && inline_nodes.count(name)) {
      replacements[name] = "(" + inline_expression(graph, name, inline_nodes) + ")";
    }
  }
  return substitute_names(n->code, replacements);
}

}  // namespace hiera::engine::propose::recipes
