#include "engine/analysis/torch_scanner.h"

#include <algorithm>

#include "engine/analysis/torch_ops.h"

namespace hiera::engine::analysis {

namespace {

// A value as text, for the context fingerprint.
void describe(const PyValue& v, std::string& out, int depth = 0) {
  out += static_cast<char>('a' + static_cast<int>(v.kind));
  switch (v.kind) {
    case PyValue::Kind::Int:
    case PyValue::Kind::Bool: out += std::to_string(v.integer); break;
    case PyValue::Kind::Float: out += std::to_string(v.real); break;
    case PyValue::Kind::String:
    case PyValue::Kind::Dtype: out += v.text; break;
    case PyValue::Kind::Tensor:
      out += v.dtype;
      if (v.shape) {
        for (const auto d : *v.shape) out += "," + std::to_string(d);
      }
      break;
    case PyValue::Kind::Sequence:
      if (depth < 4) {
        for (const auto& item : v.items) describe(item, out, depth + 1);
      }
      break;
    default: break;
  }
  out += ';';
}

PyValue number_value(double v) {
  return v == static_cast<double>(static_cast<std::int64_t>(v)) ? PyValue::of_int(static_cast<std::int64_t>(v)) : PyValue::of_float(v);
}

PyValue input_value(const ModelInput& input) {
  if (input.value) return number_value(*input.value);
  if (input.values) {
    PyValue sequence = PyValue::sequence({});
    for (const double v : *input.values) sequence.items.push_back(number_value(v));
    return sequence;
  }
  if (!input.dtype.empty() || input.shape) return PyValue::tensor(input.shape, input.dtype.empty() ? "float32" : input.dtype);
  if (!input.tensors.empty()) {
    PyValue sequence = PyValue::sequence({});
    for (const auto& t : input.tensors) sequence.items.push_back(input_value(t));
    sequence.of_tensors = true;
    return sequence;
  }
  return PyValue::unknown();
}

// The value a file assigns to a torch flag (`... <name> = True|False`), its
// last assignment winning; nullopt when it sets none.
std::optional<bool> flag_assignment(std::string_view source, std::string_view name) {
  std::optional<bool> value;
  for (std::size_t at = source.find(name); at != std::string_view::npos; at = source.find(name, at + 1)) {
    std::size_t k = at + name.size();
    while (k < source.size() && source[k] == ' ') ++k;
    if (k >= source.size() || source[k] != '=' || (k + 1 < source.size() && source[k + 1] == '=')) continue;
    for (++k; k < source.size() && source[k] == ' ';) ++k;
    if (source.substr(k, 4) == "True") value = true;
    else if (source.substr(k, 5) == "False") value = false;
  }
  return value;
}

}  // namespace

Float32Precision float32_precision(std::string_view source) {
  Float32Precision out;
  if (const auto conv = flag_assignment(source, "cudnn.allow_tf32")) out.tf32_convolutions = *conv;
  if (const auto matmul = flag_assignment(source, "matmul.allow_tf32")) out.tf32_matmuls = *matmul;
  // torch.set_float32_matmul_precision("high" or "medium") allows TF32 matmuls too.
  static constexpr std::string_view kCall = "set_float32_matmul_precision(";
  for (std::size_t at = source.find(kCall); at != std::string_view::npos; at = source.find(kCall, at + 1)) {
    const std::string_view argument = source.substr(at + kCall.size(), 10);
    if (argument.find("highest") != std::string_view::npos) out.tf32_matmuls = false;
    else if (argument.find("high") != std::string_view::npos || argument.find("medium") != std::string_view::npos) out.tf32_matmuls = true;
  }
  return out;
}

TorchFile::TorchFile(std::string_view source, const PythonSyntax& syntax, const SizeMap& sizes) : source_(source), syntax_(syntax) {
  aliases_ = {{"torch", "torch"}, {"nn", "torch.nn"}, {"F", "torch.nn.functional"}};
  for (const auto& s : syntax_.statements) {
    if (s.kind == PyStmtKind::Import) import(s);
  }
  find_module_classes();
  constants(sizes);
  find_kernelbench();
  precision_ = float32_precision(source);
  describe_context();
}

std::string_view TorchFile::text(std::uint32_t k) const {
  return k < syntax_.code.size() ? syntax_.code[k].text(source_) : std::string_view{};
}

PythonEvaluator TorchFile::evaluator() const { return PythonEvaluator(source_, syntax_, aliases_, globals_, module_names_); }

// import a.b as c / import a.b / from a.b import c as d, e
void TorchFile::import(const PyStmt& s) {
  const PyRange r = s.tokens;
  std::vector<std::vector<std::string_view>> items;  // each item's words: dotted parts, then "as" alias
  std::string from;
  std::uint32_t k = r.begin;
  if (text(k) == "from") {
    for (++k; k < r.end && text(k) != "import"; ++k) from += text(k);
  }
  ++k;  // import
  std::vector<std::string_view> item;
  for (; k < r.end; ++k) {
    const auto t = text(k);
    if (t == "(" || t == ")") continue;
    if (t == ",") {
      items.push_back(item);
      item.clear();
    } else {
      item.push_back(t);
    }
  }
  if (!item.empty()) items.push_back(item);
  for (const auto& words : items) {
    std::string path;
    std::string alias;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i] == "as" && i + 1 < words.size()) {
        alias = std::string(words[i + 1]);
        break;
      }
      path += words[i];
    }
    if (path.empty()) continue;
    if (!from.empty()) {
      aliases_[alias.empty() ? path : alias] = from + "." + path;
    } else if (!alias.empty()) {
      aliases_[alias] = path;
    } else {
      const std::string root = path.substr(0, path.find('.'));
      aliases_[root] = root;
    }
  }
}

