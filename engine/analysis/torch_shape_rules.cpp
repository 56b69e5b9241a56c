#include "engine/analysis/torch_shape_rules.h"

#include <algorithm>
#include <numeric>

#include "engine/common/dtype_bytes.h"

namespace hiera::engine::analysis {

const PyValue* OpCall::arg(std::size_t index, std::string_view name) const {
  if (index < args.size()) return &args[index];
  return keyword(name);
}

const PyValue* OpCall::keyword(std::string_view name) const {
  for (const auto& [key, value] : kwargs) {
    if (key == name) return &value;
  }
  return nullptr;
}

namespace {

double numel(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), 1.0, [](double a, std::int64_t b) { return a * static_cast<double>(b); });
}

double tensor_bytes(const PyValue& v) {
  if (!v.is_tensor() || !v.shape) return 0.0;
  return numel(*v.shape) * dtype_bytes(v.dtype);
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

std::optional<std::size_t> normalize_dim(std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= std::max<std::int64_t>(r, 1)) return std::nullopt;
  return static_cast<std::size_t>(dim);
}

// `n` integers from an int or a tuple (kernel_size=3 -> {3, 3}).
std::optional<std::vector<std::int64_t>> ints(const PyValue* v, std::size_t n, std::int64_t fallback) {
  if (!v || v->kind == PyValue::Kind::None) return std::vector<std::int64_t>(n, fallback);
  if (const auto i = v->as_int()) return std::vector<std::int64_t>(n, *i);
  const auto shape = v->as_shape();
  if (!shape || shape->size() != n) return std::nullopt;
  return *shape;
}

std::optional<std::int64_t> int_arg(const PyValue* v, std::int64_t fallback) {
  if (!v || v->kind == PyValue::Kind::None) return fallback;
  return v->as_int();
}

bool bool_arg(const PyValue* v, bool fallback) {
  if (!v) return fallback;
  if (const auto i = v->as_int()) return *i != 0;
  return fallback;
}

// The first tensor among the arguments (the input of most ops).
const PyValue* first_tensor(const OpCall& call) {
  for (const auto& a : call.args) {
    if (a.is_tensor()) return &a;
  }
  for (const auto& [key, value] : call.kwargs) {
    if (value.is_tensor()) return &value;
  }
  return nullptr;
}

std::string dtype_of(const OpCall& call) {
  const PyValue* t = first_tensor(call);
  return t ? t->dtype : "float32";
}

OpOutcome unknown_tensor(const OpCall& call) { return {PyValue::tensor(std::nullopt, dtype_of(call)), std::nullopt}; }

OpOutcome with_work(Shape shape, std::string dtype, double flops, double bytes) {
  Work work;
  work.flops = flops;
  work.bytes = bytes;
  work.dtype = dtype;
  return {PyValue::tensor(std::move(shape), std::move(dtype)), work};
}

// Elementwise on one tensor: same shape.
OpOutcome unary(const OpCall& call) {
  const PyValue* x = first_tensor(call);
  if (!x || !x->shape) return unknown_tensor(call);
  const double n = numel(*x->shape);
  return with_work(*x->shape, x->dtype, n, 2 * n * dtype_bytes(x->dtype));
}

OpOutcome binary(const OpCall& call) {
  std::optional<Shape> shape = Shape{};
  double input_bytes = 0;
  std::string dtype;
  bool any_tensor = false;
  std::vector<const PyValue*> operands;
  for (const auto& a : call.args) operands.push_back(&a);
  for (const auto& [key, value] : call.kwargs) {
    if (key == "other" || key == "input") operands.push_back(&value);
  }
  for (const PyValue* a : operands) {
    if (a->is_tensor()) {
      any_tensor = true;
      if (dtype.empty()) dtype = a->dtype;
      if (!a->shape || !shape) {
        shape.reset();
        continue;
      }
      shape = broadcast(*shape, *a->shape);
      input_bytes += tensor_bytes(*a);
    } else if (!a->is_number()) {
      shape.reset();  // an operand we cannot see
    }
  }
  if (dtype.empty()) dtype = "float32";
  if (!any_tensor || !shape) return {PyValue::tensor(shape, dtype), std::nullopt};
  const double n = numel(*shape);
  return with_work(*shape, dtype, n, input_bytes + n * dtype_bytes(dtype));
}

