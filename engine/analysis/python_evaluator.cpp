#include "engine/analysis/python_evaluator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "engine/common/dtype_bytes.h"

namespace hiera::engine::analysis {

namespace {

using Kind = PyValue::Kind;

// What the hint rules read of a call's arguments: keyword names and numbers.
std::vector<OpArgument> op_arguments(const OpCall& call) {
  std::vector<OpArgument> out;
  for (const auto& a : call.args) out.push_back({"", a.as_double()});
  for (const auto& [key, value] : call.kwargs) out.push_back({key, value.as_double()});
  return out;
}

constexpr int kMaxEvalDepth = 200;

constexpr std::string_view kFunctionModules[] = {"torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.Tensor", "torch.fft"};
constexpr std::string_view kCreations[] = {"randn", "rand", "zeros", "ones", "empty", "full", "randint", "normal", "arange", "tensor",
                                           "eye", "randperm", "randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like"};

template <class Range>
bool contains(const Range& range, std::string_view s) {
  return std::find(std::begin(range), std::end(range), s) != std::end(range);
}

double numel(const Shape& shape) {
  double n = 1;
  for (const auto d : shape) n *= static_cast<double>(d);
  return n;
}

PyValue number_literal(std::string_view text) {
  std::string digits;
  for (const char c : text) {
    if (c != '_') digits += c;
  }
  if (!digits.empty() && (digits.back() == 'j' || digits.back() == 'J')) return PyValue::unknown();
  const bool hex = digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  const bool based = digits.size() > 1 && digits[0] == '0' && std::isalpha(static_cast<unsigned char>(digits[1]));
  if (!hex && digits.find_first_of(".eE") != std::string::npos) return PyValue::of_float(std::strtod(digits.c_str(), nullptr));
  int base = 10;
  std::string_view body = digits;
  if (based) {
    const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
    base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 10;
    body.remove_prefix(2);
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value, base);
  if (error != std::errc() || end != body.data() + body.size()) return PyValue::unknown();
  return PyValue::of_int(value);
}

PyValue string_literal(std::string_view text) {
  PyValue v;
  v.kind = Kind::String;
  std::size_t start = 0;
  while (start < text.size() && text[start] != '\'' && text[start] != '"') ++start;
  std::string_view body = text.substr(start);
  const std::size_t quotes = body.size() >= 6 && (body.substr(0, 3) == "\"\"\"" || body.substr(0, 3) == "'''") ? 3 : 1;
  if (body.size() >= 2 * quotes) body = body.substr(quotes, body.size() - 2 * quotes);
  v.text = std::string(body);
  return v;
}

// Python's integer floor division and modulo.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<PyValue> fold(std::string_view op, const PyValue& l, const PyValue& r) {
  if (l.kind == Kind::Sequence && r.kind == Kind::Sequence && op == "+") {
    PyValue out = l;
    out.items.insert(out.items.end(), r.items.begin(), r.items.end());
    return out;
  }
  if (l.kind == Kind::Sequence && op == "*" && r.as_int() && *r.as_int() >= 0 && *r.as_int() <= 64) {
    PyValue out = PyValue::sequence({});
    for (std::int64_t i = 0; i < *r.as_int(); ++i) out.items.insert(out.items.end(), l.items.begin(), l.items.end());
    return out;
  }
  const auto li = l.as_int(), ri = r.as_int();
  if (li && ri) {
    const std::int64_t a = *li, b = *ri;
    if (op == "+") return PyValue::of_int(a + b);
    if (op == "-") return PyValue::of_int(a - b);
    if (op == "*") return PyValue::of_int(a * b);
    if (op == "//" && b != 0) return PyValue::of_int(floor_div(a, b));
    if (op == "%" && b != 0) return PyValue::of_int(a - floor_div(a, b) * b);
    if (op == "/" && b != 0) return PyValue::of_float(static_cast<double>(a) / static_cast<double>(b));
    if (op == "**" && b >= 0 && b < 63) {
      std::int64_t p = 1;
      for (std::int64_t i = 0; i < b; ++i) p *= a;
      return PyValue::of_int(p);
    }
    if (op == "<<" && b >= 0 && b < 62) return PyValue::of_int(a << b);
    if (op == ">>" && b >= 0 && b < 62) return PyValue::of_int(a >> b);
    return std::nullopt;
  }
  const auto ld = l.as_double(), rd = r.as_double();
  if (ld && rd) {
    if (op == "+") return PyValue::of_float(*ld + *rd);
    if (op == "-") return PyValue::of_float(*ld - *rd);
    if (op == "*") return PyValue::of_float(*ld * *rd);
    if (op == "/" && *rd != 0) return PyValue::of_float(*ld / *rd);
    if (op == "**") return PyValue::of_float(std::pow(*ld, *rd));
  }
  return std::nullopt;
}

// The length of a Python slice over `length` items, when its bounds are known.
std::optional<std::int64_t> slice_length(const PyValue& slice, std::int64_t length) {
  auto bound = [](const PyValue& v) -> std::optional<std::optional<std::int64_t>> {
    if (v.kind == Kind::None) return std::optional<std::int64_t>{};
    if (const auto i = v.as_int()) return std::optional<std::int64_t>{*i};
    return std::nullopt;
  };
  const auto start = bound(slice.items[0]), stop = bound(slice.items[1]), step = bound(slice.items[2]);
  if (!start || !stop || !step) return std::nullopt;
  const std::int64_t s = step->value_or(1);
  if (s <= 0) return std::nullopt;
  auto clamp = [&](std::int64_t v) {
    if (v < 0) v += length;
    return std::clamp<std::int64_t>(v, 0, length);
  };
  const std::int64_t a = start->has_value() ? clamp(**start) : 0;
  const std::int64_t b = stop->has_value() ? clamp(**stop) : length;
  return b > a ? (b - a + s - 1) / s : 0;
}

}  // namespace

