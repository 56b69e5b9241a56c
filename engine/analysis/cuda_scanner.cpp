#include "engine/analysis/cuda_scanner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace hiera::engine::analysis {

const char* to_string(CudaFunctionKind kind) {
  switch (kind) {
    case CudaFunctionKind::Kernel: return "kernel";
    case CudaFunctionKind::Device: return "device";
    case CudaFunctionKind::Host: return "host";
  }
  return "host";
}

const char* to_string(LaunchForm form) { return form == LaunchForm::Chevron ? "chevron" : "cudaLaunchKernel"; }

bool in_loop(const CudaBody& body, std::uint32_t token) {
  return std::any_of(body.loops.begin(), body.loops.end(), [&](const CudaLoop& loop) {
    return (token >= loop.body.begin && token < loop.body.end) || (token >= loop.header.begin && token < loop.header.end);
  });
}

std::optional<std::int64_t> evaluate_constant(std::string_view expression, const SizeMap& sizes) {
  bool any = false;
  for (std::size_t i = 0; i < expression.size();) {
    const unsigned char c = static_cast<unsigned char>(expression[i]);
    if (std::isalpha(c) || c == '_') {
      std::size_t end = i;
      while (end < expression.size() && (std::isalnum(static_cast<unsigned char>(expression[end])) || expression[end] == '_')) ++end;
      if (!sizes.count(expression.substr(i, end - i))) return std::nullopt;
      any = true;
      i = end;
    } else if (std::isdigit(c)) {
      while (i < expression.size() && std::isalnum(static_cast<unsigned char>(expression[i]))) ++i;
      any = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%' ||
               c == '(' || c == ')') {
      ++i;
    } else {
      return std::nullopt;
    }
  }
  if (!any) return std::nullopt;
  try {
    return evaluate_size_expression(expression, sizes);
  } catch (const SizeExpressionError&) {
    return std::nullopt;  // 256u, division by zero, overflow
  }
}

