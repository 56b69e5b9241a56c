#include "engine/analysis/python_syntax.h"

#include <algorithm>
#include <array>
#include <string>

namespace hiera::engine::analysis {

namespace {

constexpr int kMaxNesting = 100;  // brackets, prefix operators or blocks deeper than this are not read as such

constexpr std::array<std::string_view, 13> kAugmented = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<="};

// Helpers over the code tokens, shared by the statement and expression parsers.
class TokenView {
 public:
  TokenView(std::string_view source, const Tokens& code) : source_(source), code_(code) {}
  std::string_view text(std::uint32_t i) const { return i < code_.size() ? code_[i].text(source_) : std::string_view{}; }
  bool is(std::uint32_t i, std::string_view s) const { return i < code_.size() && text(i) == s; }
  TokenKind kind(std::uint32_t i) const { return code_[i].kind; }
  const Token& at(std::uint32_t i) const { return code_[i]; }
  bool is_open(std::string_view t) const { return t == "(" || t == "[" || t == "{"; }
  bool is_close(std::string_view t) const { return t == ")" || t == "]" || t == "}"; }
  Span span(PyRange r) const {
    if (r.empty()) return {r.begin < code_.size() ? code_[r.begin].begin : source_.size(), r.begin < code_.size() ? code_[r.begin].begin : source_.size()};
    return {code_[r.begin].begin, code_[r.end - 1].end};
  }
  // The first token in r at bracket depth 0 for which pred holds, else r.end.
  template <class Pred>
  std::uint32_t find_top(PyRange r, Pred pred) const {
    int depth = 0;
    for (std::uint32_t k = r.begin; k < r.end; ++k) {
      const auto t = text(k);
      if (kind(k) == TokenKind::Punct && is_open(t)) ++depth;
      else if (kind(k) == TokenKind::Punct && is_close(t)) depth = std::max(0, depth - 1);
      else if (depth == 0 && pred(k, t)) return k;
    }
    return r.end;
  }
  std::vector<PyRange> split_top(PyRange r, std::string_view separator) const {
    std::vector<PyRange> out;
    std::uint32_t start = r.begin;
    for (;;) {
      const std::uint32_t k = find_top({start, r.end}, [&](std::uint32_t, std::string_view t) { return t == separator; });
      if (k > start || k < r.end) out.push_back({start, k});
      if (k >= r.end) break;
      start = k + 1;
    }
    return out;
  }
  std::uint32_t match(std::uint32_t open, std::uint32_t limit) const {
    int depth = 0;
    for (std::uint32_t k = open; k < limit; ++k) {
      if (kind(k) != TokenKind::Punct) continue;
      if (is_open(text(k))) ++depth;
      else if (is_close(text(k)) && --depth == 0) return k;
    }
    return limit;
  }

 private:
  std::string_view source_;
  const Tokens& code_;
};

// ---- statements -------------------------------------------------------------

class StatementParser {
 public:
  StatementParser(std::string_view source, PythonSyntax& syntax) : view_(source, syntax.code), syntax_(syntax) {
    std::uint32_t start = 0;
    for (std::uint32_t k = 0; k < syntax.code.size(); ++k) {
      if (syntax.code[k].kind == TokenKind::Newline) {
        if (k > start) lines_.push_back({start, k});
        start = k + 1;
      }
    }
    if (start < syntax.code.size()) lines_.push_back({start, static_cast<std::uint32_t>(syntax.code.size())});
  }

  std::vector<PyStmt> run() {
    std::size_t li = 0;
    std::vector<PyStmt> out;
    while (li < lines_.size()) {
      auto block = parse_block(li, indent(li));
      out.insert(out.end(), std::make_move_iterator(block.begin()), std::make_move_iterator(block.end()));
    }
    return out;
  }

 private:
  std::uint32_t indent(std::size_t li) const { return view_.at(lines_[li].begin).column; }

  std::vector<PyStmt> parse_block(std::size_t& li, std::uint32_t block_indent) {
    ++block_depth_;
    std::vector<PyStmt> out = parse_block_lines(li, block_indent);
    --block_depth_;
    return out;
  }

