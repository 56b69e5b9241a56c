#include "engine/graph/minimal_work.h"

#include "engine/common/dtype_bytes.h"

namespace hiera::engine::graph {

namespace {

bool is_product(const Node& node) {
  return (node.kind == "matmul" || node.kind == "bmm" || node.target == "torch.mm" || node.target == "mm" ||
          (node.op == "call_function" && node.target == "torch.einsum" && node.args.size() == 3)) &&
         node.args.size() >= 2;
}

// The operands of a product (einsum's come after its equation).
std::pair<const Node*, const Node*> product_operands(const OpGraph& graph, const Node& node) {
  const std::size_t first = node.target == "torch.einsum" ? 1 : 0;
  return {graph.producer(node.args[first]), graph.producer(node.args[first + 1])};
}

// Ops that leave which scores are kept as they are: a cast, a scale by a number, eval dropout, a view that keeps the
// last two dims, and the softmax itself (masked scores stay masked: their probabilities are zero).
bool keeps_the_mask(const Node& node) {
  static const char* const kinds[] = {"to", "float", "half", "bfloat16", "type_as", "contiguous", "dropout",
                                      "mul", "div", "softmax", "clone"};
  for (const char* k : kinds) {
    if (node.kind == k || node.target == k) return true;
  }
  return false;
}

// Whether `node` masks its scores with a mask the capture knew to be causal:
// masked_fill(scores, True above the diagonal), torch.where(kept on and below it, scores, fill) or
// scores + (0 on and below, -inf above).
bool masks_causally(const OpGraph& graph, const Node& node) {
  const auto mask_of = [&](std::size_t i) -> std::string {
    if (i >= node.args.size()) return {};
    const Node* m = graph.producer(node.args[i]);
    return m ? m->facts.mask : std::string();
  };
  if (node.kind == "masked_fill" || node.target == "masked_fill" || node.target == "torch.masked_fill")
    return mask_of(1) == "causal_masked";
  if (node.kind == "where") return mask_of(0) == "causal_kept";
  if (node.kind == "add") return mask_of(0) == "causal_additive" || mask_of(1) == "causal_additive";
  return false;
}

// The share of S x S scores on and below the diagonal, (S + 1) / 2S: what a causal mask keeps.
double causal_share(std::int64_t size) { return (static_cast<double>(size) + 1.0) / (2.0 * static_cast<double>(size)); }

// Scores (square in their last two dims) that a causal mask meets before anything else reads them: the
// product computing them, or the product of their probabilities with the values. The fraction of the
// product's work that the kept scores need, (S + 1) / 2S, else 1.
double causal_fraction(const OpGraph& graph, const Node& product) {
  const auto square = [](const Node& n) -> std::int64_t {
    if (!n.meta || n.meta->shape.size() < 2) return 0;
    const auto& s = n.meta->shape;
    return s[s.size() - 1] == s[s.size() - 2] && s.back() > 1 ? s.back() : 0;
  };
  // The one user that reads a node's values; reads of its dtype, shape or device (getattr) do not count.
  const auto value_user = [&](const Node& n) -> const Node* {
    const Node* found = nullptr;
    for (const auto& name : n.users) {
      const Node* u = graph.find(name);
      if (!u) return nullptr;
      if (u->op == "call_function" && u->target == "getattr") continue;
      if (found) return nullptr;
      found = u;
    }
    return found;
  };
  // Downstream: the scores' only path through scale and casts to the mask.
  if (const std::int64_t size = square(product)) {
    const Node* at = &product;
    for (int step = 0; step < 6; ++step) {
      const Node* next = value_user(*at);
      if (!next) break;
      if (masks_causally(graph, *next)) return causal_share(size);
      if (!keeps_the_mask(*next) || next->kind == "softmax") break;
      at = next;
    }
  }
  // Upstream: probabilities of causally masked scores, times the values.
  const Node* at = product_operands(graph, product).first;
  for (int step = 0; at && step < 8; ++step) {
    if (masks_causally(graph, *at)) {
      const std::int64_t size = square(*at);
      return size ? causal_share(size) : 1.0;
    }
    if (!keeps_the_mask(*at) || at->args.empty()) break;
    at = graph.producer(at->args[0]);
  }
  return 1.0;
}

}  // namespace

NodeWork minimal_work(const OpGraph& graph, const Node& node) {
  NodeWork work{node.flops, {}};
  if (node.kind == "scaled_dot_product_attention" && node.meta && node.meta->shape.size() >= 2) {
    const auto causal = node.kwargs.find("is_causal");
    const std::int64_t size = node.meta->shape[node.meta->shape.size() - 2];
    if (causal != node.kwargs.end() && causal->second.kind == Arg::Kind::Bool && causal->second.flag && size > 1) {
      return {node.flops * causal_share(size), "a causal attention computes the scores on and below the diagonal only"};
    }
    return work;
  }
  if (!is_product(node) || !node.meta) return work;
  if (const double f = causal_fraction(graph, node); f < 1.0) {
    return {node.flops * f, "a causal mask keeps the scores on and below the diagonal: (S + 1) / 2S of the product"};
  }
  const auto [a, b] = product_operands(graph, node);
  if (!a || !b || !a->meta || !b->meta) return work;
  const double scale = static_cast<double>(node.meta->elements());  // one multiply per output element
  if (scale >= node.flops) return work;
  if (diagonal_matrix_vector(graph, *a) || diagonal_matrix_vector(graph, *b)) {
    return {scale, "a product with torch.diag(v) is one multiply per output element"};
  }
  const auto& sa = a->meta->shape;
  const auto& sb = b->meta->shape;
  if (sa.size() >= 2 && sb.size() >= 2 && sa.back() == 1 && sb[sb.size() - 2] == 1) {
    return {scale, "a product over an inner dimension of 1 is one multiply per output element"};
  }
  return work;
}

double tensor_bytes(const std::vector<std::int64_t>& shape, const std::string& dtype) {
  double n = dtype_bytes(dtype);
  for (const auto d : shape) n *= static_cast<double>(d);
  return n;
}

RegionWork region_work(const OpGraph& graph, const std::set<std::string>& covered, const std::string& produces) {
  const auto inside = [&](const Node& n) {
    if (n.op == "placeholder" || n.op == "output" || n.op == "get_attr") return false;
    return covered.empty() || covered.count(n.name) > 0;
  };
  RegionWork work;
  if (const Node* out = graph.find(produces); out && out->meta) work.peak = out->meta->dtype;
  std::set<std::string> read;  // tensors entering the region, by node or state_dict name, each counted once
  for (const auto& node : graph.nodes) {
    if (!inside(node)) continue;
    work.flops += minimal_work(graph, node).flops;
    if (node.kind.rfind("conv", 0) == 0 && node.meta && node.meta->dtype == "float32") work.peak = "tf32";
    const auto read_once = [&](const Node* p) {
      if (p && !inside(*p) && p->meta && read.insert(p->name).second) work.bytes += tensor_bytes(p->meta->shape, p->meta->dtype);
    };
    const auto enter = [&](const Arg& a) {  // a tensor argument, or one inside a list (torch.cat's)
      read_once(graph.producer(a));
      for (const auto& item : a.items) read_once(graph.producer(item));
    };
    for (const auto& a : node.args) enter(a);
    for (const auto& [key, a] : node.kwargs) enter(a);
    if (node.op == "call_module") {  // its own weights: "conv.weight" for the module "conv"
      for (const auto* tensors : {&graph.parameters, &graph.buffers}) {
        for (const auto& [name, t] : *tensors) {
          if (name.rfind(node.target + ".", 0) == 0 && read.insert(name).second) work.bytes += tensor_bytes(t.shape, t.dtype);
        }
      }
    }
    bool leaves = false;
    for (const auto& user : node.users) {
      const Node* u = graph.find(user);
      leaves = leaves || !u || !inside(*u);
    }
    if (leaves && node.meta) work.bytes += tensor_bytes(node.meta->shape, node.meta->dtype);
  }
  return work;
}

const Node* diagonal_matrix_vector(const OpGraph& graph, const Node& node) {
  if (!(node.kind == "diag" || node.target == "torch.diag" || node.target == "diag")) return nullptr;
  if (node.args.empty() || node.args.size() > 2) return nullptr;
  const auto zero = [](const Arg& a) { return a.kind == Arg::Kind::Number && a.number == 0.0; };
  if (node.args.size() == 2 && !zero(node.args[1])) return nullptr;
  for (const auto& [name, arg] : node.kwargs) {
    if (name != "diagonal" || !zero(arg)) return nullptr;
  }
  if (node.normalized) {
    if (const auto offset = node.normalized->find("diagonal"); offset != node.normalized->end() && !zero(offset->second)) {
      return nullptr;
    }
  }
  const Node* v = graph.producer(node.args[0]);
  return v && v->meta && v->meta->shape.size() == 1 ? v : nullptr;
}

}  // namespace hiera::engine::graph