std::optional<Shape> matmul_shape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  if (a.size() == 1 && b.size() == 1) return a[0] == b[0] ? std::optional<Shape>(Shape{}) : std::nullopt;
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  if (a2[a2.size() - 1] != b2[b2.size() - 2]) return std::nullopt;
  const auto batch = broadcast(Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2));
  if (!batch) return std::nullopt;
  Shape out = *batch;
  if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() > 1) out.push_back(b2[b2.size() - 1]);
  return out;
}

OpOutcome matmul(const OpInfo& op, const OpCall& call) {
  // addmm(input, m1, m2) / baddbmm(input, b1, b2): the product of the last two, plus the input.
  const bool with_bias = op.name == "addmm" || op.name == "baddbmm";
  const std::size_t first = with_bias ? 1 : 0;
  const PyValue* a = call.arg(first, with_bias ? "mat1" : "input");
  const PyValue* b = call.arg(first + 1, with_bias ? "mat2" : "other");
  if (op.name == "einsum" || !a || !b || !a->is_tensor() || !b->is_tensor() || !a->shape || !b->shape) return unknown_tensor(call);
  const auto out = matmul_shape(*a->shape, *b->shape);
  if (!out) return unknown_tensor(call);
  const std::int64_t k = a->shape->back();
  double bytes = tensor_bytes(*a) + tensor_bytes(*b) + numel(*out) * dtype_bytes(a->dtype);
  double flops = 2.0 * numel(*out) * static_cast<double>(k);
  if (with_bias) {
    if (const PyValue* bias = call.arg(0, "input")) bytes += tensor_bytes(*bias);
    flops += numel(*out);
  }
  return with_work(*out, a->dtype, flops, bytes);
}

OpOutcome linear_function(const OpCall& call) {
  const PyValue* x = call.arg(0, "input");
  const PyValue* w = call.arg(1, "weight");
  const PyValue* b = call.arg(2, "bias");
  if (!x || !w || !x->shape || !w->shape || w->shape->size() != 2 || x->shape->empty()) return unknown_tensor(call);
  if (x->shape->back() != (*w->shape)[1]) return unknown_tensor(call);
  Shape out = *x->shape;
  out.back() = (*w->shape)[0];
  const double n = numel(out);
  double flops = 2.0 * n * static_cast<double>((*w->shape)[1]);
  double bytes = tensor_bytes(*x) + tensor_bytes(*w) + n * dtype_bytes(x->dtype);
  if (b && b->is_tensor()) {
    flops += n;
    bytes += tensor_bytes(*b);
  }
  return with_work(out, x->dtype, flops, bytes);
}

