#include "engine/analysis/torch_hints.h"

#include <algorithm>
#include <functional>
#include <set>

#include "engine/analysis/hint_rules.h"
#include "engine/analysis/torch_ops.h"

namespace hiera::engine::analysis {

namespace {

bool is_elementwise(const ForwardOp& op) { return is_elementwise_op(op.op); }

// Dropout is elementwise but free in eval mode (its input is returned): no pass to save.
bool is_dropout(const ForwardOp& op) {
  return op.op == "dropout" || op.op == "dropout2d" || op.op == "dropout3d" || op.op == "alpha_dropout";
}

bool category_is(const ForwardOp& op, OpCategory category) {
  const auto info = find_op(op.op);
  return info && info->category == category;
}

class TorchRules {
 public:
  TorchRules(std::string_view source, const TorchModule& module, const ForwardTrace& trace)
      : source_(source), module_(module), ops_(module.ops), trace_(trace), users_(module.ops.size()),
        claimed_(module.ops.size(), false) {
    for (std::size_t j = 0; j < ops_.size(); ++j) {
      for (const int i : ops_[j].inputs) users_[static_cast<std::size_t>(i)].push_back(static_cast<int>(j));
    }
  }

  std::vector<Hint> run() {
    fusable_chains();
    gemm_epilogues();
    float32_gemms();
    handwritten_softmax();
    handwritten_attention();
    handwritten_layer_norm();
    standalone_chains();  // after the rules above: the ops they name are theirs
    foldable_batch_norms();
    diagonal_matmuls();
    dropout_modes();
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
      claimed_[i] = true;
      for (const int c : chain) claimed_[static_cast<std::size_t>(c)] = true;
      std::string names;
      for (const int c : chain) names += (names.empty() ? "" : ", ") + op(c).op;
      hints_.push_back(make_hint("torch.fusable_elementwise_chain", from_to(static_cast<int>(i), chain.back()),
                                 ops_[i].op + " is followed by " + std::to_string(chain.size()) + " elementwise ops (" + names +
                                     "): each reads and writes the whole activation; one fused epilogue does it once"));
    }
  }

