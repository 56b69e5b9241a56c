#include "engine/spec/annotations.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "engine/common/kernel_args.h"
#include "engine/common/size_expression.h"
#include "engine/spec/clause_registry.h"
#include "engine/spec/kernel_contract.h"
#include "engine/spec/spec_error.h"
#include "engine/spec/target_kind.h"

namespace hiera::engine::spec {

using nlohmann::json;

std::string AnnotationError::to_string() const {
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
}

std::string AnnotatedClause::origin() const {
  std::string out = lines.size() == 1 ? "line " : "lines ";
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? ", " : "") + std::to_string(lines[i]);
  return out;
}

namespace {

constexpr const char* kKeyList =
    "atol, rtol, atol.DTYPE, rtol.DTYPE, allow, deterministic, nan, stateless, inplace, outputs, spaces, "
    "libraries, target, budget, time, compile, memory, flops, bytes; directives: size, second, range, shape, arg, "
    "launch";

struct Token {
  std::string text;
  int column = 0;
};

struct Item {
  std::vector<Token> tokens;
  bool bad = false;  // a bracket error was reported: skip it
};

bool is_directive(std::string_view word) {
  return word == "size" || word == "second" || word == "range" || word == "shape" || word == "arg" ||
         word == "launch";
}

bool is_setting_key(std::string_view key) {
  for (std::string_view known : {"atol", "rtol", "allow", "deterministic", "nan", "stateless", "inplace", "outputs",
                                 "spaces", "libraries", "target", "budget", "time", "compile", "memory", "flops",
                                 "bytes"}) {
    if (key == known) return true;
  }
  return key.starts_with("atol.") || key.starts_with("rtol.");
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  // strtod takes "0x10" and "infinity"; the syntax is decimal numbers only.
  for (char c : copy) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') {
      return std::nullopt;
    }
  }
  return value;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// An integral double as a JSON integer (600, not 600.0).
json number_json(double value) {
  if (value == std::trunc(value) && std::abs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return value;
}

std::string trim(std::string_view text, int& column) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
    ++column;
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

// Splits at commas outside any bracket of `text` (which holds no unbalanced ones).
std::vector<Token> split_top_level(std::string_view text, int column) {
  std::vector<Token> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      int part_column = column + static_cast<int>(start);
      std::string part = trim(text.substr(start, i - start), part_column);
      parts.push_back({part, part_column});
      start = i + 1;
    }
  }
  return parts;
}

class Parser {
 public:
  explicit Parser(TargetKind kind) : kind_(kind) {}

