#include "engine/propose/recipes/kernels/elementwise_program.h"

#include <algorithm>

#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string value_type(const std::string& dtype) { return dtype == "bool" ? "bool" : "float"; }

// The leaf's element as the kernel computes with it.
std::string converted(const std::string& dtype, const std::string& element) {
  return dtype == "bool" ? element : "static_cast<float>(" + element + ")";
}

}  // namespace

ElementwiseProgram::ElementwiseProgram(const graph::OpGraph& graph, std::set<std::string> members,
                                       ProgramOptions options)
    : graph_(graph), members_(std::move(members)), options_(std::move(options)) {}

void ElementwiseProgram::set_custom(const std::string& node, Custom custom) { custom_[node] = std::move(custom); }

void ElementwiseProgram::bind(const std::string& node, const std::string& expression) { values_[node] = expression; }

std::string ElementwiseProgram::define(const std::string& expression, bool boolean) {
  const std::string name = "t" + std::to_string(temporaries_++);
  body_.push_back(std::string("const ") + (boolean ? "bool " : "float ") + name + " = " + expression + ";");
  return name;
}

std::string ElementwiseProgram::value(const std::string& name) {
  if (const auto it = values_.find(name); it != values_.end()) return it->second;
  const graph::Node* node = graph_.find(name);
  if (!node) throw Unsupported("no node named " + name);
  if (!members_.count(name)) {
    if (!node->meta) throw Unsupported(name + " is not a tensor");
    if (const auto rotated = rotation(*node)) {
      values_[name] = *rotated;
      return *rotated;
    }
    const std::string loaded = load(name, node->meta->dtype, node->meta->shape, true);
    values_[name] = loaded;
    return loaded;
  }
  if (computing_.count(name)) throw Unsupported(name + " depends on itself");
  computing_.insert(name);
  std::string result;
  bool boolean = false;
  if (const auto custom = custom_.find(name); custom != custom_.end()) {
    result = define(custom->second(*this, *node));
  } else {
    const auto formula = elementwise_formula(*node, graph_);
    if (!formula) throw Unsupported(name + ": " + node->kind + " is not an elementwise op");
    std::vector<std::string> operands;
    for (std::size_t k = 0; k < formula->operands.size(); ++k) {
      const FormulaOperand& operand = formula->operands[k];
      switch (operand.kind) {
        case FormulaOperand::Kind::Number:
          operands.push_back(float_literal(operand.number));
          break;
        case FormulaOperand::Kind::ModuleTensor:
          operands.push_back(load(operand.python, operand.dtype, operand.broadcast_shape, false));
          break;
        case FormulaOperand::Kind::Node: {
          const graph::Node* source = graph_.find(operand.node);
          if (!source || !source->meta) throw Unsupported(name + ": operand " + operand.node + " is not a tensor");
          const bool member = members_.count(operand.node) > 0;
          if (k == 0 && formula->in_place && !member &&
              std::any_of(source->users.begin(), source->users.end(), [&](const std::string& u) { return u != name; }))
            throw Unsupported(name + " writes into " + operand.node + " in place, which other nodes read");
          if (!operand.broadcast_shape.empty()) {
            if (member) throw Unsupported(name + ": a per-channel operand computed inside the group");
            operands.push_back(load(operand.node, source->meta->dtype, operand.broadcast_shape, false));
          } else {
            operands.push_back(value(operand.node));
          }
          break;
        }
      }
    }
    helpers_.insert(formula->helpers.begin(), formula->helpers.end());
    cast_dtypes_.insert(formula->dtypes.begin(), formula->dtypes.end());
    boolean = formula->boolean;
    result = define(expand_formula(*formula, operands), boolean);
  }
  // torch stores every intermediate of a half or bfloat16 graph in that type:
  // rounded here too, the kernel reproduces eager's values, not just its formulas.
  const bool reduced = !boolean && node->meta && (node->meta->dtype == "float16" || node->meta->dtype == "bfloat16");
  if (reduced && !options_.round_intermediates) ++unrounded_;
  if (reduced && options_.round_intermediates) {
    const std::string round = node->meta->dtype == "float16" ? "hiera_round_half" : "hiera_round_bfloat16";
    helpers_.insert(round);
    cast_dtypes_.insert(node->meta->dtype);
    result = define(round + "(" + result + ")");
  }
  computing_.erase(name);
  values_[name] = result;
  return result;
}