PythonEvaluator::PythonEvaluator(std::string_view source, const PythonSyntax& syntax, const ImportAliases& aliases,
                                 const std::map<std::string, PyValue, std::less<>>& globals,
                                 const std::vector<std::string>& module_classes)
    : source_(source), syntax_(syntax), aliases_(aliases), globals_(globals), module_classes_(module_classes) {}

PyValue PythonEvaluator::evaluate(PyRange range) {
  const PyExprTree tree = parse_expression(source_, syntax_, range);
  return eval(tree, tree.root);
}

PyValue PythonEvaluator::evaluate(const PyExprTree& tree, int node) { return eval(tree, node); }

void PythonEvaluator::run(const std::vector<PyStmt>& body) {
  for (const auto& s : body) {
    if (stopped_) return;
    statement_(s);
  }
}

void PythonEvaluator::statement_(const PyStmt& s) {
  current_statement_ = &s;
  switch (s.kind) {
    case PyStmtKind::Expr: {
      const PyExprTree tree = parse_expression(source_, syntax_, s.value);
      current_tree_ = &tree;
      eval(tree, tree.root);
      current_tree_ = nullptr;
      break;
    }
    case PyStmtKind::Assign: {
      const PyExprTree value_tree = parse_expression(source_, syntax_, s.value);
      const PyValue value = eval(value_tree, value_tree.root);
      for (const auto& target : s.targets) {
        const PyExprTree target_tree = parse_expression(source_, syntax_, target);
        assign(target_tree, target_tree.root, value, value_tree, value_tree.root, s.span);
      }
      break;
    }
    case PyStmtKind::AugAssign: {
      if (s.targets.empty()) break;
      const PyExprTree target_tree = parse_expression(source_, syntax_, s.targets[0]);
      const PyExprTree value_tree = parse_expression(source_, syntax_, s.value);
      const PyValue current = eval(target_tree, target_tree.root);
      const PyValue rhs = eval(value_tree, value_tree.root);
      const std::string_view op = s.op.substr(0, s.op.size() - 1);
      PyValue result = PyValue::unknown();
      if (current.is_tensor() || rhs.is_tensor()) {
        if (const auto info = operator_op(op)) {
          OpCall args;
          args.args = {current, rhs};
          result = record(*info, std::string(s.op), s.span, args, apply_op(*info, args));
        }
      } else if (const auto folded = fold(op, current, rhs)) {
        result = *folded;
      }
      assign(target_tree, target_tree.root, result, value_tree, -1, s.span);
      break;
    }
    case PyStmtKind::Return: {
      const PyValue value = s.value.empty() ? PyValue::of_kind(Kind::None) : evaluate(s.value);
      if (!returned_) returned_ = value;
      if (branch_depth_ == 0) stopped_ = true;
      break;
    }
    case PyStmtKind::For: {
      const PyValue iterable = s.value.empty() ? PyValue::unknown() : evaluate(s.value);
      const std::size_t ops_before = trace_ ? trace_->ops.size() : 0;
      std::size_t loop_index = 0;
      if (trace_) {
        trace_->loops.push_back({s.header, iterable.is_tensor() || iterable.from_tensor, false});
        loop_index = trace_->loops.size() - 1;
      }
      ++loop_depth_;
      ++branch_depth_;
      if (!s.targets.empty()) {
        const PyExprTree target_tree = parse_expression(source_, syntax_, s.targets[0]);
        assign(target_tree, target_tree.root, element_of(iterable), target_tree, -1, s.span);
      }
      run(s.body);
      --branch_depth_;
      --loop_depth_;
      if (trace_) {
        for (std::size_t i = ops_before; i < trace_->ops.size(); ++i) {
          if (const auto info = find_op(trace_->ops[i].op); info && info->category == OpCategory::Matmul) trace_->loops[loop_index].body_has_matmul = true;
          if (trace_->ops[i].op == "linear") trace_->loops[loop_index].body_has_matmul = true;
        }
      }
      break;
    }
    case PyStmtKind::While:
      if (!s.value.empty()) evaluate(s.value);
      ++loop_depth_;
      ++branch_depth_;
      run(s.body);
      --branch_depth_;
      --loop_depth_;
      break;
    case PyStmtKind::If:
    case PyStmtKind::Elif:
    case PyStmtKind::Else:
    case PyStmtKind::With:
    case PyStmtKind::Try:
    case PyStmtKind::Except:
    case PyStmtKind::Finally:
    case PyStmtKind::Match:
    case PyStmtKind::Case:
      // A case's pattern binds names rather than computing a value: not evaluated.
      if (!s.value.empty() && s.kind != PyStmtKind::Except && s.kind != PyStmtKind::Case) evaluate(s.value);
      ++branch_depth_;
      run(s.body);
      --branch_depth_;
      break;
    default:
      break;  // nested def/class, import, pass, raise, ...
  }
  current_statement_ = nullptr;
}

PyValue PythonEvaluator::element_of(const PyValue& iterable) const {
  if (iterable.kind == Kind::Sequence && !iterable.items.empty()) return iterable.items[0];
  if (iterable.kind == Kind::Sequence && iterable.of_tensors) return PyValue::tensor(std::nullopt, "float32", iterable.producer);
  if (iterable.is_tensor()) {
    // A row of the tensor: its shape without the first dimension, when known.
    std::optional<Shape> row;
    if (iterable.shape && !iterable.shape->empty()) row = Shape(iterable.shape->begin() + 1, iterable.shape->end());
    return PyValue::tensor(row, iterable.dtype, iterable.producer);
  }
  if (iterable.kind == Kind::Layer && iterable.layer && !iterable.layer->children.empty()) {
    PyValue child;
    child.kind = Kind::Layer;
    child.layer = std::make_shared<const LayerSpec>(iterable.layer->children[0]);
    return child;
  }
  return PyValue::unknown();
}