std::string TorchFile::base_path(PyRange base) const {
  std::string dotted;
  for (std::uint32_t k = base.begin; k < base.end; ++k) dotted += text(k);
  const auto dot = dotted.find('.');
  const std::string root = dotted.substr(0, dot);
  if (const auto a = aliases_.find(root); a != aliases_.end()) return a->second + (dot == std::string::npos ? "" : dotted.substr(dot));
  return dotted;
}

void TorchFile::find_module_classes() {
  for (const auto& s : syntax_.statements) {
    if (s.kind != PyStmtKind::Class) continue;
    for (const auto& base : s.targets) {
      const std::string path = base_path(base);
      if (path == "torch.nn.Module" || path == "torch.nn.modules.module.Module" ||
          std::find(module_names_.begin(), module_names_.end(), path) != module_names_.end()) {
        classes_.push_back(&s);
        module_names_.emplace_back(text(s.name));
        break;
      }
    }
  }
}

// Module-level assignments in order (`a, b = 32, 32` included), each seeing
// the ones before it.
void TorchFile::constants(const SizeMap& sizes) {
  PythonEvaluator e = evaluator();
  for (const auto& s : syntax_.statements) {
    if (s.kind == PyStmtKind::Assign || s.kind == PyStmtKind::AugAssign) e.run(s);
  }
  globals_ = e.locals();
  for (const auto& [name, value] : sizes) globals_[name] = PyValue::of_int(value);
}

const PyStmt* TorchFile::top_level_def(std::string_view name) const {
  for (const auto& s : syntax_.statements) {
    if (s.kind == PyStmtKind::Def && text(s.name) == name) return &s;
  }
  return nullptr;
}

