#include "engine/spec/launch_contract_inference.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "engine/analysis/cuda_lexer.h"
#include "engine/analysis/line_index.h"
#include "engine/common/size_expression.h"
#include "engine/spec/annotations.h"
#include "engine/spec/kernel_annotation_lines.h"

namespace hiera::engine::spec {

namespace {

namespace an = engine::analysis;

constexpr const char* kUnknown = "?";

// The code tokens of a text (comments and preprocessor lines left out) as strings.
std::vector<std::string> code_tokens(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& t : an::lex_cuda(text).tokens) {
    if (t.kind != an::TokenKind::Comment && t.kind != an::TokenKind::Directive) out.emplace_back(t.text(text));
  }
  return out;
}

bool is_ident(const std::string& t) { return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_'); }
bool is_number(const std::string& t) { return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])); }

// An integer literal without its suffix and separators ("256u" -> 256); nullopt for floating literals.
std::optional<std::int64_t> integer_literal(std::string text) {
  std::erase(text, '\'');
  while (!text.empty() && (text.back() == 'u' || text.back() == 'U' || text.back() == 'l' || text.back() == 'L')) text.pop_back();
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  return std::stoll(text);
}

// A floating literal as an annotation number ("2.5f" -> "2.5"); nullopt for anything else.
std::optional<std::string> float_literal(std::string text) {
  if (!text.empty() && (text.back() == 'f' || text.back() == 'F')) text.pop_back();
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
      })) {
    return std::nullopt;
  }
  if (text.back() == '.') text += '0';
  return text;
}

std::string upper(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The C type as written, without qualifiers, pointers and references: "const float* __restrict__" -> "float".
std::string base_type(const std::string& type) {
  std::string out;
  for (const auto& t : code_tokens(type)) {
    if (t == "const" || t == "volatile" || t == "__restrict__" || t == "__restrict" || t == "*" || t == "&" || t == "struct") continue;
    out += (out.empty() ? "" : " ") + t;
  }
  return out;
}

std::optional<std::string> element_type(const std::string& c_type) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {"float", "float32"},        {"double", "float64"},       {"half", "float16"},        {"__half", "float16"},
      {"__nv_bfloat16", "bfloat16"}, {"nv_bfloat16", "bfloat16"}, {"int", "int32"},          {"signed int", "int32"},
      {"int32_t", "int32"},        {"unsigned", "int32"},       {"unsigned int", "int32"},  {"uint32_t", "int32"},
      {"long", "int64"},           {"long long", "int64"},      {"int64_t", "int64"},       {"size_t", "int64"},
      {"std::size_t", "int64"},    {"std::int64_t", "int64"},   {"long int", "int64"},      {"unsigned long", "int64"},
      {"uint8_t", "uint8"},        {"unsigned char", "uint8"},  {"std::uint8_t", "uint8"},  {"std::int32_t", "int32"},
      {"int64", "int64"},          {"unsigned long long", "int64"},
  };
  const auto found = kTypes.find(c_type);
  if (found == kTypes.end()) return std::nullopt;
  return found->second;
}

bool is_integer_type(const std::string& element) { return element == "int32" || element == "int64"; }

std::optional<std::int64_t> sizeof_type(const std::string& c_type) {
  const auto element = element_type(c_type);
  if (!element) return std::nullopt;
  if (*element == "float64" || *element == "int64") return 8;
  if (*element == "float16" || *element == "bfloat16") return 2;
  if (*element == "uint8") return 1;
  return 4;
}

// The index of the bracket closing the one at `open` in `tokens`, or tokens.size().
std::size_t closing(const std::vector<std::string>& tokens, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t == "(" || t == "[" || t == "{") ++depth;
    if (t == ")" || t == "]" || t == "}") {
      if (--depth == 0) return i;
    }
  }
  return tokens.size();
}