void PythonEvaluator::assign(const PyExprTree& tree, int target, const PyValue& value, const PyExprTree& value_tree,
                             int value_node, Span statement_span) {
  if (target < 0) return;
  const PyExpr& t = tree.at(target);
  switch (t.kind) {
    case PyExprKind::Name:
      locals_[std::string(t.text)] = value;
      break;
    case PyExprKind::Tuple:
    case PyExprKind::List:
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        PyValue item = value.kind == Kind::Sequence && i < value.items.size() ? value.items[i] : PyValue::unknown();
        if (value.kind == Kind::Sequence && value.items.empty() && value.of_tensors) {
          item = PyValue::tensor(std::nullopt, "float32", value.producer);  // q, k, v = x.chunk(n): pieces of x
        }
        assign(tree, t.children[i], item, value_tree, -1, statement_span);
      }
      break;
    case PyExprKind::Attribute: {
      const PyExpr& owner = tree.at(t.children[0]);
      if (!building_ || !self_ || owner.kind != PyExprKind::Name || owner.text != "self") break;
      const std::string name(t.text);
      self_->attributes[name] = value;
      // A layer or a parameter is a finding; a plain attribute is not.
      if (value_node < 0 || value_tree.at(value_node).kind != PyExprKind::Call) break;
      const PyExpr& call_node = value_tree.at(value_node);
      const PyExpr& callee = value_tree.at(call_node.children[0]);
      const std::string path = dotted_path(value_tree, call_node.children[0]);
      std::string type;
      if (value.kind == Kind::Layer && value.layer) type = value.layer->type;
      else if (path == "torch.nn.Parameter" || path == "torch.nn.parameter.Parameter") type = "Parameter";
      if (type.empty()) break;
      const std::size_t open = callee.span.end;
      std::string_view arguments = source_.substr(open, call_node.span.end - open);
      if (!arguments.empty() && arguments.front() == '(') arguments.remove_prefix(1);
      if (!arguments.empty() && arguments.back() == ')') arguments.remove_suffix(1);
      self_->layers.push_back({name, type, std::string(arguments), statement_span});
      break;
    }
    default:
      break;  // subscripts, starred targets: nothing tracked
  }
}

std::string PythonEvaluator::dotted_path(const PyExprTree& tree, int node) const {
  if (node < 0) return "";
  const PyExpr& e = tree.at(node);
  if (e.kind == PyExprKind::Name) {
    if (e.text == "self") return "self";
    if (locals_.count(e.text)) return "";
    if (const auto a = aliases_.find(e.text); a != aliases_.end()) return a->second;
    if (globals_.count(e.text)) return "";
    return std::string(e.text);
  }
  if (e.kind == PyExprKind::Attribute) {
    const std::string owner = dotted_path(tree, e.children[0]);
    if (owner.empty() || e.text.empty()) return "";
    return owner + "." + std::string(e.text);
  }
  return "";
}

PyValue PythonEvaluator::eval(const PyExprTree& tree, int node) {
  // A chain like a + a + ... is as deep as it is long: past this, its value is unknown.
  if (node < 0 || eval_depth_ > kMaxEvalDepth) return PyValue::unknown();
  ++eval_depth_;
  PyValue value = eval_node(tree, node);
  --eval_depth_;
  return value;
}

PyValue PythonEvaluator::eval_node(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  switch (e.kind) {
    case PyExprKind::Name: {
      if (const auto l = locals_.find(e.text); l != locals_.end()) return l->second;
      if (const auto g = globals_.find(e.text); g != globals_.end()) return g->second;
      return PyValue::unknown();
    }
    case PyExprKind::Number: return number_literal(e.text);
    case PyExprKind::String: return string_literal(text(e.span));
    case PyExprKind::Constant:
      if (e.text == "True" || e.text == "False") {
        PyValue b = PyValue::of_int(e.text == "True" ? 1 : 0);
        b.kind = Kind::Bool;
        return b;
      }
      if (e.text == "None") return PyValue::of_kind(Kind::None);
      if (e.text == "...") return PyValue::of_kind(Kind::Ellipsis);
      return PyValue::unknown();
    case PyExprKind::Attribute: return attribute(tree, node);
    case PyExprKind::Call: return call(tree, node);
    case PyExprKind::Subscript: return subscript(tree, node);
    case PyExprKind::BinOp: return binary(tree, node);
    case PyExprKind::Compare: return binary(tree, node);
    case PyExprKind::UnaryOp: {
      const PyValue operand = eval(tree, e.children[0]);
      if (e.text == "-" && operand.is_tensor()) {
        OpCall args;
        args.args = {operand};
        const auto info = operator_op("neg");
        return record(*info, "-", e.span, args, apply_op(*info, args));
      }
      if (e.text == "-" && operand.as_int()) return PyValue::of_int(-*operand.as_int());
      if (e.text == "-" && operand.kind == Kind::Float) return PyValue::of_float(-operand.real);
      if (e.text == "+") return operand;
      return PyValue::unknown();
    }
    case PyExprKind::BoolOp:
      for (const int c : e.children) eval(tree, c);
      return PyValue::unknown();
    case PyExprKind::IfExp: {
      const PyValue body = eval(tree, e.children[0]);
      eval(tree, e.children[1]);
      eval(tree, e.children[2]);
      return body;
    }
    case PyExprKind::Tuple:
    case PyExprKind::List:
    case PyExprKind::Set: {
      PyValue out = PyValue::sequence({});
      for (const int c : e.children) {
        PyValue item = eval(tree, c);
        if (tree.at(c).kind == PyExprKind::Starred && item.kind == Kind::Sequence) {
          out.items.insert(out.items.end(), item.items.begin(), item.items.end());
        } else {
          out.from_tensor = out.from_tensor || item.from_tensor;
          out.items.push_back(std::move(item));
        }
      }
      return out;
    }
    case PyExprKind::Dict:
      for (const int c : e.children) eval(tree, c);
      return PyValue::unknown();
    case PyExprKind::Comprehension: return comprehension(tree, node);
    case PyExprKind::Starred: return eval(tree, e.children[0]);
    case PyExprKind::Slice: {
      PyValue s = PyValue::of_kind(Kind::Slice);
      for (const int c : e.children) s.items.push_back(c < 0 ? PyValue::of_kind(Kind::None) : eval(tree, c));
      return s;
    }
    case PyExprKind::Lambda:
    case PyExprKind::Error:
      return PyValue::unknown();
  }
  return PyValue::unknown();
}