  std::vector<PyStmt> parse_block_lines(std::size_t& li, std::uint32_t block_indent) {
    std::vector<PyStmt> out;
    std::vector<PyRange> decorators;
    while (li < lines_.size()) {
      const std::uint32_t ind = indent(li);
      if (ind < block_indent) break;
      if (ind > block_indent) {
        problem(view_.span({lines_[li].begin, lines_[li].begin + 1}), "unexpected indent");
      }
      const PyRange line = lines_[li++];
      if (view_.is(line.begin, "@")) {
        decorators.push_back({line.begin + 1, line.end});
        continue;
      }
      for (auto& stmt : line_statements(line, ind, li)) {
        if (stmt.kind == PyStmtKind::Def || stmt.kind == PyStmtKind::Class) {
          stmt.decorators = std::move(decorators);
          decorators.clear();
        }
        out.push_back(std::move(stmt));
      }
    }
    return out;
  }

  // The statements of one logical line: simple ones split at ';', or one
  // compound statement with its body.
  std::vector<PyStmt> line_statements(PyRange line, std::uint32_t ind, std::size_t& li) {
    std::vector<PyStmt> out;
    std::string_view first = view_.text(line.begin);
    if (first == "async") first = view_.text(line.begin + 1);
    const bool compound = first == "if" || first == "elif" || first == "else" || first == "for" || first == "while" ||
                          first == "with" || first == "try" || first == "except" || first == "finally" ||
                          first == "def" || first == "class" || soft_keyword_header(line, first);
    if (!compound) {
      for (const auto& part : view_.split_top(line, ";")) {
        if (!part.empty()) out.push_back(simple(part, ind));
      }
      return out;
    }
    out.push_back(compound_statement(line, ind, li));
    return out;
  }

  // `match subject:` and `case pattern:` (Python 3.10): `match` and `case` are keywords only
  // there, so `match = 1` or `case(x)` stay expressions; a header ends in ':', an expression never does.
  bool soft_keyword_header(PyRange line, std::string_view first) const {
    if ((first != "match" && first != "case") || line.end - line.begin < 3 || !view_.is(line.end - 1, ":")) return false;
    const std::string_view second = view_.text(line.begin + 1);
    return second != "=" && second != "." && second != ":" && second != "," && second != ")" && second != "]";
  }

  PyStmt compound_statement(PyRange line, std::uint32_t ind, std::size_t& li) {
    PyStmt s;
    s.indent = ind;
    const std::uint32_t keyword = view_.is(line.begin, "async") ? line.begin + 1 : line.begin;
    const std::string_view word = view_.text(keyword);
    // The header ends at its ':' (outside brackets; a lambda's ':' does not count).
    std::uint32_t colon = line.end;
    {
      int lambdas = 0;
      colon = view_.find_top({keyword + 1, line.end}, [&](std::uint32_t, std::string_view t) {
        if (t == "lambda") ++lambdas;
        if (t != ":") return false;
        if (lambdas > 0) {
          --lambdas;
          return false;
        }
        return true;
      });
    }
    const PyRange head{keyword + 1, colon};
    s.tokens = {line.begin, colon < line.end ? colon + 1 : line.end};
    s.header = view_.span(s.tokens);
    if (word == "def") {
      s.kind = PyStmtKind::Def;
      s.name = head.begin;
      if (view_.is(head.begin + 1, "(")) {
        const std::uint32_t close = view_.match(head.begin + 1, head.end);
        s.parameters = {head.begin + 2, close};
        if (close >= head.end) problem(view_.span({head.begin + 1, head.begin + 2}), "unclosed '(' in the parameters of '" + std::string(view_.text(head.begin)) + "'");
      }
    } else if (word == "class") {
      s.kind = PyStmtKind::Class;
      s.name = head.begin;
      if (view_.is(head.begin + 1, "(")) {
        const std::uint32_t close = view_.match(head.begin + 1, head.end);
        for (const auto& base : view_.split_top({head.begin + 2, close}, ",")) {
          if (!base.empty()) s.targets.push_back(base);
        }
      }
    } else if (word == "for") {
      s.kind = PyStmtKind::For;
      const std::uint32_t in = view_.find_top(head, [](std::uint32_t, std::string_view t) { return t == "in"; });
      s.targets.push_back({head.begin, in});
      s.value = {std::min(in + 1, head.end), head.end};
    } else {
      s.kind = word == "if" ? PyStmtKind::If : word == "elif" ? PyStmtKind::Elif : word == "else" ? PyStmtKind::Else
             : word == "while" ? PyStmtKind::While : word == "with" ? PyStmtKind::With : word == "try" ? PyStmtKind::Try
             : word == "except" ? PyStmtKind::Except : word == "match" ? PyStmtKind::Match
             : word == "case" ? PyStmtKind::Case : PyStmtKind::Finally;
      s.value = head;
    }
    if (colon >= line.end) problem(view_.span({line.end - 1, line.end}), "expected ':' after the header");
    Span end = s.header;
    if (colon + 1 < line.end) {
      // `if x: return y` — the body is on the header's line.
      for (const auto& part : view_.split_top({colon + 1, line.end}, ";")) {
        if (!part.empty()) s.body.push_back(simple(part, ind + 1));
      }
      end = view_.span({line.begin, line.end});
    } else if (li < lines_.size() && indent(li) > ind && block_depth_ > kMaxNesting) {
      problem(s.header, "blocks nested too deeply: the body is read as following statements");
    } else if (li < lines_.size() && indent(li) > ind && !(s.body = parse_block(li, indent(li))).empty()) {
      end = s.body.back().span;
    } else {
      // No indented lines, or only decorators there (the fuzzer's `class C:` over a line of '@').
      s.has_body = false;
      const std::string what = s.kind == PyStmtKind::Def || s.kind == PyStmtKind::Class
                                   ? "'" + std::string(view_.text(s.name)) + "' has no body"
                                   : "'" + std::string(word) + "' has no body";
      problem(s.header, what);
    }
    s.span = {s.header.begin, end.end};
    return s;
  }