namespace {

// String views compared without a library call: the scanner compares every
// token with short literals.
inline bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

constexpr std::array<std::string_view, 5> kRecoveryWords = {"__global__", "__device__", "__host__", "template",
                                                            "__launch_bounds__"};
constexpr std::array<std::string_view, 9> kNotFunctionNames = {
    "__launch_bounds__", "__attribute__", "__declspec", "alignas", "decltype", "__align__", "sizeof", "noexcept", "throw"};
constexpr std::array<std::string_view, 11> kStatementWords = {"if", "for", "while", "switch", "return", "sizeof",
                                                              "else", "do", "case", "new", "delete"};
constexpr std::array<std::string_view, 11> kAssignmentOps = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
constexpr std::array<std::string_view, 20> kBuiltinTypes = {
    "int", "float", "double", "char", "void", "unsigned", "signed", "long", "short", "bool",
    "size_t", "half", "__half", "__nv_bfloat16", "int64_t", "int32_t", "uint32_t", "uint64_t", "auto", "const"};

template <std::size_t N>
bool one_of(std::string_view word, const std::array<std::string_view, N>& words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

class CudaScanner {
 public:
  // Continues an existing scan (to walk a body).
  CudaScanner(std::string_view source, CudaScan& scan) : source_(source), scan_(std::move(scan)) {}
  CudaScan release() { return std::move(scan_); }

  CudaScanner(std::string_view source, const Tokens& tokens) : source_(source) {
    scan_.code.reserve(tokens.size());
    for (const auto& token : tokens) {
      if (token.kind == TokenKind::Directive) {
        define_constant(token);
      } else if (token.kind != TokenKind::Comment) {
        scan_.code.push_back(token);
      }
    }
  }

  CudaScan run() {
    const auto& code = scan_.code;
    std::uint32_t transparent = 0;  // open namespace / extern "C" braces
    std::uint32_t i = 0;
    while (i < code.size()) {
      if (is(i, "}")) {
        if (transparent > 0) --transparent;
        else problem(code[i].span(), "unmatched '}'");
        ++i;
      } else if (is(i, ";")) {
        ++i;
      } else {
        i = top_level_item(i, transparent);
      }
    }
    return std::move(scan_);
  }

  void walk(std::uint32_t function_index) { walk_body(function_index); }

 private:
  // ---- tokens -------------------------------------------------------------
  std::string_view text(std::uint32_t i) const { return i < scan_.code.size() ? scan_.code[i].text(source_) : std::string_view{}; }
  bool is(std::uint32_t i, std::string_view s) const { return i < scan_.code.size() && same(text(i), s); }
  bool is_ident(std::uint32_t i) const { return i < scan_.code.size() && scan_.code[i].kind == TokenKind::Identifier; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(scan_.code.size()); }
  Span span_of(std::uint32_t first, std::uint32_t last_inclusive) const {
    return {scan_.code[first].begin, scan_.code[last_inclusive].end};
  }
  std::string range_text(TokenRange r) const {
    if (r.empty()) return "";
    return std::string(source_.substr(scan_.code[r.begin].begin, scan_.code[r.end - 1].end - scan_.code[r.begin].begin));
  }
  void problem(Span span, std::string message) { scan_.problems.push_back({span, std::move(message)}); }

  bool recovery_point(std::uint32_t i) const {
    return scan_.code[i].line_start && scan_.code[i].column == 0 && one_of(text(i), kRecoveryWords);
  }

  // The index of the bracket closing the one at `open`, or `limit` when it
  // never closes before it.
  std::uint32_t match(std::uint32_t open, std::uint32_t limit) const {
    const std::string_view o = text(open);
    const std::string_view c = o == "(" ? ")" : o == "[" ? "]" : o == "{" ? "}" : ">>>";
    int depth = 0;
    for (std::uint32_t k = open; k < limit; ++k) {
      if (text(k) == o) ++depth;
      else if (text(k) == c && --depth == 0) return k;
    }
    return limit;
  }

  // ---- constants ----------------------------------------------------------
  void define_constant(const Token& token) {
    std::string_view line = token.text(source_);
    line.remove_prefix(1);
    const auto word = [&]() {
      const auto start = line.find_first_not_of(" \t");
      if (start == std::string_view::npos) return std::string_view{};
      line.remove_prefix(start);
      std::size_t end = 0;
      while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_')) ++end;
      const auto w = line.substr(0, end);
      line.remove_prefix(end);
      return w;
    };
    if (word() != "define") return;
    const std::string name(word());
    if (name.empty() || (!line.empty() && line[0] == '(')) return;  // a function-like macro
    std::string value(line.substr(0, line.find("//")));
    if (const auto c = value.find("/*"); c != std::string::npos) value.resize(c);
    add_constant(name, trim(value));
  }

  // Not an integer constant expression the size grammar reads: not a size.
  void add_constant(const std::string& name, const std::string& expression) {
    if (const auto value = evaluate_constant(expression, scan_.constants)) scan_.constants[name] = *value;
  }

  // ---- file scope ---------------------------------------------------------
  std::uint32_t top_level_item(std::uint32_t start, std::uint32_t& transparent) {
    // The head: to a '{' or ';' outside parentheses, or a recovery point.
    int parens = 0;
    std::uint32_t k = start;
    bool head_has_paren = false;
    for (; k < size(); ++k) {
      if (k > start && head_has_paren && recovery_point(k)) break;  // a head cut short by the next item
      const auto t = text(k);
      if (t == "(" || t == "[") {
        ++parens;
        head_has_paren = true;
      } else if (t == ")" || t == "]") {
        if (parens > 0) --parens;
      } else if (parens == 0 && (t == "{" || t == ";" || t == "}")) {
        break;
      }
    }
    const TokenRange head{start, k};
    if (k < size() && is(k, "{")) {
      if (is(start, "namespace") || (is(start, "inline") && is(start + 1, "namespace")) ||
          (is(start, "extern") && k == start + 2 && scan_.code[start + 1].kind == TokenKind::String)) {
        ++transparent;
        return k + 1;
      }
      const std::uint32_t name = function_name(head);
      if (name != kNone && !has_top_level(head, "=", name)) return function(head, name, k);
      // A class, struct or union body is a scope like a namespace: its member
      // functions (host code that launches kernels, often) are analysed.
      if (is_class_head(head)) {
        ++transparent;
        return k + 1;
      }
      // An enum or initializer body: skipped whole.
      const std::uint32_t close = match(k, size());
      if (close == size()) problem(scan_.code[k].span(), "unclosed '{'");
      std::uint32_t next = std::min(close + 1, size());
      return next;
    }
    // A declaration, a prototype, or a head cut short by the end of the text
    // or by a recovery point.
    const bool terminated = k < size() && is(k, ";");
    const std::uint32_t name = function_name(head);
    if (name != kNone && !has_top_level(head, "=", name)) {
      declare_function(head, name, terminated);
    } else if (terminated) {
      file_scope_declaration(head);
    }
    if (k < size() && is(k, "}")) return k;  // let run() account for it
    return terminated ? k + 1 : std::max(k, start + 1);
  }

  static constexpr std::uint32_t kNone = static_cast<std::uint32_t>(-1);

  // `struct S`, `class C : public B`, `template <...> struct S`, `union U`;
  // not `enum class E`, not `struct S s = {...}`.
  bool is_class_head(TokenRange head) const {
    for (std::uint32_t k = head.begin; k < head.end; ++k) {
      const auto t = text(k);
      if (t == "enum" || t == "=" || t == "(") return false;
      if (t == "struct" || t == "class" || t == "union") return !has_top_level(head, "=", head.end);
    }
    return false;
  }

  bool has_top_level(TokenRange r, std::string_view what, std::uint32_t before) const {
    int depth = 0;
    for (std::uint32_t k = r.begin; k < std::min(r.end, before); ++k) {
      const auto t = text(k);
      if (t == "(" || t == "[" || t == "{") ++depth;
      else if (t == ")" || t == "]" || t == "}") --depth;
      else if (depth == 0 && t == what) return true;
    }
    return false;
  }

  // The token of the function's name: the identifier before the first
  // parenthesis at depth 0 that is not an attribute's.
  std::uint32_t function_name(TokenRange head) const {
    for (std::uint32_t k = head.begin; k < head.end; ++k) {
      const auto t = text(k);
      if (t == "template" && is(k + 1, "<")) {
        // Skip the template parameter list.
        int depth = 0;
        for (++k; k < head.end; ++k) {
          if (text(k) == "<") ++depth;
          else if (text(k) == ">") --depth;
          else if (text(k) == ">>") depth -= 2;
          if (depth <= 0) break;
        }
        continue;
      }
      if (t == "(") {
        if (k > head.begin && is_ident(k - 1) && !one_of(text(k - 1), kNotFunctionNames) &&
            !one_of(text(k - 1), kStatementWords)) {
          return k - 1;
        }
        k = match(k, head.end);  // an attribute's arguments
      }
    }
    return kNone;
  }

  bool is_shared_declaration(TokenRange head) const {
    for (std::uint32_t k = head.begin; k < head.end; ++k) {
      if (is(k, "__shared__")) return true;
    }
    return false;
  }

  void file_scope_declaration(TokenRange head) {
    if (is_shared_declaration(head)) {
      shared_declaration(head, scan_.shared_arrays);
      return;
    }
    // const int N = 32; constexpr int N = 4 * 32;
    bool constant = false;
    std::uint32_t eq = kNone;
    for (std::uint32_t k = head.begin; k < head.end; ++k) {
      if (is(k, "const") || is(k, "constexpr")) constant = true;
      if (is(k, "=")) {
        eq = k;
        break;
      }
    }
    if (constant && eq != kNone && eq > head.begin && is_ident(eq - 1) && eq + 1 < head.end) {
      add_constant(std::string(text(eq - 1)), range_text({eq + 1, head.end}));
    }
  }

  // ---- functions ----------------------------------------------------------
  CudaFunction function_head(TokenRange head, std::uint32_t name, std::uint32_t& params_end, bool& params_closed) {
    CudaFunction function;
    function.name = std::string(text(name));
    function.name_span = scan_.code[name].span();
    bool global = false, device = false;
    for (std::uint32_t k = head.begin; k < name; ++k) {
      const auto t = text(k);
      if (t == "__global__") global = true;
      else if (t == "__device__") device = true;
      else if (t == "__launch_bounds__" && is(k + 1, "(")) {
        const std::uint32_t close = match(k + 1, name);
        function.launch_bounds = range_text({k + 2, close});
        k = close;
      } else if (t == "template" && is(k + 1, "<")) {
        std::uint32_t close = k + 1;
        int depth = 0;
        for (; close < name; ++close) {
          if (text(close) == "<") ++depth;
          else if (text(close) == ">") --depth;
          else if (text(close) == ">>") depth -= 2;
          if (depth <= 0) break;
        }
        function.template_parameters = range_text({k + 2, close});
        k = close;
      }
    }
    function.kind = global ? CudaFunctionKind::Kernel : device ? CudaFunctionKind::Device : CudaFunctionKind::Host;
    const std::uint32_t open = name + 1;
    const std::uint32_t close = match(open, head.end);
    params_closed = close < head.end;
    params_end = close;
    function.parameters = parameters({open + 1, close});
    return function;
  }

  void declare_function(TokenRange head, std::uint32_t name, bool terminated) {
    std::uint32_t params_end = 0;
    bool params_closed = false;
    CudaFunction function = function_head(head, name, params_end, params_closed);
    function.complete = terminated && params_closed;
    function.span = span_of(head.begin, head.end > head.begin ? head.end - 1 : head.begin);
    if (terminated) function.span.end = scan_.code[head.end].end;
    if (!params_closed) problem(scan_.code[name + 1].span(), "unclosed '(' in the parameter list of '" + function.name + "'");
    add_function(std::move(function), {name + 2, params_end}, {});
  }

  std::uint32_t function(TokenRange head, std::uint32_t name, std::uint32_t open) {
    std::uint32_t params_end = 0;
    bool params_closed = false;
    CudaFunction function = function_head(head, name, params_end, params_closed);
    if (!params_closed) problem(scan_.code[name + 1].span(), "unclosed '(' in the parameter list of '" + function.name + "'");
    const auto [close, closed] = body_end(open);
    const std::uint32_t last = closed ? close : close - 1;
    function.body = Span{scan_.code[open].begin, scan_.code[last].end};
    function.complete = params_closed && closed;
    function.span = {scan_.code[head.begin].begin, scan_.code[last].end};
    CudaBody body;
    body.range = {open + 1, close};
    add_function(std::move(function), {name + 2, params_end}, std::move(body));
    return closed ? close + 1 : close;
  }

  std::uint32_t add_function(CudaFunction function, TokenRange params, CudaBody body) {
    scan_.functions.push_back(std::move(function));
    scan_.bodies.push_back(std::move(body));
    scan_.parameter_tokens.push_back(params);
    return static_cast<std::uint32_t>(scan_.functions.size() - 1);
  }

  // The closing brace of the body opened at `open` ({index, true}), or where
  // the body was cut short ({index of the first token after it, false}).
  std::pair<std::uint32_t, bool> body_end(std::uint32_t open) {
    std::vector<std::uint32_t> stack{open};
    const bool indented = open + 1 < size() && scan_.code[open + 1].line_start && scan_.code[open + 1].column > 0;
    for (std::uint32_t k = open + 1; k < size(); ++k) {
      if (recovery_point(k)) {
        problem(scan_.code[stack.front()].span(), "unclosed '{': the body ends where the next function begins");
        return {k, false};
      }
      const auto t = text(k);
      if (t == "{") {
        stack.push_back(k);
      } else if (t == "}") {
        if (stack.size() > 1 && indented && scan_.code[k].line_start && scan_.code[k].column == 0) {
          // A brace in column 0 closes the function: an inner block was left open.
          problem(scan_.code[stack.back()].span(), "unclosed '{'");
          return {k, true};
        }
        stack.pop_back();
        if (stack.empty()) return {k, true};
      }
    }
    problem(scan_.code[open].span(), "unclosed '{': the body runs to the end of the file");
    return {size(), false};
  }

  std::vector<CudaParameter> parameters(TokenRange r) {
    std::vector<CudaParameter> out;
    if (r.end == r.begin + 1 && is(r.begin, "void")) return out;
    int depth = 0;
    std::uint32_t start = r.begin;
    for (std::uint32_t k = r.begin; k <= r.end; ++k) {
      const auto t = k < r.end ? text(k) : std::string_view{};
      if (t == "(" || t == "[" || t == "<" || t == "{") ++depth;
      else if (t == ")" || t == "]" || t == ">" || t == "}") --depth;
      else if (t == ">>") depth -= 2;
      if (k == r.end || (t == "," && depth == 0)) {
        if (k > start) out.push_back(parameter({start, k}));
        start = k + 1;
      }
    }
    return out;
  }

  CudaParameter parameter(TokenRange r) {
    CudaParameter p;
    p.span = span_of(r.begin, r.end - 1);
    std::uint32_t end = r.end;
    for (std::uint32_t k = r.begin; k < r.end; ++k) {
      if (is(k, "=")) {
        end = k;
        break;
      }
    }
    // The name: the last identifier before any array brackets, unless it is a
    // type word (an unnamed parameter).
    std::uint32_t last = end;
    while (last > r.begin && is(last - 1, "]")) {
      while (last > r.begin && !is(last - 1, "[")) --last;
      if (last > r.begin) --last;
      p.pointer = true;
    }
    std::uint32_t name = kNone;
    if (last > r.begin + 1 && is_ident(last - 1) && !one_of(text(last - 1), kBuiltinTypes) && !is(last - 1, "__restrict__") &&
        !is(last - 1, "__restrict")) {
      name = last - 1;
      p.name = std::string(text(name));
    }
    std::string type;
    bool seen_star = false;
    for (std::uint32_t k = r.begin; k < end; ++k) {
      if (k == name) continue;
      const auto t = text(k);
      if (t == "*" || t == "&") {
        p.pointer = p.pointer || t == "*";
        seen_star = true;
      }
      if (t == "const" && !seen_star) p.is_const = true;
      if (t == "__restrict__" || t == "__restrict") p.restrict = true;
      const bool word = is_ident(k) || scan_.code[k].kind == TokenKind::Number;
      if (!type.empty()) {
        const char previous = type.back();
        const bool previous_word = std::isalnum(static_cast<unsigned char>(previous)) || previous == '_';
        if ((word && (previous_word || previous == '*' || previous == '&' || previous == ',' || previous == '>')) ||
            (t == "const" && previous != ' ')) {
          type += ' ';
        }
      }
      type += t;
    }
    p.type = type;
    return p;
  }

  // ---- bodies -------------------------------------------------------------
  // The token after the statement that starts at k (bounded by `limit`).
  std::uint32_t statement_end(std::uint32_t k, std::uint32_t limit, int nesting = 0) const {
    if (k >= limit) return limit;
    const auto t = text(k);
    if (t == "{") return std::min(match(k, limit) + 1, limit);
    // Statements nested deeper than real code (if if if ...) end at their ';' like simple ones.
    const bool nest = nesting < 100;
    if (nest && (t == "for" || t == "while" || t == "switch" || t == "if") && is(k + 1, "(")) {
      const std::uint32_t after = statement_end(std::min(match(k + 1, limit) + 1, limit), limit, nesting + 1);
      if (t == "if" && is(after, "else") && after < limit) return statement_end(after + 1, limit, nesting + 1);
      return after;
    }
    if (nest && t == "do") {
      std::uint32_t after = statement_end(k + 1, limit, nesting + 1);
      if (is(after, "while") && is(after + 1, "(")) after = std::min(match(after + 1, limit) + 1, limit);
      return is(after, ";") ? after + 1 : after;
    }
    int depth = 0;
    for (std::uint32_t j = k; j < limit; ++j) {
      const auto s = text(j);
      if (s == "(" || s == "[" || s == "{") ++depth;
      else if (s == ")" || s == "]" || s == "}") {
        if (--depth < 0) return j;
      } else if (s == ";" && depth == 0) {
        return j + 1;
      }
    }
    return limit;
  }

  void walk_body(std::uint32_t function_index) {
    CudaBody& body = scan_.bodies[function_index];
    if (body.walked) return;
    body.walked = true;
    const TokenRange r = body.range;
    std::set<std::uint32_t> do_whiles;
    for (std::uint32_t k = r.begin; k < r.end; ++k) {
      const Token& token = scan_.code[k];
      const auto t = text(k);
      if (token.kind == TokenKind::Number) {
        if (is_float_literal(t)) body.float_literals.push_back(k);
        continue;
      }
      if (token.kind != TokenKind::Identifier && t != "<<<") continue;
      if (t == "for" && is(k + 1, "(")) {
        const std::uint32_t close = match(k + 1, r.end);
        CudaLoop loop{{k + 2, close}, {close + 1, statement_end(close + 1, r.end)}, loop_variable({k + 2, close})};
        for_condition(loop.header, body);
        body.loops.push_back(std::move(loop));
      } else if (t == "while" && is(k + 1, "(")) {
        const std::uint32_t close = match(k + 1, r.end);
        body.conditions.push_back({k + 2, close});
        if (!do_whiles.count(k)) body.loops.push_back({{k + 2, close}, {close + 1, statement_end(close + 1, r.end)}, ""});
      } else if (t == "do") {
        const std::uint32_t end = statement_end(k + 1, r.end);
        TokenRange header{};
        if (is(end, "while") && is(end + 1, "(")) {
          do_whiles.insert(end);
          header = {end + 2, match(end + 1, r.end)};
        }
        body.loops.push_back({header, {k + 1, end}, ""});
      } else if ((t == "if" || t == "switch") && is(k + 1, "(")) {
        body.conditions.push_back({k + 2, match(k + 1, r.end)});
      } else if (t == "__shared__") {
        const std::uint32_t end = statement_end(k, r.end);
        shared_declaration({k, end}, body.shared_arrays);
      } else if (t == "double") {
        body.double_tokens.push_back(k);
      } else if (t == "dim3" && is_ident(k + 1) && (is(k + 2, "(") || is(k + 2, "{"))) {
        const std::uint32_t close = match(k + 2, r.end);
        body.assignments.push_back({std::string(text(k + 1)), {k + 3, close}, span_of(k, std::min(close, r.end - 1)), k + 1, true, "dim3"});
        ++k;  // the name is not a call
      } else if (t == "<<<") {
        chevron_launch(k, r.end, function_index);
      } else if (is_ident(k)) {
        identifier_use(k, r, body, function_index);
      }
    }
  }

  static bool is_float_literal(std::string_view t) {
    if (t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) return false;
    const bool floating = t.find('.') != std::string_view::npos || t.find_first_of("eE") != std::string_view::npos;
    return floating && t.back() != 'f' && t.back() != 'F';
  }

  std::string loop_variable(TokenRange header) const {
    for (std::uint32_t k = header.begin; k < header.end && !is(k, ";"); ++k) {
      if (is(k, "=") && k > header.begin && is_ident(k - 1)) return std::string(text(k - 1));
    }
    return "";
  }

  void for_condition(TokenRange header, CudaBody& body) const {
    std::uint32_t first = kNone, second = kNone;
    int depth = 0;
    for (std::uint32_t k = header.begin; k < header.end; ++k) {
      const auto t = text(k);
      if (t == "(" || t == "[") ++depth;
      else if (t == ")" || t == "]") --depth;
      else if (t == ";" && depth == 0) {
        if (first == kNone) first = k;
        else if (second == kNone) second = k;
      }
    }
    if (first != kNone) body.conditions.push_back({first + 1, second == kNone ? header.end : second});
  }

  void identifier_use(std::uint32_t k, TokenRange r, CudaBody& body, std::uint32_t function_index) {
    const auto t = text(k);
    const bool member = k > r.begin && (is(k - 1, ".") || is(k - 1, "->"));
    const bool qualified = k > r.begin && is(k - 1, "::");
    if (is(k + 1, "[") && !member) {
      const bool declaration = k > r.begin && is_ident(k - 1) && !one_of(text(k - 1), kStatementWords) &&
                               !is(k - 1, "return") && !is(k - 1, "throw");
      if (!declaration) subscript(k, r, body);
      if (!declaration) return;
    }
    if (is(k + 1, "(") && !one_of(t, kStatementWords)) {
      const std::uint32_t close = match(k + 1, r.end);
      body.calls.push_back({k, {k + 2, close}, span_of(k, std::min(close, r.end - 1))});
      if (t == "cudaLaunchKernel" && !member) launch_kernel_call(k, close, function_index);
      return;
    }
    if (is(k + 1, "=") && !member && !qualified && !(k > r.begin && is(k - 1, "]"))) {
      const std::uint32_t end = expression_end(k + 2, r.end);
      const bool declaration = k > r.begin && (is_ident(k - 1) || is(k - 1, "*") || is(k - 1, "&") || is(k - 1, ">")) &&
                               !one_of(text(k - 1), kStatementWords);
      const std::uint32_t stmt_begin = declaration ? declaration_start(k, r.begin) : k;
      body.assignments.push_back({std::string(t), {k + 2, end}, span_of(stmt_begin, std::min(end, r.end) - 1), k,
                                  declaration, declaration && is_ident(k - 1) ? std::string(text(k - 1)) : ""});
    }
  }

  // The first token of the declaration whose declarator is at `name`.
  std::uint32_t declaration_start(std::uint32_t name, std::uint32_t limit) const {
    std::uint32_t k = name;
    while (k > limit && !is(k - 1, ";") && !is(k - 1, "{") && !is(k - 1, "}") && !is(k - 1, "(") && !is(k - 1, ")") &&
           !is(k - 1, ",") && !is(k - 1, ":")) {
      --k;
    }
    return k;
  }

  // The end of an initializer: ';' or ',' at depth 0, or a closing bracket.
  std::uint32_t expression_end(std::uint32_t k, std::uint32_t limit) const {
    int depth = 0;
    for (; k < limit; ++k) {
      const auto t = text(k);
      if (t == "(" || t == "[" || t == "{") ++depth;
      else if (t == ")" || t == "]" || t == "}") {
        if (--depth < 0) return k;
      } else if ((t == ";" || t == ",") && depth == 0) {
        return k;
      }
    }
    return limit;
  }

  void subscript(std::uint32_t k, TokenRange r, CudaBody& body) {
    CudaSubscript s;
    s.name = k;
    std::uint32_t j = k + 1;
    while (is(j, "[") && j < r.end) {
      const std::uint32_t close = match(j, r.end);
      s.indices.push_back({j + 1, close});
      j = close + 1;
    }
    const std::uint32_t last = std::min(j, r.end) - 1;
    s.span = span_of(k, last);
    s.written = (j < r.end && (one_of(text(j), kAssignmentOps) || is(j, "++") || is(j, "--"))) ||
                (k > r.begin && (is(k - 1, "++") || is(k - 1, "--")));
    body.subscripts.push_back(std::move(s));
  }

  void shared_declaration(TokenRange r, std::vector<SharedArray>& out) const {
    // __shared__ T name[D1][D2] ...;  extern __shared__ T name[];
    for (std::uint32_t k = r.begin; k < r.end; ++k) {
      if (!is_ident(k) || !is(k + 1, "[")) continue;
      SharedArray a;
      a.name = std::string(text(k));
      for (std::uint32_t j = k - 1; j >= r.begin && j < k; --j) {
        if (is_ident(j) && !is(j, "__shared__") && !is(j, "extern") && !is(j, "static") && !is(j, "volatile") &&
            !is(j, "const") && !is(j, "__align__")) {
          a.type = std::string(text(j));
          break;
        }
      }
      std::uint32_t j = k + 1;
      while (is(j, "[") && j < r.end) {
        const std::uint32_t close = match(j, r.end);
        a.dims.push_back({j + 1, close});
        a.dim_spans.push_back(close > j + 1 ? span_of(j + 1, close - 1) : Span{scan_.code[j].end, scan_.code[j].end});
        j = close + 1;
      }
      std::uint32_t last = std::min(j, r.end) - 1;
      if (is(last + 1, ";")) ++last;
      a.span = span_of(r.begin, last);
      out.push_back(std::move(a));
      return;
    }
  }

  // ---- launches -----------------------------------------------------------
  // Splits [begin, end) at commas outside brackets.
  std::vector<TokenRange> split_arguments(TokenRange r) const {
    std::vector<TokenRange> out;
    if (r.empty()) return out;
    int depth = 0;
    std::uint32_t start = r.begin;
    for (std::uint32_t k = r.begin; k < r.end; ++k) {
      const auto t = text(k);
      if (t == "(" || t == "[" || t == "{" || t == "<<<") ++depth;
      else if (t == ")" || t == "]" || t == "}" || t == ">>>") --depth;
      else if (t == "," && depth == 0) {
        out.push_back({start, k});
        start = k + 1;
      }
    }
    out.push_back({start, r.end});
    return out;
  }

  void chevron_launch(std::uint32_t open, std::uint32_t limit, std::uint32_t function_index) {
    // The kernel: the identifier before `<<<`, or before its template arguments.
    std::uint32_t name = open;
    if (name > 0 && is(name - 1, ">")) {
      int depth = 0;
      for (std::uint32_t j = name - 1; j > 0; --j) {
        if (is(j, ">")) ++depth;
        else if (is(j, "<") && --depth == 0) {
          name = j;
          break;
        }
      }
    }
    if (name == 0 || !is_ident(name - 1)) return;
    --name;
    std::uint32_t first = name;
    while (first >= 2 && is(first - 1, "::") && is_ident(first - 2)) first -= 2;
    const std::uint32_t close = match(open, limit);
    LaunchSite launch;
    launch.kernel = std::string(text(name));
    launch.kernel_span = scan_.code[name].span();
    const auto config = split_arguments({open + 1, close});
    fill_config(launch, config);
    std::uint32_t last = std::min(close, limit - 1);
    if (close < limit && is(close + 1, "(")) {
      const std::uint32_t args_close = match(close + 1, limit);
      for (const auto& a : split_arguments({close + 2, args_close})) launch.arguments.push_back(range_text(a));
      last = std::min(args_close, limit - 1);
    }
    launch.span = span_of(first, last);
    add_launch(std::move(launch), config, open, function_index);
  }

  void launch_kernel_call(std::uint32_t name, std::uint32_t close, std::uint32_t function_index) {
    const auto args = split_arguments({name + 2, close});
    if (args.empty()) return;
    // cudaLaunchKernel(func, grid, block, args, smem, stream): the kernel is
    // the last identifier of the first argument that is not a cast's type.
    std::uint32_t kernel = kNone;
    for (std::uint32_t k = args[0].begin; k < args[0].end; ++k) {
      if (is(k, "reinterpret_cast") || is(k, "static_cast") || is(k, "const_cast")) {
        while (k < args[0].end && !is(k, ">")) ++k;
        continue;
      }
      if (is(k, "(") && is(k + 1, "void")) {
        while (k < args[0].end && !is(k, ")")) ++k;
        continue;
      }
      if (is_ident(k) && !is(k, "void") && !is(k, "const")) {
        kernel = k;
        if (is(k + 1, "<")) break;  // template arguments follow the name
      }
    }
    if (kernel == kNone) return;
    LaunchSite launch;
    launch.form = LaunchForm::LaunchKernel;
    launch.kernel = std::string(text(kernel));
    launch.kernel_span = scan_.code[kernel].span();
    std::vector<TokenRange> config;
    if (args.size() > 1) config.push_back(args[1]);
    if (args.size() > 2) config.push_back(args[2]);
    if (args.size() > 4) config.push_back(args[4]);
    if (args.size() > 5) config.push_back(args[5]);
    fill_config(launch, config);
    if (args.size() > 3) launch.arguments.push_back(range_text(args[3]));
    launch.span = span_of(name, std::min(close, size() - 1));
    add_launch(std::move(launch), config, name, function_index);
  }

  void fill_config(LaunchSite& launch, const std::vector<TokenRange>& config) {
    if (config.size() > 0 && !config[0].empty()) {
      launch.grid = range_text(config[0]);
      launch.grid_span = span_of(config[0].begin, config[0].end - 1);
    }
    if (config.size() > 1 && !config[1].empty()) {
      launch.block = range_text(config[1]);
      launch.block_span = span_of(config[1].begin, config[1].end - 1);
    }
    if (config.size() > 2 && !config[2].empty()) launch.shared_bytes = range_text(config[2]);
    if (config.size() > 3 && !config[3].empty()) launch.stream = range_text(config[3]);
  }

  void add_launch(LaunchSite launch, const std::vector<TokenRange>& config, std::uint32_t at, std::uint32_t function_index) {
    const CudaBody& body = scan_.bodies[function_index];
    launch.caller = scan_.functions[function_index].name;
    launch.in_loop = in_loop(body, at);
    // The host definitions the configuration uses, transitively, latest before the launch.
    std::vector<std::string> pending;
    for (const auto& r : config) {
      for (std::uint32_t k = r.begin; k < r.end; ++k) {
        if (is_ident(k) && !(k > r.begin && (is(k - 1, ".") || is(k - 1, "->")))) pending.emplace_back(text(k));
      }
    }
    std::set<std::string> seen;
    std::vector<const CudaAssignment*> used;
    while (!pending.empty()) {
      const std::string name = pending.back();
      pending.pop_back();
      if (!seen.insert(name).second) continue;
      const CudaAssignment* latest = nullptr;
      for (const auto& a : body.assignments) {
        if (a.name == name && a.at < at) latest = &a;
      }
      if (!latest) continue;
      used.push_back(latest);
      for (std::uint32_t k = latest->value.begin; k < latest->value.end; ++k) {
        if (is_ident(k) && !(is(k - 1, ".") || is(k - 1, "->"))) pending.emplace_back(text(k));
      }
    }
    std::sort(used.begin(), used.end(), [](const auto* a, const auto* b) { return a->at < b->at; });
    for (const auto* a : used) launch.sizing.push_back({a->name, range_text(a->value), a->span});
    if (config.size() > 1) launch.block_threads = block_threads(config[1], body, at);
    scan_.bodies[function_index].launches.push_back(std::move(launch));
  }

  // x*y*z of a block expression when every dimension is a constant: a scalar
  // expression, dim3(x, y, z), or a dim3 variable defined with constants.
  std::optional<std::int64_t> block_threads(TokenRange r, const CudaBody& body, std::uint32_t at) const {
    SizeMap sizes = scan_.constants;
    const CudaAssignment* dim3_variable = nullptr;
    for (const auto& a : body.assignments) {
      if (a.at >= at) break;
      if (a.type == "dim3" || is(a.value.begin, "dim3")) {
        if (r.end == r.begin + 1 && text(r.begin) == a.name) dim3_variable = &a;
        continue;
      }
      if (const auto value = evaluate_constant(range_text(a.value), sizes)) sizes[a.name] = *value;
      else sizes.erase(a.name);  // reassigned to something unknown
    }
    TokenRange dims = dim3_variable ? dim3_variable->value : r;
    if (is(dims.begin, "dim3") && (is(dims.begin + 1, "(") || is(dims.begin + 1, "{"))) {
      dims = {dims.begin + 2, match(dims.begin + 1, dims.end)};  // dim3(x, y) written out
    }
    std::int64_t threads = 1;
    for (const auto& d : split_arguments(dims)) {
      const auto value = evaluate_constant(range_text(d), sizes);
      if (!value) return std::nullopt;
      threads *= *value;
    }
    return threads;
  }

  std::string_view source_;
  CudaScan scan_;
};

}  // namespace

CudaScan scan_cuda(std::string_view source, const Tokens& tokens) { return CudaScanner(source, tokens).run(); }

void scan_cuda_body(std::string_view source, CudaScan& scan, std::size_t function) {
  CudaScanner scanner(source, scan);
  scanner.walk(static_cast<std::uint32_t>(function));
  scan = scanner.release();
}

}  // namespace hiera::engine::analysis