  void parse_line(const CommentLine& comment) {
    line_ = comment.line;
    const std::string& text = comment.text;
    std::size_t i = 0;
    auto skip_space = [&] {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    skip_space();
    if (comment.block && i < text.size() && text[i] == '*') {
      ++i;
      skip_space();
    }
    if (text.compare(i, 6, "hiera:") != 0) return;
    i += 6;
    const int base = comment.column;
    std::vector<Item> items = split_items(text, i, base);
    bool any = false;
    for (const Item& item : items) {
      if (item.bad || item.tokens.empty()) {
        any = any || item.bad;
        continue;
      }
      any = true;
      parse_item(item.tokens);
    }
    if (!any) error(base + static_cast<int>(i), "empty annotation: expected KEY=VALUE or a directive after 'hiera:'");
  }

  Annotations finish() {
    Annotations out;
    for (AnnotatedClause& clause : clauses_) {
      // One tolerance for every dtype, and nothing per dtype: a plain number.
      if (clause.value.is_object() && clause.value.size() == 1 && clause.value.contains("*")) {
        clause.value = json(clause.value["*"]);
      }
      try {
        check_clause(clause.name, clause.value, kind_);
      } catch (const SpecError& e) {
        errors_.push_back({clause.line, clause.column, e.what()});
        continue;
      }
      out.clauses.push_back(clause);
    }
    std::stable_sort(errors_.begin(), errors_.end(), [](const AnnotationError& a, const AnnotationError& b) {
      return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    out.errors = std::move(errors_);
    return out;
  }

 private:
  void error(int column, std::string message) { errors_.push_back({line_, column, std::move(message)}); }

  // Items separated by ';' or ',' outside brackets; in each, tokens separated
  // by spaces outside brackets, with '=' a token of its own.
  std::vector<Item> split_items(const std::string& text, std::size_t from, int base) {
    std::vector<Item> items(1);
    std::vector<std::pair<char, int>> open;  // bracket, column
    Token current;
    auto flush = [&] {
      if (!current.text.empty()) items.back().tokens.push_back(current);
      current = Token{};
    };
    for (std::size_t i = from; i < text.size(); ++i) {
      const char c = text[i];
      const int column = base + static_cast<int>(i);
      if (open.empty() && (c == ';' || c == ',')) {
        flush();
        items.emplace_back();
        continue;
      }
      if (open.empty() && (std::isspace(static_cast<unsigned char>(c)) || c == '=')) {
        flush();
        if (c == '=') items.back().tokens.push_back({"=", column});
        continue;
      }
      if (c == '(' || c == '[') {
        open.emplace_back(c, column);
      } else if (c == ')' || c == ']') {
        const char opener = c == ')' ? '(' : '[';
        if (open.empty() || open.back().first != opener) {
          if (!items.back().bad) {
            error(column, open.empty() ? std::string("unexpected '") + c + "'"
                                       : std::string("unexpected '") + c + "' (expected '" +
                                             (open.back().first == '(' ? ")" : "]") + "')");
          }
          items.back().bad = true;
        } else {
          open.pop_back();
        }
      }
      if (current.text.empty()) current.column = column;
      current.text += c;
    }
    flush();
    if (!open.empty()) {
      if (!items.back().bad) error(open.front().second, std::string("unclosed '") + open.front().first + "'");
      items.back().bad = true;
    }
    return items;
  }

  static int after(const Token& token) { return token.column + static_cast<int>(token.text.size()); }

  // Claims a key for this line; false (with an error at `column`) when an earlier line set it.
  bool claim(const std::string& key, int column) {
    const auto [it, inserted] = first_line_.emplace(key, line_);
    if (!inserted) error(column, "duplicate '" + key + "' (first on line " + std::to_string(it->second) + ")");
    return inserted;
  }

  AnnotatedClause& clause(const std::string& name, int column) {
    auto it = std::find_if(clauses_.begin(), clauses_.end(), [&](const AnnotatedClause& c) { return c.name == name; });
    if (it == clauses_.end()) {
      clauses_.push_back({name, json(), line_, column, {}});
      it = std::prev(clauses_.end());
    }
    if (it->lines.empty() || it->lines.back() != line_) it->lines.push_back(line_);
    return *it;
  }

  void set(const std::string& name, const Token& key, json value) {
    if (!claim(key.text, key.column)) return;
    clause(name, key.column).value = std::move(value);
  }

  // key=value pairs (several in one item, separated by spaces). Calls `each`
  // for every well-formed pair; stops at the first malformed one or when
  // `each` returns false. True when every pair was taken.
  template <typename Each>
  bool pairs(const std::vector<Token>& tokens, std::size_t k, Each each) {
    while (k < tokens.size()) {
      const Token& key = tokens[k];
      if (key.text == "=") {
        error(key.column, "expected a key before '='");
        return false;
      }
      if (k + 1 >= tokens.size() || tokens[k + 1].text != "=") {
        error(k + 1 < tokens.size() ? tokens[k + 1].column : after(key), "expected '=' after '" + key.text + "'");
        return false;
      }
      if (k + 2 >= tokens.size() || tokens[k + 2].text == "=") {
        error(tokens[k + 1].column, "missing value for '" + key.text + "'");
        return false;
      }
      if (!each(key, tokens[k + 2])) return false;
      k += 3;
    }
    return true;
  }

  void parse_item(const std::vector<Token>& tokens) {
    const Token& first = tokens[0];
    const bool assignment = tokens.size() > 1 && tokens[1].text == "=";
    if (is_directive(first.text)) {
      if (assignment) {
        error(first.column, "'" + first.text + "' is a directive, not a key: write '" + first.text + " " +
                                (first.text == "arg" ? "NAME ROLE TYPE[EXTENT]" : first.text == "launch" ? "grid=... block=..." : "NAME=VALUE") + "'");
        return;
      }
      if (first.text == "size" || first.text == "second") return sizes(tokens);
      if (first.text == "range" || first.text == "shape") return ranges(tokens);
      if (first.text == "arg") return arg(tokens);
      return launch(tokens);
    }
    if (tokens.size() == 1 && !is_setting_key(first.text)) {
      // Most often the rest of a list written with commas ("allow=tf32,bf16").
      error(first.column, "expected KEY=VALUE, got '" + first.text + "' (list items are separated by '|': allow=tf32|bf16)");
      return;
    }
    pairs(tokens, 0, [&](const Token& key, const Token& value) {
      if (!is_setting_key(key.text)) {
        error(key.column, "unknown key '" + key.text + "' (known: " + kKeyList + ")");
        return false;
      }
      setting(key, value);
      return true;
    });
  }

  std::optional<std::vector<Token>> list(const Token& value) {
    std::vector<Token> items;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= value.text.size(); ++i) {
      if (i == value.text.size() || value.text[i] == '|') {
        const Token item{value.text.substr(start, i - start), value.column + static_cast<int>(start)};
        if (item.text.empty()) {
          error(item.column, "empty item in list '" + value.text + "' (items are separated by '|')");
          return std::nullopt;
        }
        items.push_back(item);
        start = i + 1;
      }
    }
    return items;
  }

  std::optional<json> names(const Token& value, std::initializer_list<std::string_view> allowed, const char* what) {
    auto items = list(value);
    if (!items) return std::nullopt;
    json out = json::array();
    for (const Token& item : *items) {
      const bool ok = allowed.size() ? std::find(allowed.begin(), allowed.end(), item.text) != allowed.end()
                                     : is_identifier(item.text);
      if (!ok) {
        std::string known;
        for (std::string_view a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
        error(item.column, std::string(allowed.size() ? "unknown " : "not ") + what + " '" + item.text + "'" +
                               (allowed.size() ? " (" + known + ")" : " (a name: letters, digits, _)"));
        return std::nullopt;
      }
      if (std::find(out.begin(), out.end(), json(item.text)) != out.end()) {
        error(item.column, "'" + item.text + "' is listed twice");
        return std::nullopt;
      }
      out.push_back(item.text);
    }
    return out;
  }

  std::optional<bool> boolean(const Token& key, const Token& value) {
    if (value.text == "true") return true;
    if (value.text == "false") return false;
    error(value.column, key.text + " must be true or false, got '" + value.text + "'");
    return std::nullopt;
  }

  // A number with an optional unit suffix; the unit's factor applies.
  std::optional<double> quantity(const Token& key, const Token& value,
                                 std::initializer_list<std::pair<std::string_view, double>> units, const char* expected) {
    for (const auto& [unit, factor] : units) {
      if (unit.empty() || (value.text.size() > unit.size() && value.text.ends_with(unit))) {
        const std::string_view number = std::string_view(value.text).substr(0, value.text.size() - unit.size());
        if (const auto parsed = parse_number(number); parsed && *parsed > 0.0) return *parsed * factor;
        if (!unit.empty() && parse_number(number)) break;
      }
    }
    error(value.column, key.text + " must be " + expected + ", got '" + value.text + "'");
    return std::nullopt;
  }

  bool expression(const std::string& text, int column) {
    try {
      size_expression_names(text);
      return true;
    } catch (const SizeExpressionError& e) {
      error(column, e.what());
      return false;
    }
  }

  void setting(const Token& key, const Token& value) {
    const std::string& k = key.text;
    if (k == "atol" || k == "rtol" || k.starts_with("atol.") || k.starts_with("rtol.")) {
      std::string dtype = "*";
      if (k.size() > 4) {
        dtype = k.substr(5);
        if (dtype != "float64" && dtype != "float32" && dtype != "float16" && dtype != "bfloat16") {
          error(key.column + 5, "unknown dtype '" + dtype + "' in '" + k + "' (float64, float32, float16, bfloat16)");
          return;
        }
      }
      const auto number = parse_number(value.text);
      if (!number || *number < 0.0) {
        error(value.column, k + " must be a non-negative number, got '" + value.text + "'");
        return;
      }
      if (!claim(k, key.column)) return;
      json& tolerance = clause(k.substr(0, 4) == "atol" ? "numerics.atol" : "numerics.rtol", key.column).value;
      if (tolerance.is_null()) tolerance = json::object();
      tolerance[dtype] = number_json(*number);
    } else if (k == "allow") {
      if (auto v = names(value, {"tf32", "bf16", "fp16", "fp8"}, "precision")) set("numerics.allow", key, *v);
    } else if (k == "deterministic") {
      if (auto v = boolean(key, value)) set("numerics.deterministic", key, *v);
    } else if (k == "stateless") {
      if (auto v = boolean(key, value)) set("invariants.stateless", key, *v);
    } else if (k == "nan") {
      if (value.text != "propagate" && value.text != "forbid") {
        error(value.column, "nan must be propagate or forbid, got '" + value.text + "'");
        return;
      }
      set("numerics.nan_inf", key, value.text);
    } else if (k == "inplace") {
      if (auto v = names(value, {}, "an argument name")) set("interface.inplace", key, *v);
    } else if (k == "outputs") {
      auto items = list(value);
      if (!items) return;
      json out = json::array();
      for (const Token& item : *items) {
        json entry;
        if (const auto index = parse_integer(item.text)) entry = *index;
        else if (is_identifier(item.text)) entry = item.text;
        else {
          error(item.column, "not an output index or name '" + item.text + "'");
          return;
        }
        if (std::find(out.begin(), out.end(), entry) != out.end()) {
          error(item.column, "'" + item.text + "' is listed twice");
          return;
        }
        out.push_back(entry);
      }
      set("interface.outputs_compared", key, out);
    } else if (k == "spaces") {
      if (auto v = names(value, {"S1", "S2", "S3"}, "space")) set("environment.spaces", key, *v);
    } else if (k == "libraries") {
      if (auto v = names(value, {}, "a library name")) set("environment.libraries", key, *v);
    } else if (k == "target") {
      const auto v = quantity(key, value, {{"x", 1.0}, {"", 1.0}}, "a speedup such as 1.5x");
      if (v && *v < 1.0) {
        error(value.column, "target must be at least 1x (a speedup over the reference), got '" + value.text + "'");
      } else if (v) {
        set("performance.target_speedup", key, number_json(*v));
      }
    } else if (k == "budget") {
      const auto v = parse_integer(value.text);
      if (!v || *v < 1) {
        error(value.column, "budget must be a positive number of candidates, got '" + value.text + "'");
        return;
      }
      set("environment.candidate_budget", key, *v);
    } else if (k == "time" || k == "compile") {
      if (auto v = quantity(key, value, {{"s", 1.0}, {"m", 60.0}, {"h", 3600.0}, {"", 1.0}}, "a duration such as 600s, 10m or 1h")) {
        set(k == "time" ? "environment.time_budget_s" : "environment.compile_budget_s", key, number_json(*v));
      }
    } else if (k == "memory") {
      if (auto v = quantity(key, value,
                            {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"KB", 1e3}, {"MB", 1e6},
                             {"GB", 1e9}, {"B", 1.0}, {"", 1.0}},
                            "a size such as 8GiB")) {
        set("environment.memory_budget_bytes", key, number_json(std::round(*v)));
      }
    } else if (k == "flops" || k == "bytes") {
      if (expression(value.text, value.column)) set("performance." + k, key, value.text);
    }
  }

  // size N=1024 M=512 / second N=1000003
  void sizes(const std::vector<Token>& tokens) {
    const std::string& directive = tokens[0].text;
    if (tokens.size() == 1) {
      error(after(tokens[0]), "expected '" + directive + " NAME=VALUE'");
      return;
    }
    const std::string name = directive == "size" ? "interface.sizes" : "invariants.shape_generality";
    pairs(tokens, 1, [&](const Token& key, const Token& value) {
      if (!is_identifier(key.text)) {
        error(key.column, "'" + key.text + "' is not a size name");
        return false;
      }
      const auto size = parse_integer(value.text);
      if (!size || *size < 1) {
        error(value.column, directive + " " + key.text + " must be a positive integer, got '" + value.text + "'");
        return false;
      }
      if (claim(directive + " " + key.text, key.column)) {
        json& sizes_value = clause(name, tokens[0].column).value;
        if (sizes_value.is_null()) sizes_value = json::object();
        sizes_value[key.text] = *size;
      }
      return true;
    });
  }

  // range N=1024..8192 (shape is the same directive)
  void ranges(const std::vector<Token>& tokens) {
    if (tokens.size() == 1) {
      error(after(tokens[0]), "expected '" + tokens[0].text + " NAME=LO..HI'");
      return;
    }
    pairs(tokens, 1, [&](const Token& key, const Token& value) {
      if (!is_identifier(key.text)) {
        error(key.column, "'" + key.text + "' is not a size name");
        return false;
      }
      const auto dots = value.text.find("..");
      const auto lo = dots == std::string::npos ? std::nullopt : parse_integer(value.text.substr(0, dots));
      const auto hi = dots == std::string::npos ? std::nullopt : parse_integer(value.text.substr(dots + 2));
      if (!lo || !hi || *lo < 1) {
        error(value.column, "expected a range LO..HI of positive integers, got '" + value.text + "'");
        return false;
      }
      if (*lo > *hi) {
        error(value.column, "empty range '" + value.text + "' (LO is above HI)");
        return false;
      }
      if (claim("range " + key.text, key.column)) {
        json& range = clause("interface.shape_range", tokens[0].column).value;
        if (range.is_null()) range = json::object();
        range[key.text] = {*lo, *hi};
      }
      return true;
    });
  }

  // A size expression in brackets, "[M, K]": the element count "M*K".
  std::optional<std::string> extent(const std::string& text, int column) {
    const auto dims = split_top_level(text, column);
    std::string out;
    for (const Token& dim : dims) {
      if (dim.text.empty()) {
        error(dim.column, "empty dimension in '[" + text + "]'");
        return std::nullopt;
      }
      if (!expression(dim.text, dim.column)) return std::nullopt;
      const bool simple = is_identifier(dim.text) || parse_integer(dim.text) ||
                          dim.text.find_first_of("+-%/") == std::string::npos;
      if (!out.empty()) out += "*";
      out += simple || dims.size() == 1 ? dim.text : "(" + dim.text + ")";
    }
    return out;
  }

  // arg NAME ROLE TYPE[EXTENT] [values=LO..HI]  |  arg NAME scalar TYPE = VALUE
  void arg(const std::vector<Token>& tokens) {
    const std::string usage = "expected 'arg NAME ROLE TYPE[EXTENT]' or 'arg NAME scalar TYPE = VALUE'";
    for (std::size_t i = 1; i < std::min<std::size_t>(tokens.size(), 4); ++i) {
      if (tokens[i].text == "=") {
        error(tokens[i].column, usage);
        return;
      }
    }
    if (tokens.size() < 4) {
      error(after(tokens.back()), usage);
      return;
    }
    const Token& name = tokens[1];
    if (!is_identifier(name.text)) {
      error(name.column, "'" + name.text + "' is not an argument name");
      return;
    }
    const auto role = parse_arg_role(tokens[2].text);
    if (!role) {
      error(tokens[2].column, "unknown role '" + tokens[2].text + "' (input, output, inout, scalar)");
      return;
    }
    const Token& typed = tokens[3];
    const auto bracket = typed.text.find('[');
    const std::string type = typed.text.substr(0, bracket);
    if (!is_element_type(type)) {
      error(typed.column, "unknown type '" + type + "' (" + kElementTypeList + ")");
      return;
    }
    KernelArg out;
    out.name = name.text;
    out.role = *role;
    out.type = type;
    const int bracket_column = typed.column + static_cast<int>(bracket);
    if (*role == ArgRole::Scalar) {
      if (bracket != std::string::npos) {
        error(bracket_column, "a scalar has no extent: write 'arg " + name.text + " scalar " + type + " = VALUE'");
        return;
      }
      if (tokens.size() < 6 || tokens[4].text != "=" || tokens[5].text == "=") {
        error(tokens.size() > 4 ? tokens[4].column : after(typed), "a scalar needs a value: 'arg " + name.text + " scalar " + type + " = VALUE'");
        return;
      }
      if (tokens.size() > 6) {
        error(tokens[6].column, "unexpected '" + tokens[6].text + "' after the scalar's value");
        return;
      }
      out.value = tokens[5].text;
      if (!parse_number(out.value) && !expression(out.value, tokens[5].column)) return;
    } else {
      if (bracket == std::string::npos) {
        error(after(typed), "an array needs an extent: 'arg " + name.text + " " + tokens[2].text + " " + type + "[N]'");
        return;
      }
      const auto close = typed.text.rfind(']');
      if (close != typed.text.size() - 1) {
        error(typed.column + static_cast<int>(close) + 1, "unexpected '" + typed.text.substr(close + 1) + "' after ']'");
        return;
      }
      const auto count = extent(typed.text.substr(bracket + 1, close - bracket - 1), bracket_column + 1);
      if (!count) return;
      out.extent = *count;
      if (tokens.size() > 4) {
        if (tokens[4].text != "values" || tokens.size() < 7 || tokens[5].text != "=" || tokens.size() > 7) {
          error(tokens[4].column, "unexpected '" + tokens[4].text + "': an array argument takes only 'values=LO..HI'");
          return;
        }
        const std::string& range = tokens[6].text;
        const auto dots = range.find("..");
        const auto lo = dots == std::string::npos ? std::nullopt : parse_number(range.substr(0, dots));
        const auto hi = dots == std::string::npos ? std::nullopt : parse_number(range.substr(dots + 2));
        if (!lo || !hi || !(*lo < *hi)) {
          error(tokens[6].column, "expected values=LO..HI with LO < HI, got '" + range + "'");
          return;
        }
        out.range = std::make_pair(*lo, *hi);
      }
    }
    if (!claim("arg " + name.text, name.column)) return;
    json& args = clause("interface.args", tokens[0].column).value;
    if (args.is_null()) args = json::array();
    args.push_back(out.to_json());
  }

  // grid=EXPR or grid=(X, Y[, Z]); the same for block; smem=EXPR.
  std::optional<json> dims(const Token& value) {
    std::vector<Token> parts{value};
    const std::string& text = value.text;
    if (text.size() >= 2 && text.front() == '(' && text.back() == ')') {
      int depth = 0;
      std::size_t match = 0;
      for (std::size_t i = 0; i < text.size(); ++i) {
        depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
        if (depth == 0) {
          match = i;
          break;
        }
      }
      if (match == text.size() - 1) {
        auto inner = split_top_level(std::string_view(text).substr(1, text.size() - 2), value.column + 1);
        if (inner.size() > 1) parts = std::move(inner);
      }
    }
    if (parts.size() > 3) {
      error(parts[3].column, "a launch dimension has at most 3 components (x, y, z)");
      return std::nullopt;
    }
    json out = json::array();
    for (const Token& part : parts) {
      if (part.text.empty()) {
        error(part.column, "empty component in '" + text + "'");
        return std::nullopt;
      }
      if (!expression(part.text, part.column)) return std::nullopt;
      out.push_back(part.text);
    }
    while (out.size() < 3) out.push_back("1");
    return out;
  }

  void launch(const std::vector<Token>& tokens) {
    json value = {{"grid", nullptr}, {"block", nullptr}, {"shared_bytes", "0"}};
    std::map<std::string, int> seen;
    const bool ok = pairs(tokens, 1, [&](const Token& key, const Token& v) {
      const std::string field = key.text == "smem" ? "shared_bytes" : key.text;
      if (key.text != "grid" && key.text != "block" && key.text != "smem") {
        error(key.column, "unknown launch key '" + key.text + "' (grid, block, smem)");
        return false;
      }
      if (!seen.emplace(key.text, key.column).second) {
        error(key.column, "duplicate '" + key.text + "' in launch");
        return false;
      }
      if (field == "shared_bytes") {
        if (!expression(v.text, v.column)) return false;
        value[field] = v.text;
      } else {
        auto d = dims(v);
        if (!d) return false;
        value[field] = *d;
      }
      return true;
    });
    if (!ok) return;
    for (const char* needed : {"grid", "block"}) {
      if (value[needed].is_null()) {
        error(tokens[0].column, std::string("launch needs ") + needed + "=...");
        return;
      }
    }
    if (!claim("launch", tokens[0].column)) return;
    clause("interface.launch", tokens[0].column).value = value;
  }

  TargetKind kind_;
  int line_ = 0;
  std::vector<AnnotatedClause> clauses_;
  std::map<std::string, int> first_line_;
  std::vector<AnnotationError> errors_;
};

}  // namespace

Annotations parse_annotations(std::string_view source, SourceLanguage language, int first_line, int last_line) {
  const auto comments = comment_lines(source, language);
  return parse_annotations(std::span<const CommentLine>(comments), language, first_line, last_line);
}

Annotations parse_annotations(std::span<const CommentLine> comments, SourceLanguage language, int first_line,
                              int last_line) {
  Parser parser(language == SourceLanguage::Python ? TargetKind::Pytorch : TargetKind::Cuda);
  // Comments come in source order: the range is found by binary search, so a
  // kernel's annotations cost its own comments, not the file's.
  auto it = std::lower_bound(comments.begin(), comments.end(), first_line,
                             [](const CommentLine& comment, int line) { return comment.line < line; });
  for (; it != comments.end() && it->line <= last_line; ++it) parser.parse_line(*it);
  return parser.finish();
}

}  // namespace hiera::engine::spec