  PyStmt simple(PyRange r, std::uint32_t ind) {
    PyStmt s;
    s.indent = ind;
    s.tokens = r;
    s.header = view_.span(r);
    s.span = s.header;
    const auto first = view_.text(r.begin);
    if (first == "return") {
      s.kind = PyStmtKind::Return;
      s.value = {r.begin + 1, r.end};
      return s;
    }
    if (first == "pass" || first == "break" || first == "continue") {
      s.kind = PyStmtKind::Pass;
      return s;
    }
    if (first == "import" || first == "from") {
      s.kind = PyStmtKind::Import;
      return s;
    }
    if (first == "raise" || first == "del" || first == "global" || first == "nonlocal" || first == "assert") {
      s.kind = PyStmtKind::Other;
      s.value = {r.begin + 1, r.end};
      return s;
    }
    // Targets end at '=' outside brackets and before any lambda (whose
    // defaults also use '=').
    const std::uint32_t lambda = view_.find_top(r, [](std::uint32_t, std::string_view t) { return t == "lambda"; });
    const PyRange before_lambda{r.begin, lambda};
    const std::uint32_t aug = view_.find_top(before_lambda, [](std::uint32_t, std::string_view t) {
      return std::find(kAugmented.begin(), kAugmented.end(), t) != kAugmented.end();
    });
    if (aug < before_lambda.end) {
      s.kind = PyStmtKind::AugAssign;
      s.op = view_.text(aug);
      s.targets.push_back({r.begin, aug});
      s.value = {aug + 1, r.end};
      return s;
    }
    std::vector<std::uint32_t> equals;
    std::uint32_t from = r.begin;
    for (;;) {
      const std::uint32_t eq = view_.find_top({from, lambda}, [](std::uint32_t, std::string_view t) { return t == "="; });
      if (eq >= lambda) break;
      equals.push_back(eq);
      from = eq + 1;
    }
    if (equals.empty()) {
      // An annotated name without a value (`x: int`) is not an expression.
      s.kind = PyStmtKind::Expr;
      s.value = r;
      return s;
    }
    s.kind = PyStmtKind::Assign;
    std::uint32_t start = r.begin;
    for (const auto eq : equals) {
      PyRange target{start, eq};
      // x: T = v  — the target is x.
      const std::uint32_t colon = view_.find_top(target, [](std::uint32_t, std::string_view t) { return t == ":"; });
      target.end = colon;
      s.targets.push_back(target);
      start = eq + 1;
    }
    s.value = {start, r.end};
    return s;
  }

  void problem(Span span, std::string message) { syntax_.problems.push_back({span, std::move(message)}); }