// Splits tokens [begin, end) at top-level commas.
std::vector<std::vector<std::string>> split_commas(const std::vector<std::string>& tokens, std::size_t begin, std::size_t end) {
  std::vector<std::vector<std::string>> out(1);
  int depth = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& t = tokens[i];
    if (t == "(" || t == "[" || t == "{" || t == "<") ++depth;
    if (t == ")" || t == "]" || t == "}" || t == ">") --depth;
    if (t == "," && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back().push_back(t);
  }
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

// Integer constants the file defines (`#define N 4096`, `const int kThreads = 256;`,
// `int n = 1 << 20;`), and floating ones (`const float alpha = 2.5f;`): a name
// defined twice with different values is left out.
struct Constants {
  std::map<std::string, std::int64_t, std::less<>> integers;
  std::map<std::string, std::string, std::less<>> floats;
};

// A tiny evaluator of constant integer expressions: + - * / % << and parentheses, sizeof(type).
class ConstantEvaluator {
 public:
  ConstantEvaluator(const std::vector<std::string>& tokens, const Constants& constants)
      : tokens_(tokens), constants_(constants) {}
  std::optional<std::int64_t> evaluate() {
    const auto value = shift();
    if (!value || at_ < tokens_.size()) return std::nullopt;
    return value;
  }

 private:
  const std::string* peek() const { return at_ < tokens_.size() ? &tokens_[at_] : nullptr; }
  bool take(const char* t) {
    if (peek() && *peek() == t) return ++at_, true;
    return false;
  }
  std::optional<std::int64_t> shift() {
    auto left = sum();
    while (left && take("<<")) {
      const auto right = sum();
      if (!right || *right < 0 || *right > 40) return std::nullopt;
      left = *left << *right;
    }
    return left;
  }
  std::optional<std::int64_t> sum() {
    auto left = product();
    while (left && peek() && (*peek() == "+" || *peek() == "-")) {
      const bool plus = tokens_[at_++] == "+";
      const auto right = product();
      if (!right) return std::nullopt;
      left = plus ? *left + *right : *left - *right;
    }
    return left;
  }
  std::optional<std::int64_t> product() {
    auto left = unary();
    while (left && peek() && (*peek() == "*" || *peek() == "/" || *peek() == "%")) {
      const std::string op = tokens_[at_++];
      const auto right = unary();
      if (!right || (op != "*" && *right == 0)) return std::nullopt;
      left = op == "*" ? *left * *right : op == "/" ? *left / *right : *left % *right;
    }
    return left;
  }
  std::optional<std::int64_t> unary() {
    if (take("-")) {
      const auto v = unary();
      return v ? std::optional(-*v) : std::nullopt;
    }
    const std::string* t = peek();
    if (!t) return std::nullopt;
    if (*t == "(") {
      ++at_;
      const auto v = shift();
      return v && take(")") ? v : std::nullopt;
    }
    if (*t == "sizeof" && at_ + 1 < tokens_.size() && tokens_[at_ + 1] == "(") {
      const std::size_t close = closing(tokens_, at_ + 1);
      if (close >= tokens_.size()) return std::nullopt;
      std::string type;
      for (std::size_t i = at_ + 2; i < close; ++i) type += (type.empty() ? "" : " ") + tokens_[i];
      at_ = close + 1;
      return sizeof_type(type);
    }
    ++at_;
    if (is_number(*t)) return integer_literal(*t);
    if (const auto c = constants_.integers.find(*t); c != constants_.integers.end()) return c->second;
    return std::nullopt;
  }

  const std::vector<std::string>& tokens_;
  const Constants& constants_;
  std::size_t at_ = 0;
};

std::optional<std::int64_t> constant_value(const std::vector<std::string>& tokens, const Constants& constants) {
  if (tokens.empty()) return std::nullopt;
  return ConstantEvaluator(tokens, constants).evaluate();
}

Constants file_constants(std::string_view text, const std::vector<std::string>& code) {
  Constants out;
  std::set<std::string> ambiguous;
  auto define_integer = [&](const std::string& name, std::int64_t value) {
    if (ambiguous.count(name)) return;
    const auto [it, inserted] = out.integers.emplace(name, value);
    if (!inserted && it->second != value) {
      out.integers.erase(it);
      ambiguous.insert(name);
    }
  };
  for (const auto& t : an::lex_cuda(text).tokens) {
    if (t.kind != an::TokenKind::Directive) continue;
    const auto words = code_tokens(std::string(t.text(text)).substr(1));
    if (words.size() >= 3 && words[0] == "define" && is_ident(words[1])) {
      if (const auto v = constant_value({words.begin() + 2, words.end()}, out)) define_integer(words[1], *v);
    }
  }
  // `NAME = EXPR ;` where NAME follows a type word: a definition, not an assignment in a loop.
  for (std::size_t i = 1; i + 2 < code.size(); ++i) {
    if (code[i + 1] != "=" || !is_ident(code[i]) || !is_ident(code[i - 1])) continue;
    std::size_t end = i + 2;
    while (end < code.size() && code[end] != ";" && code[end] != "," && code[end] != ")" && code[end] != "{") ++end;
    if (end >= code.size() || code[end] != ";") continue;
    const std::vector<std::string> value(code.begin() + static_cast<std::ptrdiff_t>(i + 2), code.begin() + static_cast<std::ptrdiff_t>(end));
    if (const auto v = constant_value(value, out)) {
      define_integer(code[i], *v);
    } else if (value.size() == 1) {
      if (const auto f = float_literal(value[0]); f && !out.floats.count(code[i])) out.floats.emplace(code[i], *f);
    }
  }
  return out;
}

// One size expression, or up to three in parentheses ("(16, 16)").
bool valid_size_expression(const std::string& text) {
  auto parts = code_tokens(text);
  auto components = split_commas(parts, 0, parts.size());
  if (components.size() == 1 && parts.size() > 2 && parts.front() == "(" && closing(parts, 0) == parts.size() - 1) {
    const auto inner = split_commas(parts, 1, parts.size() - 1);
    if (inner.size() > 1) components = inner;
  }
  if (components.empty() || components.size() > 3) return false;
  for (const auto& component : components) {
    try {
      size_expression_names(joined(component));
    } catch (const SizeExpressionError&) {
      return false;
    }
  }
  return true;
}

// How a kernel's body uses a pointer parameter.
struct PointerUse {
  bool read = false;
  bool written = false;
};

PointerUse pointer_use(const std::vector<std::string>& body, const std::string& name) {
  static const std::set<std::string> kCompound = {"+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>="};
  PointerUse use;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != name || (i > 0 && (body[i - 1] == "." || body[i - 1] == "->"))) continue;
    const bool address = i > 0 && (body[i - 1] == "&" || body[i - 1] == "++" || body[i - 1] == "--");
    if (i + 1 < body.size() && body[i + 1] == "[") {
      std::size_t close = closing(body, i + 1);
      // A member of the element (v[i].x *= s) is the element's use.
      while (close + 2 < body.size() && body[close + 1] == "." && is_ident(body[close + 2])) close += 2;
      const std::string next = close + 1 < body.size() ? body[close + 1] : "";
      if (address || kCompound.count(next) || next == "++" || next == "--") {
        use.read = use.written = true;
      } else if (next == "=") {
        use.written = true;
      } else {
        use.read = true;
      }
    } else {
      // Offset, cast, or passed on: it may be read and written through.
      use.read = use.written = true;
    }
  }
  return use;
}