PyValue PythonEvaluator::attribute(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  const PyExpr& owner = tree.at(e.children[0]);
  if (owner.kind == PyExprKind::Name && owner.text == "self") {
    if (self_) {
      if (const auto a = self_->attributes.find(e.text); a != self_->attributes.end()) return a->second;
    }
    return PyValue::unknown();
  }
  const std::string path = dotted_path(tree, node);
  if (path.rfind("torch.", 0) == 0) {
    if (const auto dtype = dtype_name(path)) {
      PyValue d = PyValue::of_kind(Kind::Dtype);
      d.text = *dtype;
      return d;
    }
    return PyValue::unknown();
  }
  const PyValue value = eval(tree, e.children[0]);
  if (!value.is_tensor()) return PyValue::unknown();
  if (e.text == "shape") {
    if (!value.shape) {
      PyValue u;
      u.from_tensor = true;
      return u;
    }
    PyValue s = PyValue::sequence({});
    for (const auto d : *value.shape) s.items.push_back(PyValue::of_int(d));
    for (auto& item : s.items) item.from_tensor = true;
    s.from_tensor = true;
    return s;
  }
  if (e.text == "T" || e.text == "mT") {
    PyValue t = value;
    if (t.shape && t.shape->size() >= 2) std::swap((*t.shape)[t.shape->size() - 1], (*t.shape)[t.shape->size() - 2]);
    return t;
  }
  if (e.text == "dtype") {
    PyValue d = PyValue::of_kind(Kind::Dtype);
    d.text = value.dtype;
    return d;
  }
  if (e.text == "data") return value;
  return PyValue::unknown();
}

OpCall PythonEvaluator::arguments(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  OpCall args;
  for (std::size_t i = 1; i < e.children.size(); ++i) {
    const std::string_view role = i - 1 < e.roles.size() ? e.roles[i - 1] : std::string_view{};
    PyValue value = eval(tree, e.children[i]);
    if (role.empty()) args.args.push_back(std::move(value));
    else if (role == "*" && value.kind == Kind::Sequence) args.args.insert(args.args.end(), value.items.begin(), value.items.end());
    else if (role != "*" && role != "**") args.kwargs.emplace_back(std::string(role), std::move(value));
  }
  return args;
}

// self.register_buffer("name", value) (or register_parameter) in __init__: an
// attribute forward reads as self.name, and a finding like `self.name = ...`.
void PythonEvaluator::register_tensor(const OpCall& args, std::string type, const PyExprTree& tree, int node) {
  const PyValue* name = args.arg(0, "name");
  const PyValue* value = args.arg(1, type == "buffer" ? "tensor" : "param");
  if (!name || name->kind != Kind::String || name->text.empty()) return;
  self_->attributes[name->text] = value ? *value : PyValue::unknown();
  const PyExpr& call_node = tree.at(node);
  std::string_view arguments = source_.substr(tree.at(call_node.children[0]).span.end,
                                              call_node.span.end - tree.at(call_node.children[0]).span.end);
  if (!arguments.empty() && arguments.front() == '(') arguments.remove_prefix(1);
  if (!arguments.empty() && arguments.back() == ')') arguments.remove_suffix(1);
  const Span at = current_statement_ ? current_statement_->span : call_node.span;
  self_->layers.push_back({name->text, std::move(type), std::string(arguments), at});
}