  TokenView view_;
  PythonSyntax& syntax_;
  std::vector<PyRange> lines_;
  int block_depth_ = 0;
};

// ---- expressions ------------------------------------------------------------

int precedence(std::string_view op) {
  if (op == "|") return 5;
  if (op == "^") return 6;
  if (op == "&") return 7;
  if (op == "<<" || op == ">>") return 8;
  if (op == "+" || op == "-") return 9;
  if (op == "*" || op == "@" || op == "/" || op == "//" || op == "%") return 10;
  return 0;
}

class ExpressionParser {
 public:
  ExpressionParser(std::string_view source, const PythonSyntax& syntax, PyRange range)
      : view_(source, syntax.code), code_(syntax.code), pos_(range.begin), end_(range.end) {}

  PyExprTree run() {
    tree_.root = expr_list();
    // Whatever is left over (a half-typed tail) is kept as an error node.
    while (pos_ < end_) {
      error_at(pos_);
      ++pos_;
    }
    return std::move(tree_);
  }

 private:
  bool at(std::string_view s) const { return pos_ < end_ && view_.text(pos_) == s; }
  bool at_punct(std::string_view s) const { return pos_ < end_ && code_[pos_].kind == TokenKind::Punct && view_.text(pos_) == s; }
  bool done() const { return pos_ >= end_; }
  std::uint32_t begin_of(int node) const { return static_cast<std::uint32_t>(tree_.nodes[node].span.begin); }

  int add(PyExprKind kind, Span span, std::string_view text = {}, std::vector<int> children = {}) {
    tree_.nodes.push_back({kind, span, text, std::move(children), {}});
    return static_cast<int>(tree_.nodes.size() - 1);
  }
  Span token_span(std::uint32_t k) const { return code_[k].span(); }
  Span join(int a, int b) const { return {tree_.nodes[a].span.begin, tree_.nodes[b].span.end}; }
  std::size_t end_offset() const {
    if (pos_ > 0 && pos_ - 1 < code_.size()) return code_[pos_ - 1].end;
    return 0;
  }
  int error_at(std::uint32_t k) {
    if (k < end_) return add(PyExprKind::Error, token_span(k), view_.text(k));
    const std::size_t at = end_offset();
    return add(PyExprKind::Error, {at, at});  // a missing operand at the end
  }

  // a, b, *c  (a tuple when there is a top-level comma)
  int expr_list() {
    if (done()) return error_at(pos_);
    const int first = starred_or_test();
    if (!at_punct(",")) return first;
    std::vector<int> items{first};
    while (at_punct(",")) {
      ++pos_;
      if (done() || at_punct(")") || at_punct("]") || at_punct("}") || at_punct("=")) break;
      items.push_back(starred_or_test());
    }
    return add(PyExprKind::Tuple, {tree_.nodes[first].span.begin, end_offset()}, {}, std::move(items));
  }

  int starred_or_test() {
    if (at_punct("*") || at_punct("**")) {
      const std::uint32_t star = pos_++;
      const int operand = done() ? error_at(pos_) : bitor_expr();
      return add(PyExprKind::Starred, {code_[star].begin, tree_.nodes[operand].span.end}, view_.text(star), {operand});
    }
    return test();
  }

  int test() {
    if (at("lambda")) return lambda();
    const int body = or_test();
    if (at("if") ) {
      ++pos_;
      const int condition = or_test();
      int orelse = -1;
      if (at("else")) {
        ++pos_;
        orelse = test();
      } else {
        orelse = error_at(pos_);
      }
      return add(PyExprKind::IfExp, join(body, orelse), "if", {body, condition, orelse});
    }
    if (at_punct(":=")) {
      ++pos_;
      const int value = test();
      return add(PyExprKind::BinOp, join(body, value), ":=", {body, value});
    }
    return body;
  }

  int lambda() {
    const std::uint32_t start = pos_++;
    while (!done() && !at_punct(":")) ++pos_;  // parameters: not analysed
    if (at_punct(":")) ++pos_;
    const int body = done() ? error_at(pos_) : test();
    return add(PyExprKind::Lambda, {code_[start].begin, tree_.nodes[body].span.end}, "lambda", {body});
  }