class Inference {
 public:
  Inference(std::string_view text, const an::Analysis& analysis, const an::CudaFunction& kernel, std::size_t index)
      : text_(text), kernel_(kernel), lines_(text), code_(code_tokens(text)),
        constants_(file_constants(text, code_)) {
    const LineRange range = kernel_annotation_lines(analysis, index, lines_);
    annotations_ = parse_annotations(text, SourceLanguage::Cuda, range.first, range.last);
    for (const auto& comment : comment_lines(text, SourceLanguage::Cuda)) {
      if (comment.line >= range.first && comment.line <= range.last && begins_launch_contract(comment)) begun_ = true;
    }
    for (const auto& clause : annotations_.clauses) {
      if (clause.name != "interface.sizes" || !clause.value.is_object()) continue;
      for (const auto& [name, value] : clause.value.items()) {
        if (value.is_number_integer()) annotated_sizes_[name] = value.get<std::int64_t>();
      }
    }
    for (const auto& l : analysis.launches) {
      if (l.kernel == kernel.name) {
        launch_ = &l;
        break;
      }
    }
  }

  bool has_contract() const { return begun_; }

  InferredContract infer() {
    InferredContract out;
    out.kernel = kernel_.name;
    const std::size_t line = lines_.line_of(kernel_.span.begin);
    out.insert_at = lines_.line_start(line);
    std::size_t indent_end = out.insert_at;
    while (indent_end < text_.size() && (text_[indent_end] == ' ' || text_[indent_end] == '\t')) ++indent_end;
    const std::string indent(text_.substr(out.insert_at, indent_end - out.insert_at));

    map_arguments();
    std::vector<std::string> arg_lines;
    for (std::size_t i = 0; i < kernel_.parameters.size(); ++i) arg_lines.push_back(arg_line(i));
    const std::string launch_line = this->launch_line();
    choose_sizes();

    std::vector<std::string> body;
    std::string size_line;
    for (const auto& name : size_order_) {
      if (annotated_sizes_.count(name)) continue;
      const auto value = size_values_.find(name);
      size_line += " " + name + "=" + std::to_string(value->second);
    }
    std::vector<std::string> notes;
    notes.push_back(launch_ ? "Launch contract inferred by hiera from the launch in " +
                                  (launch_->caller.empty() ? std::string("file scope") : launch_->caller) +
                                  ": hiera verifies candidates against it."
                            : "Launch contract inferred by hiera from " + kernel_.name +
                                  "'s parameters (no launch of it in this file).");
    if (!chosen_.empty()) {
      std::string list;
      for (const auto& c : chosen_) list += (list.empty() ? "" : ", ") + c;
      notes.push_back("hiera chose " + list + " (the file gives no value): set the values the kernel runs at.");
    }
    if (!unknown_.empty()) {
      std::string list;
      for (const auto& u : unknown_) list += (list.empty() ? "" : ", ") + u;
      notes.push_back("Fill in each '?' (" + list + ").");
    }
    for (const auto& note : notes) out.text += indent + "// " + note + "\n";
    if (!size_line.empty()) out.text += indent + "// hiera: size" + size_line + "\n";
    for (const auto& a : arg_lines) out.text += indent + "// hiera: " + a + "\n";
    out.text += indent + "// hiera: " + launch_line + "\n";
    out.unknown = unknown_;
    out.chosen = chosen_;
    return out;
  }