PyValue PythonEvaluator::call(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  const int callee = e.children[0];
  const PyExpr& c = tree.at(callee);
  const std::string path = dotted_path(tree, callee);
  if (c.kind == PyExprKind::Attribute && path.empty()) {
    // A method: the receiver runs before the arguments.
    const PyValue receiver = eval(tree, c.children[0]);
    OpCall args = arguments(tree, node);
    if (receiver.is_tensor()) return tensor_method(c.text, receiver, std::move(args), tree, node);
    return PyValue::unknown();
  }
  if (path.rfind("self.", 0) == 0) {
    OpCall args = arguments(tree, node);
    const std::string attribute = path.substr(5);
    if ((attribute == "register_buffer" || attribute == "register_parameter") && building_ && self_) {
      register_tensor(args, attribute == "register_buffer" ? "buffer" : "Parameter", tree, node);
      return PyValue::of_kind(Kind::None);
    }
    if (!self_ || attribute.find('.') != std::string::npos) return PyValue::unknown();
    const auto a = self_->attributes.find(attribute);
    if (a == self_->attributes.end() || a->second.kind != Kind::Layer) return PyValue::unknown();
    return layer_call(a->second, args, path, e.span);
  }
  if (path.empty()) {
    // self.layers[i](x), f(x)(y): call what the callee evaluates to.
    const PyValue target = eval(tree, callee);
    OpCall args = arguments(tree, node);
    if (target.kind == Kind::Layer) return layer_call(target, args, std::string(text(c.span)), e.span);
    return PyValue::unknown();
  }
  OpCall args = arguments(tree, node);
  const auto dot = path.rfind('.');
  const std::string prefix = dot == std::string::npos ? "" : path.substr(0, dot);
  const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  if (path == "torch.nn.Parameter" || path == "torch.nn.parameter.Parameter") {
    return args.args.empty() ? PyValue::unknown() : args.args[0];
  }
  if (path == "torch.cuda.synchronize") {
    sync("synchronize", tree, node);
    return PyValue::of_kind(Kind::None);
  }
  if ((prefix == "torch.nn" || prefix == "torch.nn.modules") && !name.empty() && std::isupper(static_cast<unsigned char>(name[0]))) {
    auto spec = std::make_shared<LayerSpec>();
    spec->type = name;
    spec->constructor = args;
    const bool list = name == "ModuleList" || name == "Sequential";
    if (list) {
      const std::vector<PyValue>& items = name == "ModuleList" && !args.args.empty() && args.args[0].kind == Kind::Sequence
                                              ? args.args[0].items : args.args;
      for (const auto& item : items) {
        if (item.kind == Kind::Layer && item.layer) spec->children.push_back(*item.layer);
      }
    }
    PyValue layer = PyValue::of_kind(Kind::Layer);
    layer.layer = std::move(spec);
    return layer;
  }
  if (dot == std::string::npos && std::find(module_classes_.begin(), module_classes_.end(), name) != module_classes_.end()) {
    auto spec = std::make_shared<LayerSpec>();
    spec->type = name;
    spec->constructor = args;
    PyValue layer = PyValue::of_kind(Kind::Layer);
    layer.layer = std::move(spec);
    return layer;
  }
  if (contains(kFunctionModules, prefix)) {
    if (contains(kCreations, name)) return creation(name, args, std::string(text(c.span)), e.span);
    if (const auto info = find_op(name)) return record(*info, std::string(text(c.span)), e.span, args, apply_op(*info, args));
    // A torch function without a rule: still an op of forward, its result a tensor of unknown shape.
    OpOutcome outcome{PyValue::tensor(std::nullopt, "float32"), std::nullopt};
    return record(OpInfo{name, OpCategory::Other}, std::string(text(c.span)), e.span, args, outcome);
  }
  if (dot == std::string::npos) return builtin(name, args, tree, node);
  return PyValue::unknown();
}

PyValue PythonEvaluator::builtin(std::string_view name, const OpCall& args, const PyExprTree& tree, int node) {
  const auto any_tensor = [&] {
    return std::any_of(args.args.begin(), args.args.end(), [](const PyValue& v) { return v.is_tensor(); });
  };
  const auto any_from_tensor = [&] {
    return std::any_of(args.args.begin(), args.args.end(), [](const PyValue& v) { return v.is_tensor() || v.from_tensor; });
  };
  if (name == "print") {
    if (any_tensor()) sync("print", tree, node);
    return PyValue::of_kind(Kind::None);
  }
  if (name == "len" && args.args.size() == 1) {
    const PyValue& v = args.args[0];
    PyValue out;
    if (v.is_tensor() && v.shape && !v.shape->empty()) out = PyValue::of_int((*v.shape)[0]);
    else if (v.kind == Kind::Sequence && !v.from_tensor) out = PyValue::of_int(static_cast<std::int64_t>(v.items.size()));
    out.from_tensor = v.is_tensor() || v.from_tensor;
    return out;
  }
  if (name == "range" || name == "enumerate" || name == "zip" || name == "list" || name == "tuple" || name == "reversed" || name == "sorted") {
    if ((name == "list" || name == "tuple") && args.args.size() == 1 && args.args[0].kind == Kind::Sequence) return args.args[0];
    PyValue out = PyValue::sequence({});
    out.from_tensor = any_from_tensor();
    return out;
  }
  if ((name == "int" || name == "float" || name == "bool") && args.args.size() == 1) {
    const PyValue& v = args.args[0];
    if (v.is_tensor()) {
      sync(std::string(name), tree, node);
      return PyValue::unknown();
    }
    if (name == "int" && v.as_double()) {
      PyValue out = PyValue::of_int(static_cast<std::int64_t>(*v.as_double()));
      out.from_tensor = v.from_tensor;
      return out;
    }
    if (name == "float" && v.as_double()) return PyValue::of_float(*v.as_double());
    return PyValue::unknown();
  }
  if ((name == "min" || name == "max") && args.args.size() >= 2) {
    std::optional<std::int64_t> best;
    for (const auto& a : args.args) {
      const auto v = a.as_int();
      if (!v) return PyValue::unknown();
      best = !best ? *v : name == "min" ? std::min(*best, *v) : std::max(*best, *v);
    }
    return PyValue::of_int(*best);
  }
  return PyValue::unknown();
}