  int or_test() {
    int left = and_test();
    while (at("or")) {
      ++pos_;
      const int right = and_test();
      left = add(PyExprKind::BoolOp, join(left, right), "or", {left, right});
    }
    return left;
  }

  int and_test() {
    int left = not_test();
    while (at("and")) {
      ++pos_;
      const int right = not_test();
      left = add(PyExprKind::BoolOp, join(left, right), "and", {left, right});
    }
    return left;
  }

  int not_test() {
    const DepthGuard guard(depth_);
    if (depth_ > kMaxNesting) return give_up();
    if (at("not")) {
      const std::uint32_t start = pos_++;
      const int operand = not_test();
      return add(PyExprKind::UnaryOp, {code_[start].begin, tree_.nodes[operand].span.end}, "not", {operand});
    }
    return comparison();
  }

  int comparison() {
    int left = binary(5);
    for (;;) {
      std::string_view op;
      if (at_punct("<") || at_punct(">") || at_punct("==") || at_punct(">=") || at_punct("<=") || at_punct("!=")) {
        op = view_.text(pos_++);
      } else if (at("in")) {
        op = "in";
        ++pos_;
      } else if (at("not") && view_.is(pos_ + 1, "in") && pos_ + 1 < end_) {
        op = "not in";
        pos_ += 2;
      } else if (at("is")) {
        ++pos_;
        op = "is";
        if (at("not")) {
          ++pos_;
          op = "is not";
        }
      } else {
        return left;
      }
      const int right = binary(5);
      left = add(PyExprKind::Compare, join(left, right), op, {left, right});
    }
  }

  int binary(int level) {
    if (level > 10) return unary();
    int left = binary(level + 1);
    while (!done() && code_[pos_].kind == TokenKind::Punct && precedence(view_.text(pos_)) == level) {
      const std::string_view op = view_.text(pos_++);
      const int right = binary(level + 1);
      left = add(PyExprKind::BinOp, join(left, right), op, {left, right});
    }
    return left;
  }

  int unary() {
    const DepthGuard guard(depth_);
    if (depth_ > kMaxNesting) return give_up();
    if (at_punct("-") || at_punct("+") || at_punct("~")) {
      const std::uint32_t start = pos_++;
      const int operand = unary();
      return add(PyExprKind::UnaryOp, {code_[start].begin, tree_.nodes[operand].span.end}, view_.text(start), {operand});
    }
    return power();
  }

  int power() {
    if (at("await")) ++pos_;
    const int base = primary();
    if (at_punct("**")) {
      ++pos_;
      const int exponent = unary();
      return add(PyExprKind::BinOp, join(base, exponent), "**", {base, exponent});
    }
    return base;
  }

  int primary() {
    int node = atom();
    for (;;) {
      if (at_punct(".")) {
        ++pos_;
        if (!done() && code_[pos_].kind == TokenKind::Identifier) {
          const std::uint32_t name = pos_++;
          node = add(PyExprKind::Attribute, {tree_.nodes[node].span.begin, code_[name].end}, view_.text(name), {node});
        } else {
          // `x.` being typed: an attribute with no name yet.
          node = add(PyExprKind::Attribute, {tree_.nodes[node].span.begin, end_offset()}, "", {node});
        }
      } else if (at_punct("(")) {
        node = call(node);
      } else if (at_punct("[")) {
        node = subscript(node);
      } else {
        return node;
      }
    }
  }

  int call(int callee) {
    ++pos_;  // (
    std::vector<int> children{callee};
    std::vector<std::string_view> roles;
    while (!done() && !at_punct(")")) {
      const std::uint32_t before = pos_;
      std::string_view role;
      int argument = -1;
      if (code_[pos_].kind == TokenKind::Identifier && view_.is(pos_ + 1, "=") && pos_ + 1 < end_) {
        role = view_.text(pos_);
        pos_ += 2;
        argument = done() || at_punct(")") || at_punct(",") ? error_at(pos_) : test();
      } else if (at_punct("*") || at_punct("**")) {
        role = view_.text(pos_++);
        argument = done() ? error_at(pos_) : test();
      } else {
        argument = test();
        if (at("for") || at("async")) argument = comprehension(argument, code_[before].begin);
      }
      children.push_back(argument);
      roles.push_back(role);
      if (at_punct(",")) ++pos_;
      else if (!at_punct(")")) {
        if (pos_ == before) ++pos_;  // make progress past what cannot be read
        else if (!done() && !at_punct(")")) {
          error_at(pos_);
          ++pos_;
        }
      }
    }
    const bool closed = at_punct(")");
    if (closed) ++pos_;
    const int node = add(PyExprKind::Call, {tree_.nodes[callee].span.begin, end_offset()}, {}, std::move(children));
    tree_.nodes[node].roles = std::move(roles);
    return node;
  }