 private:
  void use_size(const std::string& name, std::optional<std::int64_t> value) {
    if (std::find(size_order_.begin(), size_order_.end(), name) == size_order_.end()) size_order_.push_back(name);
    if (value && !size_values_.count(name)) size_values_[name] = *value;
  }

  // Each integer parameter is a size named after the host value the launch passes it.
  void map_arguments() {
    if (launch_ && launch_->form == an::LaunchForm::Chevron && launch_->arguments.size() == kernel_.parameters.size()) {
      host_arguments_ = launch_->arguments;
    }
    template_types_ = template_arguments();
    for (std::size_t i = 0; i < kernel_.parameters.size(); ++i) {
      const auto& p = kernel_.parameters[i];
      if (p.pointer) continue;
      const auto element = element_type(resolved(base_type(p.type)));
      if (!element || !is_integer_type(*element)) continue;
      const std::string host = i < host_arguments_.size() ? host_arguments_[i] : "";
      const auto tokens = code_tokens(host);
      if (tokens.size() == 1 && is_ident(tokens[0])) {
        size_of_host_[tokens[0]] = upper(tokens[0]);
      } else if (tokens.size() == 5 && is_ident(tokens[0]) && tokens[1] == "." && tokens[2] == "numel") {
        numel_of_tensor_[tokens[0]] = upper(p.name);
      }
    }
    // `const int n = x.numel();`: the size of n is x's element count.
    for (std::size_t i = 0; i + 6 < code_.size(); ++i) {
      if (is_ident(code_[i]) && code_[i + 1] == "=" && is_ident(code_[i + 2]) && code_[i + 3] == "." &&
          code_[i + 4] == "numel" && code_[i + 5] == "(") {
        if (const auto size = size_of_host_.find(code_[i]); size != size_of_host_.end()) numel_of_tensor_[code_[i + 2]] = size->second;
      }
    }
  }

  // The launch's template arguments by the kernel's template parameter names: {"T": "float"}.
  std::map<std::string, std::string> template_arguments() const {
    std::map<std::string, std::string> out;
    if (!launch_ || kernel_.template_parameters.empty() || launch_->form != an::LaunchForm::Chevron) return out;
    const std::size_t from = launch_->kernel_span.end;
    const std::string_view rest = text_.substr(from, launch_->span.end - from);
    const std::size_t chevron = rest.find("<<<");
    if (chevron == std::string_view::npos) return out;
    const auto tokens = code_tokens(rest.substr(0, chevron));
    if (tokens.size() < 2 || tokens.front() != "<" || tokens.back() != ">") return out;
    const auto arguments = split_commas(tokens, 1, tokens.size() - 1);
    const auto parameter_tokens = code_tokens(kernel_.template_parameters);
    const auto parameters = split_commas(parameter_tokens, 0, parameter_tokens.size());
    for (std::size_t i = 0; i < parameters.size() && i < arguments.size(); ++i) {
      if (!parameters[i].empty()) {
        std::string argument;
        for (const auto& t : arguments[i]) argument += (argument.empty() ? "" : " ") + t;
        out[parameters[i].back()] = argument;
      }
    }
    return out;
  }