  // A GEMM whose only use is an activation cuBLASLt's epilogue applies (relu,
  // gelu) or an add of another tensor (a residual or bias): the same pass does it.
  void gemm_epilogues() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const std::string& gemm = ops_[i].op;
      // In a Python loop the loop is the hint that matters (torch.python_loop).
      if (claimed_[i] || ops_[i].in_loop || users_[i].size() != 1) continue;
      if (gemm != "linear" && gemm != "matmul" && gemm != "mm" && gemm != "addmm") continue;
      const int u = users_[i][0];
      const ForwardOp& next = op(u);
      std::string message;
      if (next.op == "relu" || next.op == "gelu") {
        message = gemm + " followed by " + next.op + ": cuBLASLt applies the bias and " + next.op +
                  " in the GEMM's epilogue, so the activation makes no pass of its own";
      } else if (next.op == "add" && tensor_operands(next) == 2) {
        message = gemm + "'s result plus another tensor (a residual or a bias): the GEMM adds it in its epilogue "
                  "(D = A·B + C), saving a pass over the output";
      } else {
        continue;
      }
      claimed_[i] = claimed_[static_cast<std::size_t>(u)] = true;
      hints_.push_back(make_hint("torch.gemm_epilogue", from_to(static_cast<int>(i), u), std::move(message)));
    }
  }

  // A float32 product with known shapes, 128 or more a side and 2^27 multiply-adds (split_tf32.cpp's bounds):
  // float32's accuracy on the tensor cores as 3xTF32. Not where the module turns TF32 on (its work is "tf32").
  void float32_gemms() {
    for (const ForwardOp& o : ops_) {
      if (!category_is(o, OpCategory::Linear) && !category_is(o, OpCategory::Matmul)) continue;
      if (o.in_loop || !o.work || o.work->dtype != "float32" || !o.shape || o.shape->empty()) continue;
      double outputs = 1.0;
      for (const auto d : *o.shape) outputs *= static_cast<double>(d);
      const double n = static_cast<double>(o.shape->back()), rows = outputs / std::max(n, 1.0);
      const double k = outputs > 0.0 ? o.work->flops / (2.0 * outputs) : 0.0;  // a GEMM's flops: 2 x outputs x K
      if (n < 128 || rows < 128 || k < 128 || rows * k * n < static_cast<double>(1 << 27)) continue;
      hints_.push_back(make_hint("torch.float32_gemm", o.span,
                                 "float32 " + o.op + " of " + std::to_string(static_cast<long long>(rows)) + " rows, K " +
                                     std::to_string(static_cast<long long>(k)) + ", N " +
                                     std::to_string(static_cast<long long>(n)) +
                                     " on the CUDA cores: as 3xTF32 it keeps float32's accuracy on the tensor cores"));
    }
  }

  // Operands that are not numbers: tensors, or values the evaluator cannot see.
  static int tensor_operands(const ForwardOp& o) {
    int n = 0;
    for (const auto& a : o.arguments) n += a.keyword.empty() && !a.number ? 1 : 0;
    return n;
  }

  bool inside_hint(Span s) const {
    return std::any_of(hints_.begin(), hints_.end(), [&](const Hint& h) { return h.span.begin <= s.begin && s.end <= h.span.end; });
  }

  // Three or more elementwise ops that feed each other (a chain, or the DAG a
  // hand-written GELU is) and that no other rule names: a pass over memory each.
  void standalone_chains() {
    const std::size_t n = ops_.size();
    std::vector<std::size_t> root(n);
    for (std::size_t i = 0; i < n; ++i) root[i] = i;
    const std::function<std::size_t(std::size_t)> find = [&](std::size_t i) { return root[i] == i ? i : root[i] = find(root[i]); };
    std::vector<bool> free(n);
    for (std::size_t i = 0; i < n; ++i) {
      free[i] = is_elementwise(ops_[i]) && !is_dropout(ops_[i]) && !claimed_[i] && !inside_hint(ops_[i].span);
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (!free[j]) continue;
      for (const int i : ops_[j].inputs) {
        if (free[static_cast<std::size_t>(i)]) root[find(static_cast<std::size_t>(i))] = find(j);
      }
    }
    // The longest run of ops each reading the last: siblings (a match's
    // branches, fan-out) are not a chain; ops come in execution order.
    std::vector<int> depth(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
      if (!free[j]) continue;
      depth[j] = 1;
      for (const int i : ops_[j].inputs) {
        if (free[static_cast<std::size_t>(i)]) depth[j] = std::max(depth[j], depth[static_cast<std::size_t>(i)] + 1);
      }
    }
    std::vector<std::vector<std::size_t>> groups(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (free[i]) groups[find(i)].push_back(i);
    }
    for (const auto& group : groups) {
      if (std::none_of(group.begin(), group.end(), [&](std::size_t i) { return depth[i] >= 3; })) continue;
      std::set<std::pair<std::size_t, std::size_t>> spans;  // a loop records an op per iteration: count each once
      std::vector<std::string> names;
      Span all{source_.size(), 0};
      for (const std::size_t i : group) {
        if (!spans.insert({ops_[i].span.begin, ops_[i].span.end}).second) continue;
        names.push_back(ops_[i].op);
        all.begin = std::min(all.begin, ops_[i].span.begin);
        all.end = std::max(all.end, ops_[i].span.end);
      }
      if (names.size() < 3) continue;
      std::string listed;
      for (std::size_t k = 0; k < names.size() && k < 6; ++k) listed += (k ? ", " : "") + names[k];
      if (names.size() > 6) listed += ", ...";
      hints_.push_back(make_hint("torch.fusable_elementwise_chain", all,
                                 std::to_string(names.size()) + " elementwise ops in a row (" + listed +
                                     "): each reads and writes the whole tensor; one fused kernel does them in one pass"));
    }
  }

  // A convolution or linear layer read only by a batch norm: in eval mode the
  // norm is a per-channel affine map that folds into the weight and bias.
  void foldable_batch_norms() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const bool conv = ops_[i].op == "conv1d" || ops_[i].op == "conv2d" || ops_[i].op == "conv3d";
      if ((!conv && ops_[i].op != "linear") || users_[i].size() != 1) continue;
      const int u = users_[i][0];
      if (op(u).op != "batch_norm" || training_flag(op(u)).value_or(0.0) != 0.0) continue;
      hints_.push_back(make_hint("torch.foldable_batch_norm", from_to(static_cast<int>(i), u),
                                 ops_[i].op + " feeds batch_norm: in eval mode the norm is a per-channel scale and shift that "
                                     "folds into the " + (conv ? "convolution's" : "layer's") +
                                     " weight and bias, one kernel instead of two"));
    }
  }

  static std::optional<double> training_flag(const ForwardOp& o) {
    for (const auto& a : o.arguments) {
      if (a.keyword == "training" || a.keyword == "train") return a.number.value_or(0.5);  // 0.5: not a literal
    }
    return std::nullopt;
  }

  // a @ torch.diag(d) (or torch.diag(d) @ b): an n x n matrix built to scale
  // columns (rows) with a GEMM that a broadcast multiply does in one pass.
  void diagonal_matmuls() {
    for (std::size_t m = 0; m < ops_.size(); ++m) {
      const ForwardOp& product = ops_[m];
      if (product.op != "matmul" && product.op != "mm") continue;
      for (const int d : product.inputs) {
        const ForwardOp& diagonal = op(d);
        if (diagonal.op != "diag" || (diagonal.shape && diagonal.shape->size() != 2)) continue;
        const std::string_view call = diagonal.span.text(source_);
        const std::size_t open = call.find('('), close = call.rfind(')');
        if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) continue;
        const std::string vector(call.substr(open + 1, close - open - 1));
        if (vector.find(',') != std::string::npos || vector.find('=') != std::string::npos) continue;  // an off-diagonal
        const std::string size = diagonal.shape ? std::to_string((*diagonal.shape)[0]) : "n";
        const std::string matrix = (diagonal.shape ? "builds a " : "builds an ") + size + " x " + size + " matrix and runs a GEMM with it: ";
        hints_.push_back(make_hint("torch.diagonal_matmul", product.span,
                                   diagonal_on_left(product, diagonal)
                                       ? "torch.diag(" + vector + ") @ ... " + matrix + "'" + vector +
                                             "[:, None] * ...' scales the rows in one elementwise pass"
                                       : "... @ torch.diag(" + vector + ") " + matrix + "'... * " + vector +
                                             "' scales the columns in one elementwise pass"));
      }
    }
  }

  // Whether the diag is the product's first operand: `torch.diag(d) @ b`,
  // `torch.matmul(torch.diag(d), b)`; a method's receiver is always the first.
  bool diagonal_on_left(const ForwardOp& product, const ForwardOp& diagonal) const {
    std::string_view before = source_.substr(product.span.begin, diagonal.span.begin - product.span.begin);
    if (!product.call.empty() && product.call.front() == '.') return before.empty();
    while (!before.empty() && (before.back() == ' ' || before.back() == '\t' || before.back() == '\n')) before.remove_suffix(1);
    return before.empty() || before.back() == '(';
  }

  // F.dropout's training flag defaults to True: it drops after model.eval() too.
  // training=False or p=0 leaves the input as it is.
  void dropout_modes() {
    for (const auto& o : ops_) {
      if (!is_dropout(o)) continue;
      const bool layer = o.call.rfind("self.", 0) == 0;
      // torch.dropout takes `train` without a default; F.dropout (however imported) is the trap.
      const bool functional = !layer && !o.call.empty() && o.call.front() != '.' && o.call.rfind("torch.", 0) != 0;
      std::optional<double> p;
      for (std::size_t k = 0; k < o.arguments.size(); ++k) {
        const OpArgument& a = o.arguments[k];
        if (a.keyword == "p" || (a.keyword.empty() && k == (layer ? 0u : 1u))) p = a.number;
      }
      const std::optional<double> training = training_flag(o);
      const bool positional_training = !layer && o.arguments.size() >= 3 && o.arguments[2].keyword.empty();
      const bool off = (training && *training == 0.0) ||
                       (positional_training && o.arguments[2].number && *o.arguments[2].number == 0.0);
      if ((p && *p == 0.0) || off) {
        // A dropout inside nn.Sequential is called through its container: the container must stay.
        const bool contained = layer && std::any_of(module_.layers.begin(), module_.layers.end(), [&](const TorchLayer& l) {
          return "self." + l.name == o.call && (l.type == "Sequential" || l.type == "ModuleList");
        });
        const std::string why = std::string(off ? "training=False" : "p=0") + " returns its input unchanged: ";
        Hint hint = make_hint("torch.dropout_mode", o.span,
                              contained ? "a dropout with " + why.substr(0, why.size() - 2) + " inside '" + o.call +
                                              "': remove it from the container"
                                        : "'" + o.call + "' with " + why + "remove the call");
        hint.severity = Severity::Information;
        hints_.push_back(std::move(hint));
      } else if (functional && !training && !positional_training) {
        hints_.push_back(make_hint("torch.dropout_mode", o.span,
                                   "'" + o.call + "' defaults to training=True: it keeps dropping after model.eval(); "
                                   "pass training=self.training (or use nn.Dropout)"));
      }
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
      std::string message = "attention written as softmax(q @ k^T) @ v: F.scaled_dot_product_attention never materializes "
                            "the score matrix";
      if (causal_mask_between(m1, weights)) {
        message += "; its triangular mask is is_causal=True, so no mask is read and the masked blocks are skipped";
      }
      hints_.push_back(make_hint("torch.handwritten_attention", from_to(m1, static_cast<int>(m2)), std::move(message)));
    }
  }

  // "self.<name>" for each attribute __init__ sets (or registers as a buffer)
  // from a line that calls tril or triu: a causal mask built once.
  std::vector<std::string> triangle_attributes() const {
    std::vector<std::string> out;
    if (!module_.init) return out;
    const std::string_view init = module_.init->text(source_);
    for (std::size_t at = 0; at < init.size();) {
      const std::size_t end = std::min(init.find('\n', at), init.size());
      std::string_view line = init.substr(at, end - at);
      at = end + 1;
      if (line.find("tril") == std::string_view::npos && line.find("triu") == std::string_view::npos) continue;
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      std::string name;
      if (const std::size_t r = line.find("register_buffer("); r != std::string_view::npos) {
        const std::size_t quote = line.find_first_of("\"'", r);
        const std::size_t close = quote == std::string_view::npos ? quote : line.find(line[quote], quote + 1);
        if (close != std::string_view::npos) name = std::string(line.substr(quote + 1, close - quote - 1));
      } else if (line.rfind("self.", 0) == 0) {
        const std::size_t stop = line.find_first_of(" =:", 5);
        if (stop != std::string_view::npos) name = std::string(line.substr(5, stop - 5));
      }
      if (!name.empty()) out.push_back("self." + name);
    }
    return out;
  }

  // Whether the scores between ops `first` and `last` are masked by a
  // triangle: tril/triu in forward, or a buffer __init__ built with one.
  bool causal_mask_between(int first, int last) const {
    auto triangle = [](const ForwardOp& o) { return o.op == "tril" || o.op == "triu"; };
    const std::vector<std::string> triangle_buffers = triangle_attributes();
    for (int i = first; i <= last; ++i) {
      const ForwardOp& o = op(i);
      if (o.op != "masked_fill" && o.op != "where" && o.op != "add") continue;
      for (const int input : o.inputs) {
        if (derives(input, 3, triangle)) return true;
      }
      const std::string_view text = o.span.text(source_);
      for (const auto& buffer : triangle_buffers) {
        if (text.find(buffer) != std::string_view::npos) return true;
      }
    }
    return false;
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
  const TorchModule& module_;
  const std::vector<ForwardOp>& ops_;
  const ForwardTrace& trace_;
  std::vector<std::vector<int>> users_;
  std::vector<bool> claimed_;  // ops a chain or epilogue hint already names
  std::vector<Hint> hints_;
};

}  // namespace

std::vector<Hint> torch_hints(std::string_view source, const TorchModule& module, const ForwardTrace& trace) {
  return TorchRules(source, module, trace).run();
}

}  // namespace hiera::engine::analysis