  int subscript(int value) {
    ++pos_;  // [
    std::vector<int> items;
    while (!done() && !at_punct("]")) {
      const std::uint32_t before = pos_;
      items.push_back(slice_item());
      if (at_punct(",")) ++pos_;
      else if (pos_ == before) ++pos_;
      else if (!done() && !at_punct("]")) ++pos_;
    }
    if (at_punct("]")) ++pos_;
    int index = -1;
    if (items.size() == 1) index = items[0];
    else if (items.empty()) index = error_at(pos_);
    else index = add(PyExprKind::Tuple, join(items.front(), items.back()), {}, items);
    return add(PyExprKind::Subscript, {tree_.nodes[value].span.begin, end_offset()}, {}, {value, index});
  }

  int slice_item() {
    const std::size_t start = pos_ < end_ ? code_[pos_].begin : end_offset();
    int parts[3] = {-1, -1, -1};
    int part = 0;
    bool is_slice = false;
    while (part < 3) {
      if (!done() && !at_punct(":") && !at_punct(",") && !at_punct("]")) parts[part] = test();
      if (at_punct(":")) {
        is_slice = true;
        ++pos_;
        ++part;
      } else {
        break;
      }
    }
    if (!is_slice) return parts[0] >= 0 ? parts[0] : error_at(pos_);
    return add(PyExprKind::Slice, {start, end_offset()}, ":", {parts[0], parts[1], parts[2]});
  }

  // After the element: `for t in it [if c]...` clauses, up to the closing bracket.
  int comprehension(int element, std::size_t start) {
    std::vector<int> children{element};
    std::vector<std::string_view> roles{"element"};
    while (at("for") || at("async")) {
      if (at("async")) ++pos_;
      ++pos_;  // for
      std::vector<int> targets{binary(5)};
      while (at_punct(",")) {
        ++pos_;
        targets.push_back(binary(5));
      }
      const int target = targets.size() == 1 ? targets[0] : add(PyExprKind::Tuple, join(targets.front(), targets.back()), {}, targets);
      children.push_back(target);
      roles.push_back("target");
      if (at("in")) ++pos_;
      children.push_back(done() ? error_at(pos_) : or_test());
      roles.push_back("iter");
      while (at("if")) {
        ++pos_;
        children.push_back(or_test());
        roles.push_back("if");
      }
    }
    const int node = add(PyExprKind::Comprehension, {start, end_offset()}, "for", std::move(children));
    tree_.nodes[node].roles = std::move(roles);
    return node;
  }

  int atom() {
    if (done()) return error_at(pos_);
    const std::uint32_t k = pos_;
    const Token& token = code_[k];
    const std::string_view t = view_.text(k);
    if (token.kind == TokenKind::Identifier) {
      if (t == "lambda") return lambda();
      if (t == "yield") {
        ++pos_;
        if (at("from")) ++pos_;
        return done() ? add(PyExprKind::Constant, token_span(k), t) : expr_list();
      }
      ++pos_;
      if (t == "True" || t == "False" || t == "None") return add(PyExprKind::Constant, token_span(k), t);
      return add(PyExprKind::Name, token_span(k), t);
    }
    if (token.kind == TokenKind::Number) {
      ++pos_;
      return add(PyExprKind::Number, token_span(k), t);
    }
    if (token.kind == TokenKind::String) {
      while (pos_ < end_ && code_[pos_].kind == TokenKind::String) ++pos_;  // implicit concatenation
      return add(PyExprKind::String, {token.begin, code_[pos_ - 1].end}, t);
    }
    if (t == "...") {
      ++pos_;
      return add(PyExprKind::Constant, token_span(k), t);
    }
    if (t == "(" || t == "[" || t == "{") return bracketed(t);
    ++pos_;
    return error_at(k);
  }