std::string ElementwiseProgram::load(const std::string& python, const std::string& dtype,
                                     const std::vector<std::int64_t>& shape, bool is_node) {
  const std::string key = python + "|" + shape_text(shape);
  if (const auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  if (!kernel_dtype(dtype)) throw Unsupported(python + " has dtype " + dtype + ", which the kernels do not handle");
  Leaf leaf;
  leaf.python = python;
  leaf.dtype = dtype;
  leaf.shape = shape;
  leaf.is_node = is_node;
  leaf.pointer = options_.prefix + std::to_string(leaves_.size());
  const std::string index = offset(leaf);
  // hiera_mod(i, s, s_div): the innermost memory dimensions, stride 1.
  if (options_.lane_packs > 0 && options_.full_size_by_value && !options_.index64 && !leaf.full_size &&
      dtype != "bool") {
    for (const auto& size : sizes_)
      if (index == "hiera_mod(i, " + size.name + ", " + size.name + "_div)") leaf.lane_size = size.name;
  }
  leaves_.push_back(leaf);
  const std::string name = leaf.pointer + "_v";
  if (!by_value(leaf))
    body_.push_back("const " + value_type(dtype) + " " + name + " = " + converted(dtype, leaf.pointer + "[" + index + "]") + ";");
  loaded_[key] = name;
  return name;
}

namespace {

// One piece of a rotation's cat: `source`[..., start:start + width], negated or not.
struct RotationPiece {
  const graph::Node* source = nullptr;
  std::int64_t start = 0, width = 0;
  bool negated = false;
  std::vector<std::string> nodes;  // the getitem and the neg
};

// x[..., a:b] (or x[:, :, a:b] with every other dimension whole) of a tensor as wide as `row`.
std::optional<RotationPiece> last_dim_slice(const graph::OpGraph& graph, const graph::Node& node, std::int64_t row) {
  if (node.kind != "getitem" || node.args.size() != 2 || !node.meta || node.meta->shape.empty()) return std::nullopt;
  const graph::Node* source = node.args[0].is_node() ? graph.find(node.args[0].node) : nullptr;
  if (!source || !source->meta || source->meta->shape.size() != node.meta->shape.size() ||
      source->meta->shape.back() != row)
    return std::nullopt;
  const graph::Arg& index = node.args[1];
  const graph::Arg* last = nullptr;
  if (index.kind == graph::Arg::Kind::Slice && node.meta->shape.size() == 1) {
    last = &index;
  } else if (index.kind == graph::Arg::Kind::List && !index.items.empty() &&
             index.items.back().kind == graph::Arg::Kind::Slice) {
    last = &index.items.back();
    const bool ellipsis = index.items.size() == 2 && index.items[0].kind == graph::Arg::Kind::Ellipsis;
    bool whole = index.items.size() == node.meta->shape.size();
    for (std::size_t k = 0; whole && k + 1 < index.items.size(); ++k) {
      const auto& item = index.items[k];
      whole = item.kind == graph::Arg::Kind::Slice &&
              std::all_of(item.items.begin(), item.items.end(),
                          [](const graph::Arg& a) { return a.kind == graph::Arg::Kind::None; });
    }
    if (!ellipsis && !whole) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const graph::Arg& start = last->items[0];
  const graph::Arg& stop = last->items[1];
  const graph::Arg& step = last->items[2];
  if (step.kind != graph::Arg::Kind::None && !(step.is_number() && step.number == 1.0)) return std::nullopt;
  // The bounds may be computed from the shape (x.shape[-1] // 2): the captured width places them.
  RotationPiece piece;
  piece.source = source;
  piece.width = node.meta->shape.back();
  if (start.is_number()) {
    piece.start = static_cast<std::int64_t>(start.number);
    if (piece.start < 0) piece.start += row;
  } else if (start.kind == graph::Arg::Kind::None) {
    piece.start = 0;
  } else if (stop.kind == graph::Arg::Kind::None) {
    piece.start = row - piece.width;
  } else {
    return std::nullopt;
  }
  if (piece.start < 0 || piece.width <= 0 || piece.start + piece.width > row) return std::nullopt;
  piece.nodes.push_back(node.name);
  return piece;
}

}  // namespace

std::optional<std::string> ElementwiseProgram::rotation(const graph::Node& cat) {
  if (!options_.rotations || cat.kind != "cat" || !options_.memory_order.empty() || !cat.meta || cat.meta->shape != options_.shape ||
      cat.meta->shape.empty())
    return std::nullopt;
  const std::size_t rank = cat.meta->shape.size();
  const graph::Arg* tensors = argument(cat, 0, "tensors");
  const auto dim = number_argument(cat, 1, "dim").value_or(0.0);
  if (!tensors || tensors->kind != graph::Arg::Kind::List || tensors->items.size() < 2) return std::nullopt;
  if (static_cast<std::int64_t>(dim) != -1 && static_cast<std::size_t>(dim) != rank - 1) return std::nullopt;
  const std::int64_t row = cat.meta->shape.back();
  std::vector<RotationPiece> pieces;
  for (const auto& item : tensors->items) {
    const graph::Node* node = item.is_node() ? graph_.find(item.node) : nullptr;
    if (!node) return std::nullopt;
    bool negated = false;
    std::string neg;
    if (node->kind == "neg" && node->args.size() == 1 && node->args[0].is_node()) {
      negated = true;
      neg = node->name;
      node = graph_.find(node->args[0].node);
      if (!node) return std::nullopt;
    }
    auto piece = last_dim_slice(graph_, *node, row);
    if (!piece || (!pieces.empty() && piece->source != pieces.front().source)) return std::nullopt;
    piece->negated = negated;
    if (negated) piece->nodes.push_back(neg);
    pieces.push_back(*piece);
  }
  std::int64_t total = 0;
  for (const auto& piece : pieces) total += piece.width;
  const graph::Node& source = *pieces.front().source;
  if (total != row || source.meta->shape != options_.shape || !kernel_dtype(source.meta->dtype) ||
      source.meta->dtype == "bool")
    return std::nullopt;

  Leaf leaf;
  leaf.python = source.name;
  leaf.dtype = source.meta->dtype;
  leaf.shape = source.meta->shape;
  leaf.pointer = options_.prefix + std::to_string(leaves_.size());
  leaf.gathered = true;
  leaves_.push_back(leaf);
  // Piece k holds columns [offset, offset + width) of the row and reads the source at column start + (c - offset).
  const std::string index_t = index_type();
  const std::string n = std::to_string(temporaries_++);
  const std::string c = "c" + n, at = "at" + n, v = "g" + n;
  const std::string rows = std::to_string(row);
  body_.push_back("const " + index_t + " " + c + " = i % " + rows + ";");
  std::string index, value;
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const auto& piece = pieces[k];
    const std::int64_t shift = piece.start - offset;
    const std::string at_piece = shift == 0 ? "i" : shift > 0 ? "i + " + std::to_string(shift) : "i - " + std::to_string(-shift);
    const std::string value_piece = piece.negated ? "-" + v : v;
    offset += piece.width;
    if (k + 1 == pieces.size()) {
      index += at_piece;
      value += value_piece;
    } else {
      index += c + " < " + std::to_string(offset) + " ? " + at_piece + " : ";
      value += c + " < " + std::to_string(offset) + " ? " + value_piece + " : ";
    }
    absorbed_.insert(piece.nodes.begin(), piece.nodes.end());
  }
  absorbed_.insert(cat.name);
  body_.push_back("const " + index_t + " " + at + " = " + index + ";");
  body_.push_back("const float " + v + " = " + converted(leaf.dtype, leaf.pointer + "[" + at + "]") + ";");
  checks_.push_back("assert " + source.name + ".shape[-1] == " + rows + ", \"the rotation of " + source.name +
                    " was generated for rows of " + rows + "\"");
  return define(value);
}

std::string ElementwiseProgram::size_argument(const std::string& python) const {
  return options_.index64 ? "nvrtc_runtime.int64(" + python + ")" : python;
}

std::string ElementwiseProgram::size_parameter(const std::string& name, const std::string& python, bool divisor) {
  for (auto& size : sizes_) {
    if (size.python != python) continue;
    size.divisor = size.divisor || divisor;
    return size.name;
  }
  sizes_.push_back({name, python, divisor});
  return name;
}

std::string ElementwiseProgram::divide(const std::string& term, const std::string& size) {
  if (options_.index64) return "(" + term + " / " + size + ")";
  helpers_.insert("hiera_div");
  return "hiera_div(" + term + ", " + size + "_div)";
}

std::string ElementwiseProgram::remainder(const std::string& term, const std::string& size) {
  if (!options_.index64) {
    helpers_.insert("hiera_div");
    helpers_.insert("hiera_mod");
  }
  return remainder_text(term, size);
}

std::string ElementwiseProgram::remainder_text(const std::string& term, const std::string& size) const {
  if (options_.index64) return "(" + term + " % " + size + ")";
  return "hiera_mod(" + term + ", " + size + ", " + size + "_div)";
}

// The element function's sizes after its leaves: declarations or the names that pass them.
std::string ElementwiseProgram::size_parameters(bool declarations) const {
  std::string out;
  for (const auto& size : sizes_) {
    out += ", " + (declarations ? "const " + index_type() + " " : "") + size.name;
    if (size.divisor && !options_.index64)
      out += ", " + std::string(declarations ? "const unsigned long long " : "") + size.name + "_div";
  }
  return out;
}

std::string ElementwiseProgram::offset(Leaf& leaf) {
  const auto& logical = options_.shape;
  const std::size_t n = logical.size(), m = leaf.shape.size();
  if (m > n) throw Unsupported(leaf.python + " " + shape_text(leaf.shape) + " has more dimensions than the output " + shape_text(logical));
  const std::size_t pad = n - m;
  std::vector<std::int64_t> padded(pad, 1);
  padded.insert(padded.end(), leaf.shape.begin(), leaf.shape.end());
  std::int64_t elements = 1;
  for (std::size_t d = 0; d < n; ++d) {
    if (padded[d] != 1 && padded[d] != logical[d])
      throw Unsupported(leaf.python + " " + shape_text(leaf.shape) + " does not broadcast to " + shape_text(logical));
    elements *= padded[d];
  }
  if (elements == 1) return "0";
  if (padded == logical) {
    leaf.full_size = true;
    return "i";
  }
  if (!options_.channel_index.empty() && options_.memory_order.empty() && n >= 2 && padded[1] == elements &&
      logical[1] == elements)
    return options_.channel_index;  // contiguous, and only dimension 1 is not broadcast
  // The index space and the leaf's dimensions in memory order; the leaf is
  // contiguous in its own order, which must be the same order.
  std::vector<std::size_t> order = options_.memory_order;
  const bool reordered = !order.empty();
  if (!reordered)
    for (std::size_t d = 0; d < n; ++d) order.push_back(d);
  if (order.size() != n) throw Unsupported("the memory order has " + std::to_string(order.size()) + " dimensions, the output " + std::to_string(n));
  std::vector<std::int64_t> space(n), dims(n);
  std::size_t previous = 0;
  bool any = false;
  for (std::size_t k = 0; k < n; ++k) {
    space[k] = logical[order[k]];
    dims[k] = padded[order[k]];
    if (dims[k] == 1) continue;
    if (any && order[k] < previous)
      throw Unsupported(leaf.python + " " + shape_text(leaf.shape) + " lies in memory in another order than the output");
    previous = order[k];
    any = true;
  }
  // The leaf's elements after memory position b, as Python.
  const auto leaf_inner = [&](std::size_t b) {
    if (!reordered) return leaf.python + ".shape[" + std::to_string(b - pad) + ":].numel()";
    std::string product;
    for (std::size_t k = b; k < n; ++k) {
      if (order[k] < pad) continue;
      product += (product.empty() ? "" : " * ") + leaf.python + ".shape[" + std::to_string(order[k] - pad) + "]";
    }
    return product.empty() ? std::string("1") : "(" + product + ")";
  };
  // Runs of dimensions the leaf does not broadcast (size-1 dimensions of the
  // index space join either side: they change no product).
  std::vector<bool> kept(n);
  for (std::size_t d = 0; d < n; ++d) kept[d] = dims[d] == space[d];
  std::vector<std::string> terms;
  for (std::size_t a = 0; a < n;) {
    if (!kept[a]) {
      ++a;
      continue;
    }
    std::size_t b = a;
    bool has_extent = false;
    for (; b < n && kept[b]; ++b) has_extent = has_extent || space[b] != 1;
    if (has_extent) {
      const std::string run = std::to_string(terms.size());
      std::string term = "i";
      if (b < n)
        term = divide(term, size_parameter(leaf.pointer + "_inner" + run,
                                           options_.shape_python + "[" + std::to_string(b) + ":].numel()", true));
      if (a > 0)
        term = remainder(term, size_parameter(leaf.pointer + "_size" + run,
                                              options_.shape_python + "[" + std::to_string(a) + ":" +
                                                  std::to_string(b) + "].numel()",
                                              true));
      std::int64_t stride = 1;
      for (std::size_t d = b; d < n; ++d) stride *= dims[d];
      if (stride != 1) {
        if (leaf.is_node) {
          term += " * " + size_parameter(leaf.pointer + "_stride" + run, leaf_inner(b), false);
        } else {
          term += " * " + std::to_string(stride);
        }
      }
      terms.push_back(term);
    }
    a = b;
  }
  std::string out;
  for (std::size_t t = 0; t < terms.size(); ++t) out += (t ? " + " : "") + terms[t];
  return out.empty() ? "0" : out;
}

std::vector<std::string> ElementwiseProgram::dtypes() const {
  std::vector<std::string> out(cast_dtypes_.begin(), cast_dtypes_.end());
  for (const auto& leaf : leaves_)
    if (std::find(out.begin(), out.end(), leaf.dtype) == out.end()) out.push_back(leaf.dtype);
  return out;
}

bool ElementwiseProgram::by_value(const Leaf& leaf) const {
  return options_.full_size_by_value && (leaf.full_size || !leaf.lane_size.empty());
}

std::vector<std::pair<const Leaf*, std::string>> ElementwiseProgram::lane_packed() const {
  std::vector<std::pair<const Leaf*, std::string>> out;
  for (const Leaf& leaf : leaves_) {
    if (leaf.lane_size.empty()) continue;
    for (const auto& size : sizes_)
      if (size.name == leaf.lane_size) out.emplace_back(&leaf, size.python);
  }
  return out;
}

std::string ElementwiseProgram::element_parameters() const {
  std::string out;
  for (const Leaf& leaf : leaves_) {
    if (by_value(leaf))
      out += ", const " + value_type(leaf.dtype) + " " + leaf.pointer + "_v";
    else
      out += ", const " + kernel_dtype(leaf.dtype)->cuda_type + "* __restrict__ " + leaf.pointer;
  }
  return out + size_parameters(true);
}

std::vector<KernelParameter> ElementwiseProgram::kernel_parameters() const {
  std::vector<KernelParameter> out;
  for (const Leaf& leaf : leaves_)
    out.push_back({"const " + kernel_dtype(leaf.dtype)->cuda_type + "* __restrict__ " + leaf.pointer, leaf.python, leaf.pointer});
  for (const auto& size : sizes_) {
    out.push_back({index_type() + " " + size.name, size_argument(size.python), ""});
    if (size.divisor && !options_.index64)
      out.push_back({"unsigned long long " + size.name + "_div", "nvrtc_runtime.uint64(_divider(" + size.python + "))", ""});
  }
  return out;
}

std::string ElementwiseProgram::element_arguments(const std::string& index) const {
  std::string out;
  for (const Leaf& leaf : leaves_) {
    if (by_value(leaf))
      out += ", " + converted(leaf.dtype, leaf.pointer + "[" + (leaf.full_size ? index : remainder_text(index, leaf.lane_size)) + "]");
    else
      out += ", " + leaf.pointer;
  }
  return out + size_parameters(false);
}

std::string ElementwiseProgram::lane_arguments(const std::string& lane) const {
  std::string out;
  for (const Leaf& leaf : leaves_) {
    if (by_value(leaf))
      out += ", " + converted(leaf.dtype, leaf.pointer + "_pack.v[" + lane + "]");
    else
      out += ", " + leaf.pointer;
  }
  return out + size_parameters(false);
}

std::string ElementwiseProgram::vector_loads(const std::string& vector_index) const {
  std::string out;
  for (const Leaf& leaf : leaves_) {
    if (!by_value(leaf)) continue;
    const std::string pack = "hiera_pack<" + kernel_dtype(leaf.dtype)->cuda_type + ">";
    // A lane-packed leaf: the pack holding element (first lane) % size, whole because size % VEC == 0.
    const std::string at =
        leaf.full_size ? vector_index
                       : remainder_text("static_cast<index_t>(" + vector_index + " * HIERA_VEC)", leaf.lane_size) + " / HIERA_VEC";
    if (!out.empty()) out += "\n    ";
    out += "const " + pack + " " + leaf.pointer + "_pack = reinterpret_cast<const " + pack + "*>(" + leaf.pointer +
           ")[" + at + "];";
  }
  return out;
}

std::vector<std::string> ElementwiseProgram::node_leaf_shapes() const {
  std::vector<std::string> out;
  for (const auto& leaf : leaves_)
    if (leaf.is_node) out.push_back(leaf.python + ".shape");
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