// The returned list's items, each with its expression, evaluated.
std::vector<ModelInput> TorchFile::returned_inputs(const PyStmt& def) const {
  PythonEvaluator e = evaluator();
  e.run(def.body);
  std::vector<ModelInput> out;
  const PyStmt* ret = nullptr;
  for (const auto& s : def.body) {
    if (s.kind == PyStmtKind::Return) {
      ret = &s;
      break;
    }
  }
  if (!ret || ret->value.empty()) return out;
  const PyExprTree tree = parse_expression(source_, syntax_, ret->value);
  const PyExpr& root = tree.at(tree.root);
  std::vector<int> items;
  if (root.kind == PyExprKind::List || root.kind == PyExprKind::Tuple) items = root.children;
  else items.push_back(tree.root);
  const PyValue returned = e.returned().value_or(PyValue::unknown());
  for (std::size_t i = 0; i < items.size(); ++i) {
    ModelInput input;
    input.span = tree.at(items[i]).span;
    input.expression = std::string(input.span.text(source_));
    const bool listed = returned.kind == PyValue::Kind::Sequence && i < returned.items.size();
    const PyValue value = listed ? returned.items[i] : e.evaluate(tree, items[i]);
    if (value.is_tensor()) {
      input.shape = value.shape;
      input.dtype = value.dtype;
    } else if (const auto number = value.as_double()) {
      input.value = number;
    } else if (value.kind == PyValue::Kind::Sequence) {
      std::vector<double> numbers;
      for (const auto& item : value.items) {
        if (const auto n = item.as_double()) numbers.push_back(*n);
      }
      if (numbers.size() == value.items.size()) input.values = std::move(numbers);
      const bool tensors = !value.items.empty() && std::all_of(value.items.begin(), value.items.end(), [](const PyValue& v) {
        return v.is_tensor();
      });
      if (tensors) {
        for (const auto& item : value.items) {
          ModelInput t;
          t.expression = input.expression;
          t.span = input.span;
          t.shape = item.shape;
          t.dtype = item.dtype;
          input.tensors.push_back(std::move(t));
        }
      }
    }
    out.push_back(std::move(input));
  }
  return out;
}

void TorchFile::find_kernelbench() {
  const PyStmt* inputs = top_level_def("get_inputs");
  const PyStmt* init_inputs = top_level_def("get_init_inputs");
  if (!inputs && !init_inputs) return;
  KernelBenchEntry entry;
  if (inputs) {
    entry.get_inputs = inputs->span;
    entry.inputs = returned_inputs(*inputs);
  }
  if (init_inputs) {
    entry.get_init_inputs = init_inputs->span;
    entry.init_inputs = returned_inputs(*init_inputs);
  }
  // The model they feed: Model when there is one, else the last module.
  for (const PyStmt* c : classes_) {
    if (text(c->name) == "Model") entry.model = "Model";
  }
  if (entry.model.empty() && !classes_.empty()) entry.model = std::string(text(classes_.back()->name));
  kernelbench_ = std::move(entry);
}

void TorchFile::describe_context() {
  context_ += precision_.tf32_convolutions ? "tf32c;" : "fp32c;";
  context_ += precision_.tf32_matmuls ? "tf32m;" : "fp32m;";
  for (const auto& [name, path] : aliases_) context_ += name + "=" + path + ";";
  context_ += "|";
  for (const auto& [name, value] : globals_) {
    context_ += name + "=";
    describe(value, context_);
  }
  context_ += "|";
  for (const auto& name : module_names_) context_ += name + ";";
  context_ += "|";
  if (kernelbench_) {
    context_ += kernelbench_->model + ":";
    for (const auto* list : {&kernelbench_->inputs, &kernelbench_->init_inputs}) {
      for (const auto& input : *list) describe(input_value(input), context_);
      context_ += "/";
    }
  }
}

const PyStmt* TorchFile::own_method(const PyStmt& c, std::string_view name) const {
  for (const auto& s : c.body) {
    if (s.kind == PyStmtKind::Def && text(s.name) == name) return &s;
  }
  return nullptr;
}

// The first base that is a module class of this file (defined before it).
const PyStmt* TorchFile::base_class(const PyStmt& c) const {
  for (const auto& base : c.targets) {
    const std::string name = base_path(base);
    for (const PyStmt* other : classes_) {
      if (other != &c && other->span.begin < c.span.begin && text(other->name) == name) return other;
    }
  }
  return nullptr;
}

// A method of the class, or inherited from a module class of this file.
const PyStmt* TorchFile::method(const PyStmt& c, std::string_view name) const {
  const PyStmt* cls = &c;
  for (int depth = 0; cls && depth < 16; ++depth, cls = base_class(*cls)) {
    if (const PyStmt* m = own_method(*cls, name)) return m;
  }
  return nullptr;
}