PyValue PythonEvaluator::creation(std::string_view name, const OpCall& args, std::string call_text, Span span) {
  std::string dtype = name == "randint" || name == "randperm" ? "int64" : "float32";
  if (const PyValue* d = args.keyword("dtype"); d && d->kind == Kind::Dtype) dtype = d->text;
  std::optional<Shape> shape;
  const bool like = name.size() > 5 && name.substr(name.size() - 5) == "_like";
  if (like) {
    if (!args.args.empty() && args.args[0].is_tensor()) {
      shape = args.args[0].shape;
      if (!args.keyword("dtype")) dtype = args.args[0].dtype;
    }
  } else if (name == "full") {
    if (const PyValue* s = args.arg(0, "size")) shape = s->as_shape();
  } else if (name == "randint") {
    const PyValue* s = args.keyword("size");
    if (!s && args.args.size() >= 2) s = &args.args.back();
    if (s) shape = s->as_shape();
  } else if (name == "normal") {
    if (const PyValue* s = args.arg(2, "size")) shape = s->as_shape();
  } else if (name == "arange") {
    // arange(end) or arange(start, end[, step]): its length, where the numbers are known.
    std::vector<std::optional<double>> numbers;
    for (const PyValue& v : args.args) numbers.push_back(v.as_double());
    if (numbers.size() == 1 && numbers[0]) {
      shape = Shape{static_cast<std::int64_t>(std::ceil(numbers[0].value()))};
    } else if (numbers.size() >= 2 && numbers[0] && numbers[1]) {
      const double step = numbers.size() > 2 ? numbers[2].value_or(0.0) : 1.0;
      if (step != 0)
        shape = Shape{std::max<std::int64_t>(
            0, static_cast<std::int64_t>(std::ceil((numbers[1].value() - numbers[0].value()) / step)))};
    }
    const bool reals = std::any_of(args.args.begin(), args.args.end(), [](const PyValue& v) { return v.kind == Kind::Float; });
    if (!args.keyword("dtype")) dtype = reals ? "float32" : "int64";
  } else if (name == "tensor") {
    if (!args.args.empty()) {
      const PyValue* v = &args.args[0];
      Shape s;
      bool reals = false;
      while (v->kind == Kind::Sequence) {
        s.push_back(static_cast<std::int64_t>(v->items.size()));
        if (v->items.empty()) break;
        v = &v->items[0];
      }
      reals = v->kind == Kind::Float;
      shape = s;
      if (!args.keyword("dtype")) dtype = reals ? "float32" : "int64";
    }
  } else if (name == "eye") {
    const auto n = args.args.size() > 0 ? args.args[0].as_int() : std::nullopt;
    const auto m = args.args.size() > 1 ? args.args[1].as_int() : n;
    if (n && m) shape = Shape{*n, *m};
  } else if (name == "randperm") {
    if (const auto n = args.args.size() > 0 ? args.args[0].as_int() : std::nullopt) shape = Shape{*n};
  } else {
    // randn(2, 3), randn((2, 3)), randn(size=(2, 3))
    if (const PyValue* size = args.keyword("size")) shape = size->as_shape();
    else if (args.args.size() == 1) shape = args.args[0].as_shape();
    else if (!args.args.empty()) {
      Shape dims;
      for (const auto& a : args.args) {
        const auto v = a.as_int();
        if (!v) break;
        dims.push_back(*v);
      }
      if (dims.size() == args.args.size()) shape = dims;
    }
  }
  OpOutcome outcome{PyValue::tensor(shape, dtype), std::nullopt};
  if (shape) {
    Work work;
    work.bytes = numel(*shape) * dtype_bytes(dtype);
    work.dtype = dtype;
    outcome.work = work;
  }
  return record(OpInfo{name, OpCategory::Creation}, std::move(call_text), span, args, outcome);
}

PyValue PythonEvaluator::tensor_method(std::string_view name, const PyValue& self, OpCall args, const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  const std::string call_text = "." + std::string(name);
  if (is_sync_method(name)) {
    sync(std::string(name), tree, node);
    return PyValue::unknown();
  }
  if (name == "size" || name == "dim" || name == "ndimension" || name == "numel") {
    PyValue out;
    if (self.shape) {
      if (name == "dim" || name == "ndimension") out = PyValue::of_int(static_cast<std::int64_t>(self.shape->size()));
      else if (name == "numel") out = PyValue::of_int(static_cast<std::int64_t>(numel(*self.shape)));
      else if (!args.args.empty() && args.args[0].as_int()) {
        std::int64_t d = *args.args[0].as_int();
        if (d < 0) d += static_cast<std::int64_t>(self.shape->size());
        if (d >= 0 && d < static_cast<std::int64_t>(self.shape->size())) out = PyValue::of_int((*self.shape)[static_cast<std::size_t>(d)]);
      } else if (args.args.empty()) {
        out = PyValue::sequence({});
        for (const auto d : *self.shape) out.items.push_back(PyValue::of_int(d));
      }
    }
    out.from_tensor = true;
    for (auto& item : out.items) item.from_tensor = true;
    return out;
  }
  if (name == "cuda" || name == "detach" || name == "requires_grad_" || name == "to" || name == "type") {
    // A move to a device keeps the value; a dtype argument makes a cast.
    const PyValue* dtype = nullptr;
    for (const auto& a : args.args) {
      if (a.kind == Kind::Dtype) dtype = &a;
    }
    if (const PyValue* d = args.keyword("dtype"); d && d->kind == Kind::Dtype) dtype = d;
    if (!dtype || dtype->text == self.dtype) return self;
    OpCall cast;
    cast.args = {self};
    OpOutcome outcome{PyValue::tensor(self.shape, dtype->text), std::nullopt};
    if (self.shape) {
      Work work;
      work.bytes = numel(*self.shape) * (dtype_bytes(self.dtype) + dtype_bytes(dtype->text));
      work.dtype = dtype->text;
      outcome.work = work;
    }
    return record(OpInfo{"to", OpCategory::Copy}, call_text, e.span, cast, outcome);
  }
  if (name == "unbind" || name == "split" || name == "chunk") return pieces(name, self, args);
  static constexpr std::string_view kScalarMethods[] = {"stride", "data_ptr", "is_contiguous", "element_size", "nelement",
                                                        "get_device", "storage_offset", "equal", "allclose", "is_floating_point"};
  if (contains(kScalarMethods, name)) return PyValue::unknown();
  args.args.insert(args.args.begin(), self);
  if (const auto info = find_op(name)) return record(*info, call_text, e.span, args, apply_op(*info, args));
  // A method without a rule: an op all the same, its result a tensor of unknown shape.
  OpOutcome outcome{PyValue::tensor(std::nullopt, self.dtype), std::nullopt};
  return record(OpInfo{name, OpCategory::Other}, call_text, e.span, args, outcome);
}

