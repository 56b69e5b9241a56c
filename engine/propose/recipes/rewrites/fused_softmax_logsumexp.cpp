// s1_fused_softmax_logsumexp: log(softmax(x)) as log_softmax and
// log(sum(exp(x))) as logsumexp, one numerically stable kernel each. Both
// are `risky`: they differ from the reference exactly where it under- or
// overflows (log(0) = -inf, exp(x) = inf).
#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_fused_softmax_logsumexp";

bool no_dtype(const graph::Node& node) {
  const graph::Arg* d = keyword(node, "dtype");
  return !d || d->kind == graph::Arg::Kind::None;
}

}  // namespace

std::vector<Replacement> find_fused_softmax_logsumexp(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& log : graph.nodes) {
    if (!is_kind(log, "log") || log.args.size() != 1 || !log.kwargs.empty() || mutates(graph, log)) continue;
    const graph::Node* inner = graph.producer(log.args[0]);
    if (!inner || !only_user(*inner, log) || mutates(graph, *inner) || dtype(*inner) != dtype(log)) continue;
    const graph::Node* x = argument_node(graph, *inner, 0, "input");
    if (!x || !x->meta || dtype(*x) != dtype(log) || !is_floating(dtype(log))) continue;
    if (is_kind(*inner, "softmax") && no_dtype(*inner)) {
      const auto dim = softmax_dim(graph, *inner);
      if (!dim) continue;
      Replacement r = make_replacement(
          kRecipe, knowledge::Space::S1, "log(softmax('" + x->name + "')) as log_softmax", {inner->name, log.name},
          log.name, {log.name + " = torch.log_softmax(" + x->name + ", dim=" + std::to_string(*dim) + ")"});
      r.risky = true;
      out.push_back(std::move(r));
      continue;
    }
    if (is_kind(*inner, "sum") && no_dtype(*inner) && passes_only(*inner, 3, {"dim", "keepdim"}) &&
        is_kind(*x, "exp") && only_user(*x, *inner) && !mutates(graph, *x)) {
      const graph::Node* base = argument_node(graph, *x, 0, "input");
      const graph::Arg* dim = argument(*inner, 1, "dim");
      const auto dims = int_list(dim);
      const graph::Arg* keep = argument(*inner, 2, "keepdim");
      if (!base || !dims || dims->empty() || (keep && !flag(keep)) || x->args.size() != 1) continue;
      const bool keepdim = keep && *flag(keep);
      Replacement r =
          make_replacement(kRecipe, knowledge::Space::S1, "log(sum(exp('" + base->name + "'))) as logsumexp",
                           {x->name, inner->name, log.name}, log.name,
                           {log.name + " = torch.logsumexp(" + base->name + ", dim=" + python_arg(*dim) +
                            (keepdim ? ", keepdim=True" : "") + ")"});
      r.risky = true;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