std::string TorchFile::context(const PyStmt& c) const {
  std::string out = context_;
  const PyStmt* cls = &c;
  for (int depth = 0; depth < 16; ++depth) {
    const PyStmt* base = base_class(*cls);
    if (!base) break;
    out += "|inherits@" + std::to_string(c.span.begin) + ":" + std::to_string(base->span.begin) + ":";
    out += base->span.text(source_);
    cls = base;
  }
  return out;
}

// Binds a method's parameters (after self): positional values first, then
// defaults; `fallback` for the rest.
void TorchFile::bind(PythonEvaluator& e, const PyStmt& def, const std::vector<ModelInput>* values, const PyValue& fallback,
                     std::vector<std::string>& names) const {
  const auto params = parse_parameters(source_, syntax_, def.parameters);
  std::size_t position = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (i == 0 && p.name == "self") continue;
    names.emplace_back(p.name);
    PyValue value = fallback;
    if (p.star == "*") {
      PyValue rest = PyValue::sequence({});
      while (values && position < values->size()) rest.items.push_back(input_value((*values)[position++]));
      value = rest;
    } else if (values && position < values->size()) {
      value = input_value((*values)[position++]);
    } else if (!p.default_value.empty()) {
      value = e.evaluate(p.default_value);
    } else if (!p.annotation.empty()) {
      const auto annotation = text(p.annotation.begin);
      if (annotation == "int" || annotation == "float" || annotation == "bool") value = PyValue::unknown();
    }
    e.locals()[std::string(p.name)] = value;
  }
}

TorchFile::ModuleScan TorchFile::scan_module(const PyStmt& c) const {
  ModuleScan out;
  TorchModule& m = out.module;
  m.name = std::string(text(c.name));
  m.span = c.span;
  m.name_span = syntax_.code[c.name].span();
  for (const auto& base : c.targets) {
    m.bases.emplace_back(source_.substr(syntax_.code[base.begin].begin, syntax_.code[base.end - 1].end - syntax_.code[base.begin].begin));
  }
  const bool model = kernelbench_ && kernelbench_->model == m.name;
  ModuleState state;
  if (const PyStmt* init = method(c, "__init__")) {
    m.init = init->span;
    PythonEvaluator e = evaluator();
    bind(e, *init, model ? &kernelbench_->init_inputs : nullptr, PyValue::unknown(), m.init_parameters);
    e.set_self(&state, true);
    e.run(init->body);
    m.layers = state.layers;
  }
  if (const PyStmt* forward = method(c, "forward")) {
    m.forward = forward->span;
    PythonEvaluator e = evaluator();
    bind(e, *forward, model ? &kernelbench_->inputs : nullptr, PyValue::tensor(std::nullopt, "float32"), m.forward_parameters);
    e.set_self(&state, false);
    e.set_trace(&out.trace, "get_inputs");
    e.run(forward->body);
    m.ops = out.trace.ops;
    hold_against_tensor_float32(m.ops);
  }
  return out;
}

// float32 convolutions and matmuls that torch runs on TF32 tensor cores (cuDNN
// by default, matmuls when the file allows it) are held against TF32's peak.
void TorchFile::hold_against_tensor_float32(std::vector<ForwardOp>& ops) const {
  for (auto& op : ops) {
    if (!op.work || op.work->dtype != "float32") continue;
    const auto info = find_op(op.op);
    if (!info) continue;
    const bool conv = info->category == OpCategory::Conv;
    const bool matmul = info->category == OpCategory::Matmul || info->category == OpCategory::Linear;
    if ((conv && precision_.tf32_convolutions) || (matmul && precision_.tf32_matmuls)) op.work->dtype = "tf32";
  }
}

TorchScan scan_torch(std::string_view source, const PythonSyntax& syntax, const SizeMap& sizes) {
  const TorchFile file(source, syntax, sizes);
  TorchScan scan;
  scan.kernelbench = file.kernelbench();
  for (const PyStmt* c : file.module_classes()) {
    auto [module, trace] = file.scan_module(*c);
    scan.modules.push_back(std::move(module));
    scan.traces.push_back(std::move(trace));
  }
  return scan;
}

}  // namespace hiera::engine::analysis