// x.chunk(n, dim) / x.split(size, dim) / x.unbind(dim): views of x, as many
// as can be counted (a loop over them is a loop over the tensor).
PyValue PythonEvaluator::pieces(std::string_view name, const PyValue& self, const OpCall& args) const {
  PyValue out = PyValue::sequence({});
  out.from_tensor = true;
  out.of_tensors = true;
  out.producer = self.producer;
  const bool unbind = name == "unbind";
  const PyValue* dim_value = args.arg(unbind ? 0 : 1, "dim");
  std::int64_t dim = dim_value && dim_value->as_int() ? *dim_value->as_int() : 0;
  // The axis and its length, when the shape is known (length -1 otherwise).
  std::size_t axis = 0;
  std::int64_t length = -1;
  if (self.shape) {
    const auto rank = static_cast<std::int64_t>(self.shape->size());
    if (dim < 0) dim += rank;
    if (dim >= 0 && dim < rank) {
      axis = static_cast<std::size_t>(dim);
      length = (*self.shape)[axis];
    }
  }
  std::int64_t count = 0, size = 0;
  if (name == "chunk") {
    const PyValue* n = args.arg(0, "chunks");
    if (!n || !n->as_int() || *n->as_int() <= 0) return out;
    count = *n->as_int();
    if (length >= 0) size = (length + count - 1) / count;
  } else if (name == "split") {
    const PyValue* n = args.arg(0, "split_size_or_sections");
    if (!n || !n->as_int() || *n->as_int() <= 0 || length < 0) return out;
    size = *n->as_int();
    count = (length + size - 1) / size;
  } else {
    if (length < 0) return out;
    count = length;
  }
  if (count > 64) return out;  // a loop over them is what matters, not each
  for (std::int64_t i = 0; i < count; ++i) {
    std::optional<Shape> shape;
    if (length >= 0) {
      shape = *self.shape;
      if (unbind) shape->erase(shape->begin() + static_cast<std::ptrdiff_t>(axis));
      else (*shape)[axis] = std::min(size, length - i * size);
    }
    out.items.push_back(PyValue::tensor(shape, self.dtype, self.producer));
  }
  return out;
}

PyValue PythonEvaluator::layer_call(const PyValue& layer, const OpCall& args, std::string call_text, Span span) {
  if (!layer.layer) return PyValue::unknown();
  const LayerSpec& spec = *layer.layer;
  if ((spec.type == "Sequential" || spec.type == "ModuleList") && !spec.children.empty()) {
    OpCall current = args;
    PyValue result = PyValue::unknown();
    for (const auto& child : spec.children) {
      PyValue child_value = PyValue::of_kind(Kind::Layer);
      child_value.layer = std::make_shared<const LayerSpec>(child);
      result = layer_call(child_value, current, call_text, span);
      current.args = {result};
      current.kwargs.clear();
    }
    return result;
  }
  if (const auto info = layer_op(spec.type)) {
    PyValue result = record(*info, std::move(call_text), span, args, apply_layer(spec, args));
    if (trace_) trace_->ops.back().arguments = op_arguments(spec.constructor);
    return result;
  }
  // A module class of the file, or a layer without a rule.
  OpOutcome outcome{PyValue::tensor(std::nullopt, args.args.empty() || !args.args[0].is_tensor() ? "float32" : args.args[0].dtype), std::nullopt};
  return record(OpInfo{"module", OpCategory::Other}, std::move(call_text), span, args, outcome);
}

PyValue PythonEvaluator::record(const OpInfo& op, std::string call_text, Span span, const OpCall& args, OpOutcome outcome) {
  PyValue result = std::move(outcome.result);
  if (!trace_) return result;
  ForwardOp f;
  f.op = std::string(op.name);
  f.call = std::move(call_text);
  f.span = span;
  f.in_loop = loop_depth_ > 0;
  auto add_input = [&](const PyValue& v, auto&& self_ref) -> void {
    if (v.is_tensor() && v.producer >= 0 && std::find(f.inputs.begin(), f.inputs.end(), v.producer) == f.inputs.end()) {
      f.inputs.push_back(v.producer);
    }
    if (v.kind == Kind::Sequence) {
      for (const auto& item : v.items) self_ref(item, self_ref);
    }
  };
  for (const auto& a : args.args) add_input(a, add_input);
  for (const auto& [key, value] : args.kwargs) add_input(value, add_input);
  if (result.is_tensor()) {
    f.shape = result.shape;
    f.dtype = result.dtype;
  } else if (result.kind == Kind::Sequence && !result.items.empty() && result.items[0].is_tensor()) {
    f.shape = result.items[0].shape;
    f.dtype = result.items[0].dtype;
  }
  if (outcome.work) {
    f.work = outcome.work;
    f.work->source = work_source_;
  }
  f.arguments = op_arguments(args);
  const int index = static_cast<int>(trace_->ops.size());
  trace_->ops.push_back(std::move(f));
  if (result.is_tensor()) result.producer = index;
  for (auto& item : result.items) {
    if (item.is_tensor()) item.producer = index;
  }
  return result;
}

void PythonEvaluator::sync(std::string what, const PyExprTree& tree, int node) {
  if (!trace_) return;
  SyncCall s;
  s.what = std::move(what);
  s.span = tree.at(node).span;
  if (current_statement_ && current_statement_->kind == PyStmtKind::Expr && current_tree_ == &tree && tree.root == node) {
    s.statement = current_statement_->span;
  }
  trace_->syncs.push_back(std::move(s));
}