  std::string resolved(const std::string& type) const {
    const auto found = template_types_.find(type);
    return found == template_types_.end() ? type : found->second;
  }

  std::string host_argument(std::size_t i) const { return i < host_arguments_.size() ? host_arguments_[i] : ""; }

  std::string arg_line(std::size_t i) {
    const auto& p = kernel_.parameters[i];
    const std::string name = p.name.empty() ? "arg" + std::to_string(i) : p.name;
    const std::string c_type = resolved(base_type(p.type));
    const auto element = element_type(c_type);
    const std::string type = element ? *element : kUnknown;
    if (!element) unknown_.push_back("the element type of " + name + " (" + (c_type.empty() ? p.type : c_type) + ")");
    if (p.pointer) {
      const std::string role = role_of(p, name);
      return "arg " + name + " " + role + " " + type + "[" + extent_of(i, name) + "]";
    }
    const std::string value = scalar_value(i, name, element.value_or(""));
    return "arg " + name + " scalar " + type + " = " + value;
  }

  std::string role_of(const an::CudaParameter& p, const std::string& name) const {
    if (p.is_const || !kernel_.body) return "input";
    std::vector<std::string> body = code_tokens(kernel_.body->text(text_));
    const PointerUse use = pointer_use(body, name);
    if (use.written) return use.read ? "inout" : "output";
    return "input";
  }

  std::string scalar_value(std::size_t i, const std::string& name, const std::string& element) {
    const auto tokens = code_tokens(host_argument(i));
    if (is_integer_type(element)) {
      if (tokens.size() == 1 && is_ident(tokens[0])) {
        const std::string size = size_of_host_.at(tokens[0]);
        use_size(size, host_constant(tokens[0]));
        return size;
      }
      if (const auto v = constant_value(tokens, constants_)) return std::to_string(*v);
      if (const auto numel = numel_of_tensor_.find(tokens.size() == 5 ? tokens[0] : ""); numel != numel_of_tensor_.end()) {
        use_size(numel->second, std::nullopt);
        return numel->second;
      }
      // No launch to read: the parameter names its own size.
      const std::string size = upper(name);
      use_size(size, std::nullopt);
      return size;
    }
    if (tokens.size() == 1) {
      if (const auto f = float_literal(tokens[0])) return *f;
      if (const auto c = constants_.floats.find(tokens[0]); c != constants_.floats.end()) return *float_literal(c->second);
      if (const auto c = constants_.integers.find(tokens[0]); c != constants_.integers.end()) return std::to_string(c->second);
    }
    if (tokens.size() == 2 && tokens[0] == "-") {
      if (const auto f = float_literal(tokens[1])) return "-" + *f;
    }
    if (element.empty()) {
      unknown_.push_back("the value of " + name);
      return kUnknown;
    }
    chosen_.push_back(name + "=1");
    return "1";
  }

  std::optional<std::int64_t> host_constant(const std::string& host) const {
    if (const auto c = constants_.integers.find(host); c != constants_.integers.end()) return c->second;
    return std::nullopt;
  }

