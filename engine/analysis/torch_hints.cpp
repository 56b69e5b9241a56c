#include "engine/analysis/torch_hints.h"

#include <algorithm>
#include <functional>
#include <set>

#include "engine/analysis/hint_rules.h"
#include "engine/analysis/torch_ops.h"

namespace hiera::engine::analysis {

namespace {

bool is_elementwise(const ForwardOp& op) {
  const auto info = find_op(op.op);
  return info && (info->category == OpCategory::Unary || info->category == OpCategory::Binary);
}

bool category_is(const ForwardOp& op, OpCategory category) {
  const auto info = find_op(op.op);
  return info && info->category == category;
}

class TorchRules {
 public:
  TorchRules(std::string_view source, const TorchModule& module, const ForwardTrace& trace)
      : source_(source), ops_(module.ops), trace_(trace), users_(module.ops.size()) {
    for (std::size_t j = 0; j < ops_.size(); ++j) {
      for (const int i : ops_[j].inputs) users_[static_cast<std::size_t>(i)].push_back(static_cast<int>(j));
    }
  }

  std::vector<Hint> run() {
    fusable_chains();
    handwritten_softmax();
    handwritten_attention();
    handwritten_layer_norm();
    host_syncs();
    python_loops();
    contiguous_copies();
    std::stable_sort(hints_.begin(), hints_.end(), [](const Hint& a, const Hint& b) { return a.span.begin < b.span.begin; });
    return std::move(hints_);
  }

 private:
  const ForwardOp& op(int i) const { return ops_[static_cast<std::size_t>(i)]; }
  Span from_to(int first, int last) const { return {std::min(op(first).span.begin, op(last).span.begin), op(last).span.end}; }

  // Whether op `i`, or an op it reads within `depth` steps, satisfies `pred`; the one found in `found`.
  bool derives(int i, int depth, const std::function<bool(const ForwardOp&)>& pred, int* found = nullptr) const {
    if (i < 0) return false;
    if (pred(op(i))) {
      if (found) *found = i;
      return true;
    }
    if (depth == 0) return false;
    for (const int input : op(i).inputs) {
      if (derives(input, depth - 1, pred, found)) return true;
    }
    return false;
  }

  void fusable_chains() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (!category_is(ops_[i], OpCategory::Conv) && !category_is(ops_[i], OpCategory::Linear)) continue;
      std::vector<int> chain;
      int current = static_cast<int>(i);
      for (;;) {
        int next = -1;
        for (const int u : users_[static_cast<std::size_t>(current)]) {
          if (is_elementwise(op(u))) {
            next = u;
            break;
          }
        }
        if (next < 0) break;
        chain.push_back(next);
        current = next;
      }
      if (chain.size() < 2) continue;
      std::string names;
      for (const int c : chain) names += (names.empty() ? "" : ", ") + op(c).op;
      hints_.push_back(make_hint("torch.fusable_elementwise_chain", from_to(static_cast<int>(i), chain.back()),
                                 ops_[i].op + " is followed by " + std::to_string(chain.size()) + " elementwise ops (" + names +
                                     "): each reads and writes the whole activation; one fused epilogue does it once"));
    }
  }

  // exp(x) / exp(x).sum(...): the division's denominator sums an exp.
  bool is_handwritten_softmax(int d, int* exp_op = nullptr) const {
    const ForwardOp& div = op(d);
    if (div.op != "div" || div.inputs.size() != 2) return false;
    const int numerator = div.inputs[0], denominator = div.inputs[1];
    int first_exp = -1;
    if (!derives(numerator, 1, [](const ForwardOp& o) { return o.op == "exp"; }, &first_exp)) return false;
    if (op(denominator).op != "sum") return false;
    int denominator_exp = -1;
    if (!derives(denominator, 1, [](const ForwardOp& o) { return o.op == "exp"; }, &denominator_exp)) return false;
    if (exp_op) *exp_op = std::min(first_exp, denominator_exp);
    return true;
  }

  void handwritten_softmax() {
    for (std::size_t d = 0; d < ops_.size(); ++d) {
      int exp_op = -1;
      if (!is_handwritten_softmax(static_cast<int>(d), &exp_op)) continue;
      hints_.push_back(make_hint("torch.handwritten_softmax", from_to(exp_op, static_cast<int>(d)),
                                 "softmax written as exp / sum(exp): torch.softmax is one fused, stable kernel"));
    }
  }

  void handwritten_attention() {
    auto is_matmul = [](const ForwardOp& o) { return o.op == "matmul" || o.op == "bmm"; };
    for (std::size_t m2 = 0; m2 < ops_.size(); ++m2) {
      if (!is_matmul(ops_[m2]) || ops_[m2].inputs.empty()) continue;
      // The weights: a softmax (possibly through dropout) of a scaled, masked product.
      int weights = ops_[m2].inputs[0];
      if (op(weights).op == "dropout" && !op(weights).inputs.empty()) weights = op(weights).inputs[0];
      const bool softmax = op(weights).op == "softmax" || is_handwritten_softmax(weights);
      if (!softmax) continue;
      int m1 = -1;
      bool found = false;
      for (const int input : op(weights).inputs) {
        if (derives(input, 4, is_matmul, &m1)) {
          found = true;
          break;
        }
      }
      if (!found) continue;
      hints_.push_back(make_hint("torch.handwritten_attention", from_to(m1, static_cast<int>(m2)),
                                 "attention written as softmax(q @ k^T) @ v: F.scaled_dot_product_attention never "
                                 "materializes the score matrix"));
    }
  }