PyValue PythonEvaluator::subscript(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  const PyValue value = eval(tree, e.children[0]);
  const PyExpr& index_node = tree.at(e.children[1]);
  std::vector<PyValue> index;
  if (index_node.kind == PyExprKind::Tuple) {
    for (const int c : index_node.children) index.push_back(eval(tree, c));
  } else {
    index.push_back(eval(tree, e.children[1]));
  }
  if (value.is_tensor()) {
    PyValue out = PyValue::tensor(std::nullopt, value.dtype, value.producer);
    if (!value.shape) return out;
    const Shape& s = *value.shape;
    const std::size_t used = static_cast<std::size_t>(std::count_if(index.begin(), index.end(), [](const PyValue& v) {
      return v.kind != Kind::None && v.kind != Kind::Ellipsis;
    }));
    if (used > s.size()) return out;
    Shape r;
    std::size_t dim = 0;
    for (const auto& item : index) {
      if (item.kind == Kind::None) {
        r.push_back(1);
      } else if (item.kind == Kind::Ellipsis) {
        for (std::size_t keep = s.size() - used; keep > 0 && dim < s.size(); --keep) r.push_back(s[dim++]);
      } else if (item.as_int()) {
        ++dim;
      } else if (item.kind == Kind::Slice) {
        const auto n = slice_length(item, s[dim++]);
        if (!n) return out;
        r.push_back(*n);
      } else {
        return out;  // a tensor index or a value we cannot see
      }
    }
    while (dim < s.size()) r.push_back(s[dim++]);
    out.shape = r;
    return out;
  }
  if (value.kind == Kind::Sequence && index.size() == 1) {
    if (const auto i = index[0].as_int(); i && !value.items.empty()) {
      const std::int64_t n = static_cast<std::int64_t>(value.items.size());
      const std::int64_t at = *i < 0 ? *i + n : *i;
      if (at >= 0 && at < n) return value.items[static_cast<std::size_t>(at)];
    }
    PyValue out;
    out.from_tensor = value.from_tensor;
    return out;
  }
  if (value.kind == Kind::Unknown) {
    PyValue out;
    out.from_tensor = value.from_tensor;  // x.shape[0] of a tensor whose shape is not known
    return out;
  }
  if (value.kind == Kind::Layer && value.layer && !value.layer->children.empty()) {
    std::size_t at = 0;
    if (const auto i = index[0].as_int(); i && *i >= 0 && static_cast<std::size_t>(*i) < value.layer->children.size()) at = static_cast<std::size_t>(*i);
    PyValue child = PyValue::of_kind(Kind::Layer);
    child.layer = std::make_shared<const LayerSpec>(value.layer->children[at]);
    return child;
  }
  return PyValue::unknown();
}

PyValue PythonEvaluator::binary(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  const PyValue l = eval(tree, e.children[0]);
  const PyValue r = eval(tree, e.children[1]);
  if (l.is_tensor() || r.is_tensor()) {
    const auto info = operator_op(e.text);
    if (!info) return PyValue::tensor(std::nullopt, l.is_tensor() ? l.dtype : r.dtype);
    OpCall args;
    args.args = {l, r};
    return record(*info, std::string(e.text), e.span, args, apply_op(*info, args));
  }
  if (e.kind == PyExprKind::Compare) return PyValue::unknown();
  PyValue out = fold(e.text, l, r).value_or(PyValue::unknown());
  out.from_tensor = l.from_tensor || r.from_tensor;
  return out;
}

PyValue PythonEvaluator::comprehension(const PyExprTree& tree, int node) {
  const PyExpr& e = tree.at(node);
  // Its targets are its own: restore the names they shadow.
  const auto saved = locals_;
  int loops = 0;
  std::vector<std::size_t> loop_indices;
  const std::size_t ops_before = trace_ ? trace_->ops.size() : 0;
  for (std::size_t i = 1; i < e.children.size(); ++i) {
    const std::string_view role = e.roles[i];
    if (role == "target" && i + 1 < e.children.size()) {
      const PyValue iterable = eval(tree, e.children[i + 1]);
      if (trace_) {
        trace_->loops.push_back({e.span, iterable.is_tensor() || iterable.from_tensor, false});
        loop_indices.push_back(trace_->loops.size() - 1);
      }
      ++loop_depth_;
      ++loops;
      assign(tree, e.children[i], element_of(iterable), tree, -1, e.span);
      ++i;  // the iterable is done
    } else if (role == "if" || role == "key") {
      eval(tree, e.children[i]);
    }
  }
  const PyValue element = eval(tree, e.children[0]);
  loop_depth_ -= loops;
  if (trace_) {
    for (std::size_t i = ops_before; i < trace_->ops.size(); ++i) {
      const auto info = find_op(trace_->ops[i].op);
      if ((info && info->category == OpCategory::Matmul) || trace_->ops[i].op == "linear") {
        for (const auto l : loop_indices) trace_->loops[l].body_has_matmul = true;
      }
    }
  }
  locals_ = saved;
  PyValue out = PyValue::sequence({});
  // [tensor for _ in range(n)] with n known (get_inputs' lists of inputs): n such tensors.
  if (const auto n = loops == 1 ? range_length(tree, e) : std::nullopt; n && element.is_tensor()) {
    out.items.assign(static_cast<std::size_t>(*n), element);
    out.of_tensors = true;
  }
  return out;
}

// The length of a comprehension's one `range(...)` iterable of constant
// arguments, when it is at most 64; nullopt for anything else.
std::optional<std::int64_t> PythonEvaluator::range_length(const PyExprTree& tree, const PyExpr& comprehension) {
  for (std::size_t i = 1; i + 1 < comprehension.children.size(); ++i) {
    if (comprehension.roles[i] != "target") continue;
    const PyExpr& iterable = tree.at(comprehension.children[i + 1]);
    if (iterable.kind != PyExprKind::Call || dotted_path(tree, iterable.children[0]) != "range") return std::nullopt;
    std::vector<std::int64_t> bounds;
    for (std::size_t k = 1; k < iterable.children.size(); ++k) {
      const auto v = eval(tree, iterable.children[k]).as_int();
      if (!v) return std::nullopt;
      bounds.push_back(*v);
    }
    if (bounds.empty() || bounds.size() > 3) return std::nullopt;
    const std::int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
    const std::int64_t step = bounds.size() > 2 ? bounds[2] : 1;
    if (step <= 0 || stop < start) return step > 0 ? std::optional<std::int64_t>(0) : std::nullopt;
    const std::int64_t n = (stop - start + step - 1) / step;
    return n <= 64 ? std::optional<std::int64_t>(n) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace hiera::engine::analysis