  // The array's element count, from where the host code allocates what the launch passes it.
  std::string extent_of(std::size_t i, const std::string& name) {
    auto tokens = code_tokens(host_argument(i));
    // (float*)d_x, reinterpret_cast<float*>(d_x), static_cast<float*>(t.data_ptr())
    if (tokens.size() > 3 && tokens[0] == "(" ) {
      const std::size_t close = closing(tokens, 0);
      if (close + 1 < tokens.size() && close > 0 && tokens[close - 1] == "*") tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(close + 1));
    }
    if (tokens.size() > 3 && (tokens[0] == "reinterpret_cast" || tokens[0] == "static_cast") && tokens[1] == "<") {
      const auto open = std::find(tokens.begin(), tokens.end(), "(");
      if (open != tokens.end() && tokens.back() == ")") tokens = {open + 1, tokens.end() - 1};
    }
    std::optional<std::string> extent;
    if (tokens.size() == 1 && is_ident(tokens[0])) {
      extent = allocated_extent(tokens[0]);
    } else if (tokens.size() >= 4 && is_ident(tokens[0]) && tokens[1] == "." &&
               (tokens[2] == "data_ptr" || tokens[2] == "data" || tokens[2] == "mutable_data_ptr" || tokens[2] == "const_data_ptr")) {
      extent = tensor_extent(tokens[0], 0);
    }
    if (!extent) extent = bounds_check_extent(name);
    if (extent) return *extent;
    unknown_.push_back("the extent of " + name);
    return kUnknown;
  }

  // cudaMalloc(&p, BYTES), cudaMallocManaged((void**)&p, BYTES, ...): BYTES over the element size.
  std::optional<std::string> allocated_extent(const std::string& pointer) {
    for (std::size_t k = 0; k + 1 < code_.size(); ++k) {
      if ((code_[k] != "cudaMalloc" && code_[k] != "cudaMallocManaged" && code_[k] != "cudaMallocAsync") || code_[k + 1] != "(") continue;
      const std::size_t close = closing(code_, k + 1);
      const auto args = split_commas(code_, k + 2, close);
      if (args.size() < 2 || std::find(args[0].begin(), args[0].end(), pointer) == args[0].end()) continue;
      return elements_of_bytes(args[1], 0);
    }
    return std::nullopt;
  }

  std::optional<std::string> elements_of_bytes(const std::vector<std::string>& bytes, int depth) {
    // `bytes`, defined as `size_t bytes = n * sizeof(float);`
    if (bytes.size() == 1 && is_ident(bytes[0]) && depth < 4) {
      for (std::size_t k = 0; k + 2 < code_.size(); ++k) {
        if (code_[k] != bytes[0] || code_[k + 1] != "=") continue;
        std::size_t end = k + 2;
        while (end < code_.size() && code_[end] != ";") ++end;
        return elements_of_bytes({code_.begin() + static_cast<std::ptrdiff_t>(k + 2), code_.begin() + static_cast<std::ptrdiff_t>(end)}, depth + 1);
      }
    }
    // A top-level `* sizeof(T)` or `sizeof(T) *` factor is the element size.
    std::vector<std::string> count = bytes;
    for (std::size_t k = 0; k + 1 < count.size(); ++k) {
      if (count[k] != "sizeof" || count[k + 1] != "(") continue;
      const std::size_t close = closing(count, k + 1);
      int depth_here = 0;
      for (std::size_t j = 0; j < k; ++j) depth_here += count[j] == "(" ? 1 : count[j] == ")" ? -1 : 0;
      if (depth_here != 0) break;
      if (k > 0 && count[k - 1] == "*") {
        count.erase(count.begin() + static_cast<std::ptrdiff_t>(k - 1), count.begin() + static_cast<std::ptrdiff_t>(close + 1));
      } else if (k == 0 && close + 1 < count.size() && count[close + 1] == "*") {
        count.erase(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(close + 2));
      } else {
        break;
      }
      return size_expression(count, nullptr);
    }
    return std::nullopt;
  }

  // torch::empty({M, N}, ...) / zeros / ones / rand / randn / full, torch::empty_like(x), x.clone(),
  // or a tensor passed in whose x.numel() the launch passes.
  std::optional<std::string> tensor_extent(const std::string& tensor, int depth) {
    if (depth > 4) return std::nullopt;
    static const std::set<std::string> kFactories = {"empty", "zeros", "ones", "rand", "randn", "full"};
    static const std::set<std::string> kLike = {"empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like"};
    for (std::size_t k = 0; k + 3 < code_.size(); ++k) {
      if (code_[k] != tensor || code_[k + 1] != "=") continue;
      std::size_t end = k + 2;
      while (end < code_.size() && code_[end] != ";") ++end;
      const std::vector<std::string> value(code_.begin() + static_cast<std::ptrdiff_t>(k + 2), code_.begin() + static_cast<std::ptrdiff_t>(end));
      // x.clone()
      if (value.size() == 5 && is_ident(value[0]) && value[1] == "." && value[2] == "clone") return tensor_extent(value[0], depth + 1);
      const auto call = std::find(value.begin(), value.end(), "(");
      if (call == value.begin() || call == value.end()) continue;
      const std::string function = *(call - 1);
      const std::size_t open = static_cast<std::size_t>(call - value.begin());
      const auto args = split_commas(value, open + 1, closing(value, open));
      if (args.empty()) continue;
      if (kLike.count(function) && args[0].size() == 1) return tensor_extent(args[0][0], depth + 1);
      if (!kFactories.count(function)) continue;
      std::vector<std::string> dims = args[0];
      if (dims.size() >= 2 && dims.front() == "{" && dims.back() == "}") dims = {dims.begin() + 1, dims.end() - 1};
      std::string out;
      for (const auto& dim : split_commas(dims, 0, dims.size())) {
        const auto d = size_expression(dim, nullptr);
        if (!d) return std::nullopt;
        out += (out.empty() ? "" : ", ") + *d;
      }
      if (!out.empty()) return out;
    }
    if (const auto numel = numel_of_tensor_.find(tensor); numel != numel_of_tensor_.end()) {
      use_size(numel->second, std::nullopt);
      return numel->second;
    }
    return std::nullopt;
  }

  // The kernel's bounds check `i < n` when it compares with one integer parameter only.
  std::optional<std::string> bounds_check_extent(const std::string& array) {
    if (!kernel_.body) return std::nullopt;
    const auto body = code_tokens(kernel_.body->text(text_));
    std::set<std::size_t> compared;
    for (std::size_t k = 0; k + 1 < body.size(); ++k) {
      if (body[k] != "<") continue;
      for (std::size_t i = 0; i < kernel_.parameters.size(); ++i) {
        if (!kernel_.parameters[i].pointer && kernel_.parameters[i].name == body[k + 1]) compared.insert(i);
      }
    }
    if (compared.size() != 1) return std::nullopt;
    const std::size_t i = *compared.begin();
    const auto element = element_type(resolved(base_type(kernel_.parameters[i].type)));
    if (!element || !is_integer_type(*element)) return std::nullopt;
    const std::string value = scalar_value_text(i);
    if (value.empty()) return std::nullopt;
    (void)array;
    return value;
  }

  // The size expression an integer parameter is given (what its arg line says).
  std::string scalar_value_text(std::size_t i) {
    const std::size_t unknown = unknown_.size(), chosen = chosen_.size();
    const std::string value = scalar_value(i, kernel_.parameters[i].name, "int32");
    unknown_.resize(unknown);
    chosen_.resize(chosen);
    return value == kUnknown ? "" : value;
  }

  // Host code as a size expression: its host values become size names, its
  // constants numbers, dim3 variables their components; nullopt when
  // something in it is not one of those.
  std::optional<std::string> size_expression(const std::vector<std::string>& tokens, const an::LaunchSite* launch, int depth = 0) {
    if (depth > 8 || tokens.empty()) return std::nullopt;
    std::string out;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      const std::string& t = tokens[k];
      if (is_number(t)) {
        const auto v = integer_literal(t);
        if (!v) return std::nullopt;
        out += std::to_string(*v);
      } else if (t == "sizeof" && k + 1 < tokens.size() && tokens[k + 1] == "(") {
        const std::size_t close = closing(tokens, k + 1);
        const auto v = constant_value({tokens.begin() + static_cast<std::ptrdiff_t>(k), tokens.begin() + static_cast<std::ptrdiff_t>(std::min(close + 1, tokens.size()))}, constants_);
        if (!v) return std::nullopt;
        out += std::to_string(*v);
        k = close;
      } else if (t == "dim3" && k + 1 < tokens.size() && tokens[k + 1] == "(") {
        continue;  // dim3(x, y): its components follow in parentheses
      } else if (is_ident(t)) {
        const bool member = k + 2 < tokens.size() && tokens[k + 1] == "." && (tokens[k + 2] == "x" || tokens[k + 2] == "y" || tokens[k + 2] == "z");
        const an::HostSizing* sizing = nullptr;
        if (launch) {
          for (const auto& s : launch->sizing) {
            if (s.name == t) sizing = &s;
          }
        }
        if (const auto size = size_of_host_.find(t); size != size_of_host_.end() && !member) {
          use_size(size->second, host_constant(t));
          out += size->second;
        } else if (sizing) {
          const auto definition = code_tokens(sizing->expression);
          auto components = split_commas(definition, 0, definition.size());
          if (member) {
            const std::size_t c = static_cast<std::size_t>(tokens[k + 2][0] - 'x');
            k += 2;
            if (c >= components.size()) {
              out += "1";
              continue;
            }
            components = {components[c]};
          }
          std::string inner;
          for (const auto& component : components) {
            const auto e = size_expression(component, launch, depth + 1);
            if (!e) return std::nullopt;
            inner += (inner.empty() ? "" : ", ") + *e;
          }
          const bool simple = std::all_of(inner.begin(), inner.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
          out += simple ? inner : "(" + inner + ")";
        } else if (const auto c = constants_.integers.find(t); c != constants_.integers.end() && !member) {
          out += std::to_string(c->second);
        } else {
          return std::nullopt;
        }
      } else if (t == "+" || t == "-" || t == "*" || t == "/" || t == "%" || t == "(" || t == ")" || t == ",") {
        out += t == "," ? ", " : t;
      } else {
        return std::nullopt;
      }
    }
    if (!valid_size_expression(out)) return std::nullopt;
    return out;
  }

  // A launch dimension: one expression or up to three in parentheses.
  std::string dimension(const std::string& written, const char* what) {
    const auto e = launch_ ? size_expression(code_tokens(written), launch_) : std::nullopt;
    if (!e) {
      unknown_.push_back(std::string("the launch ") + what);
      return kUnknown;
    }
    const auto parts = code_tokens(*e);
    auto components = split_commas(parts, 0, parts.size());
    // "(16, 16)" from a dim3 variable, "(256)" from dim3(256): the components inside.
    if (components.size() == 1 && parts.size() > 2 && parts.front() == "(" && closing(parts, 0) == parts.size() - 1) {
      components = split_commas(parts, 1, parts.size() - 1);
    }
    if (components.empty() || components.size() > 3) {
      unknown_.push_back(std::string("the launch ") + what);
      return kUnknown;
    }
    if (components.size() == 1) return joined(components[0]);
    std::string text;
    for (const auto& c : components) text += (text.empty() ? "" : ", ") + joined(c);
    return "(" + text + ")";
  }

  std::string launch_line() {
    if (!launch_) {
      unknown_.push_back("the launch grid");
      unknown_.push_back("the launch block");
      return "launch grid=? block=?";
    }
    const std::string grid = dimension(launch_->grid, "grid");
    const std::string block = dimension(launch_->block, "block");
    std::string out = "launch grid=" + grid + " block=" + block;
    if (launch_->shared_bytes != "0") out += " smem=" + dimension(launch_->shared_bytes, "shared memory");
    return out;
  }

  // Values for the sizes nothing gives: one size 2^20 elements, two 1024 each, more 128 each.
  void choose_sizes() {
    std::vector<std::string> missing;
    for (const auto& name : size_order_) {
      if (annotated_sizes_.count(name)) continue;
      if (!size_values_.count(name)) missing.push_back(name);
    }
    const std::size_t count = size_order_.size();
    const std::int64_t value = count <= 1 ? 1048576 : count == 2 ? 1024 : 128;
    for (const auto& name : missing) {
      size_values_[name] = value;
      chosen_.insert(chosen_.begin() + static_cast<std::ptrdiff_t>(chosen_sizes_++), name + "=" + std::to_string(value));
    }
  }

  std::string_view text_;
  const an::CudaFunction& kernel_;
  an::LineIndex lines_;
  std::vector<std::string> code_;
  Constants constants_;
  Annotations annotations_;
  bool begun_ = false;  // an `arg` or `launch` line, well formed or not
  std::map<std::string, std::int64_t> annotated_sizes_;
  const an::LaunchSite* launch_ = nullptr;
  std::vector<std::string> host_arguments_;
  std::map<std::string, std::string> template_types_;
  std::map<std::string, std::string> size_of_host_;     // host identifier -> size name
  std::map<std::string, std::string> numel_of_tensor_;  // tensor -> the size that is its numel()
  std::vector<std::string> size_order_;
  std::map<std::string, std::int64_t> size_values_;
  std::vector<std::string> unknown_, chosen_;
  std::size_t chosen_sizes_ = 0;
};

}  // namespace

std::optional<InferredContract> infer_launch_contract(std::string_view text, const an::Analysis& analysis,
                                                      std::string_view kernel) {
  for (std::size_t i = 0; i < analysis.functions.size(); ++i) {
    const auto& f = analysis.functions[i];
    if (f.kind != an::CudaFunctionKind::Kernel || f.name != kernel) continue;
    if (!f.complete || f.parameters.empty()) return std::nullopt;
    Inference inference(text, analysis, f, i);
    if (inference.has_contract()) return std::nullopt;
    return inference.infer();
  }
  return std::nullopt;
}

}  // namespace hiera::engine::spec