  void handwritten_layer_norm() {
    auto centred = [&](int i, int* mean) {
      return derives(i, 1, [&](const ForwardOp& o) {
        if (o.op != "sub") return false;
        return std::any_of(o.inputs.begin(), o.inputs.end(), [&](int in) { return op(in).op == "mean"; });
      }) && derives(i, 2, [](const ForwardOp& o) { return o.op == "mean"; }, mean);
    };
    auto spread = [&](int i) {
      return derives(i, 3, [](const ForwardOp& o) { return o.op == "sqrt" || o.op == "rsqrt" || o.op == "std"; }) &&
             derives(i, 4, [](const ForwardOp& o) { return o.op == "var" || o.op == "std" || o.op == "mean"; });
    };
    for (std::size_t n = 0; n < ops_.size(); ++n) {
      const ForwardOp& norm = ops_[n];
      if ((norm.op != "div" && norm.op != "mul") || norm.inputs.size() != 2) continue;
      int mean = -1;
      const bool matches = (centred(norm.inputs[0], &mean) && spread(norm.inputs[1])) ||
                           (norm.op == "mul" && centred(norm.inputs[1], &mean) && spread(norm.inputs[0]));
      if (!matches) continue;
      hints_.push_back(make_hint("torch.handwritten_layer_norm", from_to(mean, static_cast<int>(n)),
                                 "normalization written as (x - mean) / sqrt(var + eps): F.layer_norm (or group_norm) "
                                 "does it in one fused pass"));
    }
  }

  // The statement's whole lines, when nothing else shares them: a quick fix deletes them.
  std::optional<Span> whole_lines(Span statement) const {
    std::size_t begin = statement.begin;
    while (begin > 0 && (source_[begin - 1] == ' ' || source_[begin - 1] == '\t')) --begin;
    if (begin > 0 && source_[begin - 1] != '\n' && source_[begin - 1] != '\r') return std::nullopt;
    std::size_t end = statement.end;
    while (end < source_.size() && (source_[end] == ' ' || source_[end] == '\t')) ++end;
    if (end < source_.size() && source_[end] == '#') {
      while (end < source_.size() && source_[end] != '\n' && source_[end] != '\r') ++end;
    }
    if (end < source_.size() && source_[end] == '\r') ++end;
    if (end < source_.size() && source_[end] == '\n') ++end;
    else if (end < source_.size()) return std::nullopt;
    return Span{begin, end};
  }

  void host_syncs() {
    for (const auto& s : trace_.syncs) {
      std::string message;
      std::vector<TextEdit> fix;
      if (s.what == "print") {
        message = "print of a tensor in forward copies it to the host and waits for the GPU";
        if (s.statement) {
          if (const auto lines = whole_lines(*s.statement)) fix.push_back({*lines, ""});
        }
      } else if (s.what == "synchronize") {
        message = "torch.cuda.synchronize() in forward waits for every queued kernel";
      } else if (s.what == "float" || s.what == "int" || s.what == "bool") {
        message = s.what + "() of a tensor in forward reads it on the host and waits for the GPU";
      } else {
        message = "." + s.what + "() in forward copies to the host and waits for the GPU";
      }
      hints_.push_back(make_hint("torch.host_sync", s.span, std::move(message), std::move(fix)));
    }
  }

  void python_loops() {
    for (const auto& loop : trace_.loops) {
      if (!loop.over_tensor) continue;
      hints_.push_back(make_hint("torch.python_loop", loop.span,
                                 loop.body_has_matmul
                                     ? "Python loop over a tensor in forward runs a matmul per iteration: one batched matmul does them all"
                                     : "Python loop over a tensor in forward launches its body's kernels once per iteration"));
    }
  }

  void contiguous_copies() {
    for (const auto& o : ops_) {
      if (o.op != "contiguous") continue;
      std::string after;
      for (const int i : o.inputs) {
        if (op(i).op == "permute" || op(i).op == "transpose" || op(i).op == "t") after = op(i).op;
      }
      std::string message = after.empty() ? "'.contiguous()' in forward copies the tensor whenever it is not contiguous"
                                           : "'.contiguous()' after ." + after + "() copies the whole tensor on every call";
      if (o.in_loop) message += ", in a loop";
      hints_.push_back(make_hint("torch.contiguous_copy", o.span, std::move(message)));
    }
  }

  std::string_view source_;
  const std::vector<ForwardOp>& ops_;
  const ForwardTrace& trace_;
  std::vector<std::vector<int>> users_;
  std::vector<Hint> hints_;
};

}  // namespace

std::vector<Hint> torch_hints(std::string_view source, const TorchModule& module, const ForwardTrace& trace) {
  return TorchRules(source, module, trace).run();
}

}  // namespace hiera::engine::analysis