  int bracketed(std::string_view open) {
    const std::uint32_t start = pos_++;
    const std::string_view close = open == "(" ? ")" : open == "[" ? "]" : "}";
    const PyExprKind kind = open == "(" ? PyExprKind::Tuple : open == "[" ? PyExprKind::List : PyExprKind::Set;
    std::vector<int> items;
    bool comma = false;
    bool dict = false;
    while (!done() && !at_punct(close)) {
      const std::uint32_t before = pos_;
      int item = -1;
      if (open == "{" && at_punct("**")) {
        ++pos_;
        item = bitor_expr();
        dict = true;
      } else {
        item = starred_or_test();
      }
      if (at("for") || at("async")) {
        item = comprehension(item, code_[start].begin);
      } else if (open == "{" && at_punct(":")) {
        ++pos_;
        dict = true;
        const int key = item;
        item = done() ? error_at(pos_) : test();
        if (at("for") || at("async")) {
          // {k: v for ...}: a comprehension whose element is the value, with its key.
          item = comprehension(item, code_[start].begin);
          tree_.nodes[item].children.push_back(key);
          tree_.nodes[item].roles.push_back("key");
        } else {
          items.push_back(key);
        }
      }
      items.push_back(item);
      if (at_punct(",")) {
        comma = true;
        ++pos_;
      } else if (!at_punct(close)) {
        if (pos_ == before) ++pos_;
        else if (!done()) ++pos_;
      }
    }
    const bool closed = at_punct(close);
    if (closed) ++pos_;
    const Span span{code_[start].begin, end_offset()};
    if (open == "(" && items.size() == 1 && !comma) {
      // A parenthesized expression keeps its own node, widened to the parentheses.
      tree_.nodes[items[0]].span = span;
      return items[0];
    }
    if (items.size() == 1 && tree_.nodes[items[0]].kind == PyExprKind::Comprehension && !comma) {
      tree_.nodes[items[0]].span = span;
      return items[0];
    }
    return add(dict ? PyExprKind::Dict : kind, span, {}, std::move(items));
  }

  int bitor_expr() { return binary(5); }

  // Nesting deeper than any real code (a pasted blob, ((((...): the rest of
  // the range is one error node, so the parser's and every later walker's
  // recursion stays bounded.
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(++d) {}
    ~DepthGuard() { --depth; }
  };
  int give_up() {
    const std::size_t begin = pos_ < end_ ? code_[pos_].begin : end_offset();
    pos_ = end_;
    return add(PyExprKind::Error, {begin, std::max(begin, end_offset())});
  }
  int depth_ = 0;

  TokenView view_;
  const Tokens& code_;
  std::uint32_t pos_;
  std::uint32_t end_;
  PyExprTree tree_;
};

}  // namespace

PythonSyntax parse_python(std::string_view source, const Tokens& tokens) {
  PythonSyntax syntax;
  syntax.code.reserve(tokens.size());
  for (const auto& t : tokens) {
    if (t.kind != TokenKind::Comment) syntax.code.push_back(t);
  }
  syntax.statements = StatementParser(source, syntax).run();
  return syntax;
}

PyExprTree parse_expression(std::string_view source, const PythonSyntax& syntax, PyRange range) {
  return ExpressionParser(source, syntax, range).run();
}

std::vector<PyParameter> parse_parameters(std::string_view source, const PythonSyntax& syntax, PyRange range) {
  const TokenView view(source, syntax.code);
  std::vector<PyParameter> out;
  for (const auto& part : view.split_top(range, ",")) {
    if (part.empty()) continue;
    PyParameter p;
    std::uint32_t k = part.begin;
    if (view.is(k, "*") || view.is(k, "**")) p.star = view.text(k++);
    if (k < part.end && view.kind(k) == TokenKind::Identifier) p.name = view.text(k++);
    if (p.name.empty()) continue;  // a bare `*` or `/` separator
    p.span = view.span(part);
    const std::uint32_t eq = view.find_top({k, part.end}, [](std::uint32_t, std::string_view t) { return t == "="; });
    if (view.is(k, ":")) p.annotation = {k + 1, eq};
    if (eq < part.end) p.default_value = {eq + 1, part.end};
    out.push_back(p);
  }
  return out;
}

}  // namespace hiera::engine::analysis