// Output length of a convolution or pooling window along one dimension.
std::int64_t window_out(std::int64_t length, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                        std::int64_t dilation, bool ceil_mode = false) {
  const std::int64_t span = length + 2 * padding - dilation * (kernel - 1) - 1;
  if (span < 0 || stride <= 0) return 0;
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

// The spatial dimensions a name ends with: "Conv2d" and "max_pool2d" are 2; 0 when none.
std::size_t spatial_dims(std::string_view name) {
  if (name.size() < 2 || name.back() != 'd') return 0;
  const char digit = name[name.size() - 2];
  return digit >= '1' && digit <= '3' ? static_cast<std::size_t>(digit - '0') : 0;
}

struct ConvGeometry {
  std::int64_t in_channels = 0, out_channels = 0, groups = 1;
  std::vector<std::int64_t> kernel, stride, padding, dilation, output_padding;
  bool transposed = false;
  bool bias = true;
  std::string padding_mode;  // "same" / "valid" when given as a string
};

OpOutcome convolution(const ConvGeometry& g, const PyValue& x) {
  const std::size_t d = g.kernel.size();
  if (!x.shape || x.shape->size() != d + 2 || (*x.shape)[1] != g.in_channels || g.groups <= 0) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
  Shape out{(*x.shape)[0], g.out_channels};
  for (std::size_t i = 0; i < d; ++i) {
    const std::int64_t length = (*x.shape)[2 + i];
    std::int64_t o = 0;
    if (g.transposed) {
      o = (length - 1) * g.stride[i] - 2 * g.padding[i] + g.dilation[i] * (g.kernel[i] - 1) + g.output_padding[i] + 1;
    } else if (g.padding_mode == "same") {
      o = length;
    } else {
      o = window_out(length, g.kernel[i], g.stride[i], g.padding_mode == "valid" ? 0 : g.padding[i], g.dilation[i]);
    }
    out.push_back(o);
  }
  const double window = std::accumulate(g.kernel.begin(), g.kernel.end(), 1.0, [](double a, std::int64_t b) { return a * static_cast<double>(b); });
  const double per_output = window * static_cast<double>(g.in_channels / g.groups);
  // A transposed convolution does the same multiply-adds as the forward one it inverts.
  const double macs = g.transposed ? numel(*x.shape) * window * static_cast<double>(g.out_channels / g.groups)
                                   : numel(out) * per_output;
  const double weights = static_cast<double>(g.in_channels) * static_cast<double>(g.out_channels / g.groups) * window;
  const int es = dtype_bytes(x.dtype);
  double flops = 2.0 * macs;
  double bytes = tensor_bytes(x) + (weights + numel(out)) * es;
  if (g.bias) {
    flops += numel(out);
    bytes += static_cast<double>(g.out_channels) * es;
  }
  return with_work(out, x.dtype, flops, bytes);
}

OpOutcome conv_layer(const LayerSpec& layer, const PyValue& x) {
  const std::string& t = layer.type;
  const bool transposed = t.rfind("ConvTranspose", 0) == 0;
  const std::size_t d = spatial_dims(t);
  if (d == 0) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
  const OpCall& c = layer.constructor;
  ConvGeometry g;
  g.transposed = transposed;
  const auto in = int_arg(c.arg(0, "in_channels"), -1), out = int_arg(c.arg(1, "out_channels"), -1);
  const auto kernel = ints(c.arg(2, "kernel_size"), d, -1);
  const auto stride = ints(c.arg(3, "stride"), d, 1);
  const PyValue* padding = c.arg(4, "padding");
  // ConvTranspose: (in, out, kernel, stride, padding, output_padding, groups, bias, dilation).
  const auto output_padding = transposed ? ints(c.arg(5, "output_padding"), d, 0) : std::optional<std::vector<std::int64_t>>(std::vector<std::int64_t>(d, 0));
  const auto dilation = ints(c.arg(transposed ? 8 : 5, "dilation"), d, 1);
  const auto groups = int_arg(c.arg(6, "groups"), 1);
  g.bias = bool_arg(c.arg(7, "bias"), true);
  if (padding && padding->kind == PyValue::Kind::String) {
    g.padding_mode = padding->text;
    g.padding.assign(d, 0);
  } else if (const auto p = ints(padding, d, 0)) {
    g.padding = *p;
  } else {
    return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
  }
  if (!in || !out || *in <= 0 || *out <= 0 || !kernel || (*kernel)[0] <= 0 || !stride || !dilation || !groups || !output_padding) {
    return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
  }
  g.in_channels = *in;
  g.out_channels = *out;
  g.kernel = *kernel;
  g.stride = *stride;
  g.dilation = *dilation;
  g.groups = *groups;
  g.output_padding = *output_padding;
  return convolution(g, x);
}

OpOutcome conv_function(const OpInfo& op, const OpCall& call) {
  const PyValue* x = call.arg(0, "input");
  const PyValue* w = call.arg(1, "weight");
  if (!x || !w || !x->shape || !w->shape || w->shape->size() < 3) return unknown_tensor(call);
  const std::size_t d = w->shape->size() - 2;
  const bool transposed = op.name.rfind("conv_transpose", 0) == 0;
  ConvGeometry g;
  g.transposed = transposed;
  const PyValue* b = call.arg(2, "bias");
  g.bias = b && b->is_tensor();
  const auto stride = ints(call.arg(3, "stride"), d, 1);
  const PyValue* padding = call.arg(4, "padding");
  const auto output_padding = transposed ? ints(call.arg(5, "output_padding"), d, 0) : std::optional<std::vector<std::int64_t>>(std::vector<std::int64_t>(d, 0));
  const auto groups = int_arg(call.arg(6, "groups"), 1);
  const auto dilation = ints(call.arg(transposed ? 7 : 5, "dilation"), d, 1);
  if (padding && padding->kind == PyValue::Kind::String) {
    g.padding_mode = padding->text;
    g.padding.assign(d, 0);
  } else if (const auto p = ints(padding, d, 0)) {
    g.padding = *p;
  } else {
    return unknown_tensor(call);
  }
  if (!stride || !dilation || !groups || !output_padding || *groups <= 0) return unknown_tensor(call);
  g.groups = *groups;
  g.stride = *stride;
  g.dilation = *dilation;
  g.output_padding = *output_padding;
  g.kernel.assign(w->shape->begin() + 2, w->shape->end());
  g.in_channels = transposed ? (*w->shape)[0] : (*w->shape)[1] * g.groups;
  g.out_channels = transposed ? (*w->shape)[1] * g.groups : (*w->shape)[0];
  return convolution(g, *x);
}

// The dims a reduction runs over (all when none is given).
std::optional<std::vector<std::size_t>> reduction_dims(const PyValue* dim, std::size_t rank) {
  std::vector<std::size_t> out;
  if (!dim || dim->kind == PyValue::Kind::None) {
    for (std::size_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  const auto dims = dim->as_shape();
  if (!dims) return std::nullopt;
  for (const auto d : *dims) {
    const auto n = normalize_dim(d, rank);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

OpOutcome reduction(const OpInfo& op, const OpCall& call) {
  const PyValue* x = first_tensor(call);
  if (!x || !x->shape) return unknown_tensor(call);
  const bool norm = op.name == "norm";
  const PyValue* dim = call.arg(norm ? 2 : 1, "dim");
  if (op.name == "logsumexp" || op.name == "var" || op.name == "std") dim = call.arg(1, "dim");
  const bool keepdim = bool_arg(call.arg(norm ? 3 : 2, "keepdim"), false);
  const auto dims = reduction_dims(dim, x->shape->size());
  if (!dims) return unknown_tensor(call);
  Shape out;
  for (std::size_t i = 0; i < x->shape->size(); ++i) {
    if (std::find(dims->begin(), dims->end(), i) == dims->end()) out.push_back((*x->shape)[i]);
    else if (keepdim) out.push_back(1);
  }
  const bool indices = op.name == "argmax" || op.name == "argmin";
  std::string dtype = indices ? "int64" : x->dtype;
  const double n = numel(*x->shape);
  OpOutcome r = with_work(out, dtype, n, tensor_bytes(*x) + numel(out) * dtype_bytes(dtype));
  // max / min with a dim return (values, indices).
  if ((op.name == "max" || op.name == "min") && dim && dim->kind != PyValue::Kind::None) {
    PyValue values = r.result;
    PyValue idx = PyValue::tensor(out, "int64");
    r.result = PyValue::sequence({values, idx});
  }
  return r;
}

OpOutcome softmax_like(const OpCall& call) {
  const PyValue* x = first_tensor(call);
  if (!x || !x->shape) return unknown_tensor(call);
  const double n = numel(*x->shape);
  return with_work(*x->shape, x->dtype, 5 * n, 2 * n * dtype_bytes(x->dtype));
}

OpOutcome norm(const OpCall& call) {
  const PyValue* x = first_tensor(call);
  if (!x || !x->shape) return unknown_tensor(call);
  const double n = numel(*x->shape);
  return with_work(*x->shape, x->dtype, 5 * n, 2 * n * dtype_bytes(x->dtype));
}

// view / reshape with one -1 inferred.
std::optional<Shape> reshaped(const Shape& from, Shape to) {
  const double total = numel(from);
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
    } else {
      known *= to[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || static_cast<std::int64_t>(total) % known != 0) return std::nullopt;
    to[static_cast<std::size_t>(infer)] = static_cast<std::int64_t>(total) / known;
  } else if (static_cast<double>(known) != total) {
    return std::nullopt;
  }
  return to;
}

// The shape arguments of view/reshape/permute/expand/repeat: varargs or one sequence.
std::optional<Shape> shape_args(const OpCall& call, std::size_t from, std::string_view keyword) {
  if (call.args.size() == from + 1) return call.args[from].as_shape();
  if (call.args.size() > from + 1) {
    Shape out;
    for (std::size_t i = from; i < call.args.size(); ++i) {
      const auto v = call.args[i].as_int();
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
  if (const PyValue* k = call.keyword(keyword)) return k->as_shape();
  return std::nullopt;
}

OpOutcome view(const OpInfo& op, const OpCall& call) {
  const PyValue* x = call.args.empty() ? nullptr : &call.args[0];
  if (!x || !x->is_tensor() || !x->shape) return unknown_tensor(call);
  const Shape& s = *x->shape;
  std::optional<Shape> out;
  const std::string_view n = op.name;
  if (n == "view" || n == "reshape") {
    if (call.args.size() == 2 && call.args[1].kind == PyValue::Kind::Dtype) return unknown_tensor(call);
    if (auto to = shape_args(call, 1, "shape")) out = reshaped(s, *to);
  } else if (n == "flatten") {
    const auto start = normalize_dim(int_arg(call.arg(1, "start_dim"), 0).value_or(0), s.size());
    const auto end = normalize_dim(int_arg(call.arg(2, "end_dim"), -1).value_or(-1), s.size());
    if (s.empty()) out = Shape{1};
    else if (start && end && *start <= *end) {
      Shape r(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(*start));
      std::int64_t m = 1;
      for (std::size_t i = *start; i <= *end; ++i) m *= s[i];
      r.push_back(m);
      r.insert(r.end(), s.begin() + static_cast<std::ptrdiff_t>(*end) + 1, s.end());
      out = r;
    }
  } else if (n == "permute") {
    if (auto dims = shape_args(call, 1, "dims"); dims && dims->size() == s.size()) {
      Shape r;
      for (const auto d : *dims) {
        const auto i = normalize_dim(d, s.size());
        if (!i) break;
        r.push_back(s[*i]);
      }
      if (r.size() == s.size()) out = r;
    }
  } else if (n == "transpose") {
    const auto a = normalize_dim(int_arg(call.arg(1, "dim0"), 0).value_or(0), s.size());
    const auto b = normalize_dim(int_arg(call.arg(2, "dim1"), 1).value_or(1), s.size());
    if (a && b) {
      Shape r = s;
      std::swap(r[*a], r[*b]);
      out = r;
    }
  } else if (n == "t") {
    Shape r = s;
    if (r.size() == 2) std::swap(r[0], r[1]);
    out = r;
  } else if (n == "unsqueeze") {
    if (const auto d = int_arg(call.arg(1, "dim"), 0)) {
      const std::int64_t rank = static_cast<std::int64_t>(s.size()) + 1;
      const std::int64_t at = *d < 0 ? *d + rank : *d;
      if (at >= 0 && at < rank) {
        Shape r = s;
        r.insert(r.begin() + at, 1);
        out = r;
      }
    }
  } else if (n == "squeeze") {
    const PyValue* d = call.arg(1, "dim");
    Shape r;
    if (!d) {
      for (const auto v : s) {
        if (v != 1) r.push_back(v);
      }
      out = r;
    } else if (const auto i = d->as_int(); i && normalize_dim(*i, s.size())) {
      r = s;
      const std::size_t at = *normalize_dim(*i, s.size());
      if (r[at] == 1) r.erase(r.begin() + static_cast<std::ptrdiff_t>(at));
      out = r;
    }
  } else if (n == "expand") {
    if (auto to = shape_args(call, 1, "size"); to && to->size() >= s.size()) {
      for (std::size_t i = 0; i < to->size(); ++i) {
        const std::size_t from_end = to->size() - 1 - i;
        if ((*to)[i] == -1 && from_end < s.size()) (*to)[i] = s[s.size() - 1 - from_end];
      }
      out = to;
    }
  } else if (n == "expand_as" || n == "identity") {
    const PyValue* other = call.arg(1, "other");
    out = n == "identity" ? x->shape : other && other->shape ? other->shape : std::nullopt;
  }
  if (!out) return unknown_tensor(call);
  Work none;
  none.dtype = x->dtype;
  return {PyValue::tensor(out, x->dtype), none};
}

// torch.diag: a vector's n x n matrix (n + |k| square off the main
// diagonal), or a matrix's k-th diagonal as a vector.
OpOutcome diag(const PyValue& x, const OpCall& call) {
  const auto k = int_arg(call.arg(1, "diagonal"), 0);
  if (!k) return unknown_tensor(call);
  const std::int64_t offset = *k < 0 ? -*k : *k;
  Shape out;
  if (x.shape->size() == 1) {
    out = {(*x.shape)[0] + offset, (*x.shape)[0] + offset};
  } else if (x.shape->size() == 2) {
    const std::int64_t rows = (*x.shape)[0], columns = (*x.shape)[1];
    const std::int64_t length = *k >= 0 ? std::min(rows, columns - *k) : std::min(rows + *k, columns);
    out = {std::max<std::int64_t>(length, 0)};
  } else {
    return unknown_tensor(call);
  }
  return with_work(out, x.dtype, 0, tensor_bytes(x) + numel(out) * dtype_bytes(x.dtype));
}

OpOutcome copy(const OpInfo& op, const OpCall& call) {
  const std::string_view n = op.name;
  if (n == "cat" || n == "concat" || n == "stack") {
    const PyValue* seq = call.arg(0, "tensors");
    if (!seq || seq->kind != PyValue::Kind::Sequence || seq->items.empty()) return unknown_tensor(call);
    const auto dim = int_arg(call.arg(1, "dim"), 0);
    const PyValue& first = seq->items[0];
    if (!dim || !first.is_tensor() || !first.shape) return unknown_tensor(call);
    Shape out = *first.shape;
    if (n == "stack") {
      const std::int64_t rank = static_cast<std::int64_t>(out.size()) + 1;
      const std::int64_t at = *dim < 0 ? *dim + rank : *dim;
      if (at < 0 || at >= rank) return unknown_tensor(call);
      out.insert(out.begin() + at, static_cast<std::int64_t>(seq->items.size()));
    } else {
      const auto at = normalize_dim(*dim, out.size());
      if (!at) return unknown_tensor(call);
      out[*at] = 0;
      for (const auto& item : seq->items) {
        if (!item.shape || item.shape->size() != first.shape->size()) return unknown_tensor(call);
        out[*at] += (*item.shape)[*at];
      }
    }
    const double bytes = numel(out) * dtype_bytes(first.dtype);
    return with_work(out, first.dtype, 0, 2 * bytes);
  }
  const PyValue* x = call.args.empty() ? nullptr : &call.args[0];
  if (!x || !x->is_tensor() || !x->shape) return unknown_tensor(call);
  if (n == "diag") return diag(*x, call);
  std::string dtype = x->dtype;
  if (n == "float") dtype = "float32";
  else if (n == "half") dtype = "float16";
  else if (n == "bfloat16") dtype = "bfloat16";
  else if (n == "double") dtype = "float64";
  Shape out = *x->shape;
  if (n == "repeat") {
    const auto times = shape_args(call, 1, "repeats");
    if (!times || times->size() < out.size()) return unknown_tensor(call);
    Shape r(*times);
    for (std::size_t i = 0; i < out.size(); ++i) r[r.size() - out.size() + i] *= out[i];
    out = r;
  } else if (n == "pad") {
    const PyValue* pad = call.arg(1, "pad");
    const auto p = pad ? pad->as_shape() : std::nullopt;
    if (!p || p->size() % 2 != 0 || p->size() / 2 > out.size()) return unknown_tensor(call);
    for (std::size_t i = 0; i < p->size() / 2; ++i) out[out.size() - 1 - i] += (*p)[2 * i] + (*p)[2 * i + 1];
  }
  const double bytes = numel(*x->shape) * dtype_bytes(x->dtype) + numel(out) * dtype_bytes(dtype);
  return with_work(out, dtype, 0, bytes);
}

OpOutcome pool_with(const std::string& name, const PyValue& x, const OpCall& args, std::size_t offset) {
  // (kernel_size, stride=None, padding=0, [dilation], ceil_mode) after `offset` leading arguments,
  // or output_size for adaptive pooling.
  const std::size_t d = spatial_dims(name);
  if (!x.shape || d == 0 || x.shape->size() < d) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
  Shape out(x.shape->begin(), x.shape->end() - static_cast<std::ptrdiff_t>(d));
  double window = 1;
  if (name.rfind("adaptive", 0) == 0) {
    const auto size = ints(args.arg(offset, "output_size"), d, -1);
    if (!size) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
    for (std::size_t i = 0; i < d; ++i) {
      const std::int64_t in = (*x.shape)[x.shape->size() - d + i];
      const std::int64_t o = (*size)[i] < 0 ? in : (*size)[i];
      out.push_back(o);
      window *= o > 0 ? static_cast<double>((in + o - 1) / o) : 1.0;
    }
  } else {
    const auto kernel = ints(args.arg(offset, "kernel_size"), d, -1);
    if (!kernel || (*kernel)[0] <= 0) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
    const PyValue* stride_value = args.arg(offset + 1, "stride");
    const auto stride = stride_value && stride_value->kind != PyValue::Kind::None ? ints(stride_value, d, 1) : kernel;
    const auto padding = ints(args.arg(offset + 2, "padding"), d, 0);
    const bool max = name.rfind("max", 0) == 0;
    const auto dilation = max ? ints(args.arg(offset + 3, "dilation"), d, 1) : std::optional<std::vector<std::int64_t>>(std::vector<std::int64_t>(d, 1));
    const bool ceil_mode = bool_arg(args.arg(max ? offset + 5 : offset + 3, "ceil_mode"), false);
    if (!stride || !padding || !dilation) return {PyValue::tensor(std::nullopt, x.dtype), std::nullopt};
    for (std::size_t i = 0; i < d; ++i) {
      out.push_back(window_out((*x.shape)[x.shape->size() - d + i], (*kernel)[i], (*stride)[i], (*padding)[i], (*dilation)[i], ceil_mode));
      window *= static_cast<double>((*kernel)[i]);
    }
  }
  const double n = numel(out);
  return with_work(out, x.dtype, n * window, tensor_bytes(x) + n * dtype_bytes(x.dtype));
}

// scaled_dot_product_attention(q, k, v): q's shape with v's last dimension;
// two matmuls of (Lq x D) by (D x Lk) and (Lq x Lk) by (Lk x Dv) per batch and head.
OpOutcome attention(const OpCall& call) {
  const PyValue* q = call.arg(0, "query");
  const PyValue* k = call.arg(1, "key");
  const PyValue* v = call.arg(2, "value");
  if (!q || !k || !v || !q->shape || !k->shape || !v->shape || q->shape->size() < 2 || k->shape->size() < 2 || v->shape->empty()) {
    return unknown_tensor(call);
  }
  Shape out = *q->shape;
  out.back() = v->shape->back();
  const double rows = numel(*q->shape) / static_cast<double>(q->shape->back());  // batch x heads x Lq
  const double lk = static_cast<double>((*k->shape)[k->shape->size() - 2]);
  const double flops = 2.0 * rows * lk * static_cast<double>(q->shape->back()) + 2.0 * rows * lk * static_cast<double>(v->shape->back());
  const double bytes = tensor_bytes(*q) + tensor_bytes(*k) + tensor_bytes(*v) + numel(out) * dtype_bytes(q->dtype);
  return with_work(out, q->dtype, flops, bytes);
}

OpOutcome creation(const OpCall& call) {
  const PyValue* like = first_tensor(call);
  if (!like || !like->shape) return unknown_tensor(call);
  const double n = numel(*like->shape);
  return with_work(*like->shape, like->dtype, 0, n * dtype_bytes(like->dtype));
}

}  // namespace

OpOutcome apply_op(const OpInfo& op, const OpCall& call) {
  switch (op.category) {
    case OpCategory::Unary: return unary(call);
    case OpCategory::Binary: return binary(call);
    case OpCategory::Reduction: return reduction(op, call);
    case OpCategory::Scan: return unary(call);
    case OpCategory::Softmax: return softmax_like(call);
    case OpCategory::Matmul: return matmul(op, call);
    case OpCategory::Linear: return linear_function(call);
    case OpCategory::Conv: return conv_function(op, call);
    case OpCategory::Norm: return norm(call);
    case OpCategory::Pool: {
      const PyValue* x = call.arg(0, "input");
      if (!x || !x->is_tensor()) return unknown_tensor(call);
      return pool_with(std::string(op.name), *x, call, 1);
    }
    case OpCategory::View: return view(op, call);
    case OpCategory::Copy: return copy(op, call);
    case OpCategory::Creation: return creation(call);
    case OpCategory::Attention: return attention(call);
    case OpCategory::Other: return unknown_tensor(call);
  }
  return unknown_tensor(call);
}

OpOutcome apply_layer(const LayerSpec& layer, const OpCall& call) {
  const PyValue* x = call.args.empty() ? nullptr : &call.args[0];
  const auto op = layer_op(layer.type);
  if (!op || !x || !x->is_tensor()) return unknown_tensor(call);
  const OpCall& c = layer.constructor;
  switch (op->category) {
    case OpCategory::Linear: {
      const auto in = int_arg(c.arg(0, "in_features"), -1), out = int_arg(c.arg(1, "out_features"), -1);
      if (!in || !out || *in <= 0 || *out <= 0) return unknown_tensor(call);
      OpCall f;
      f.args.push_back(*x);
      f.args.push_back(PyValue::tensor(Shape{*out, *in}, x->dtype));
      if (bool_arg(c.arg(2, "bias"), true)) f.args.push_back(PyValue::tensor(Shape{*out}, x->dtype));
      return linear_function(f);
    }
    case OpCategory::Conv: return conv_layer(layer, *x);
    case OpCategory::Pool: return pool_with(std::string(op->name), *x, c, 0);
    case OpCategory::Softmax: return softmax_like(call);
    case OpCategory::Norm: return norm(call);
    case OpCategory::Unary: return unary(call);
    case OpCategory::View: {
      if (op->name == "flatten") {
        OpCall f;
        f.args = {*x, PyValue::of_int(int_arg(c.arg(0, "start_dim"), 1).value_or(1)), PyValue::of_int(int_arg(c.arg(1, "end_dim"), -1).value_or(-1))};
        return view(*op, f);
      }
      return view(*op, call);
    }
    default: break;
  }
  if (op->name == "embedding") {
    const auto dim = int_arg(c.arg(1, "embedding_dim"), -1);
    if (!dim || *dim <= 0 || !x->shape) return {PyValue::tensor(std::nullopt, "float32"), std::nullopt};
    Shape out = *x->shape;
    out.push_back(*dim);
    return with_work(out, "float32", 0, tensor_bytes(*x) + 2 * numel(out) * 4);
  }
  return unknown_tensor(call);
}

}  // namespace hiera::engine::analysis
