#include "engine/analysis/cuda_hints.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "engine/analysis/cuda_thread_index.h"
#include "engine/analysis/hint_rules.h"

namespace hiera::engine::analysis {

namespace {

bool is_relational(std::string_view t) { return t == "<" || t == "<=" || t == ">" || t == ">=" || t == "!="; }

// Bytes per element of a shared array's element type; 0 when unknown or not 4/8.
int element_bytes(const std::string& type) {
  static const std::set<std::string> four = {"float", "int", "unsigned", "uint32_t", "int32_t", "uint", "float1", "int1"};
  static const std::set<std::string> eight = {"double", "long", "int64_t", "uint64_t", "size_t", "float2", "int2"};
  if (four.count(type)) return 4;
  if (eight.count(type)) return 8;
  return 0;
}

bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    const std::size_t end = at + word.size();
    const bool right = end >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
    if (left && right) return true;
  }
  return false;
}

// How many threads of a warp hit the same bank when neighbours are `words`
// 4-byte words apart: 32 banks; 8-byte accesses are served a half-warp at a time.
std::int64_t conflict_ways(std::int64_t words, int bytes) {
  const std::int64_t ways = std::gcd(words, std::int64_t{32});
  return bytes == 8 ? std::max<std::int64_t>(1, ways / 2) : ways;
}

std::string stride_words(const IndexClass& c) {
  return c.stride ? std::to_string(*c.stride < 0 ? -*c.stride : *c.stride) + " elements apart" : "a runtime stride apart";
}

class CudaRules {
 public:
  CudaRules(std::string_view source, const CudaScan& scan) : source_(source), scan_(scan) {}

  std::vector<Hint> run(std::size_t f) {
    const CudaFunction& function = scan_.functions[f];
    const CudaBody& body = scan_.bodies[f];
    if (!function.body) return {};
    const ThreadIndexClassifier classifier(source_, scan_, body);
    if (function.kind == CudaFunctionKind::Kernel) {
      const auto pointers = pointer_parameters(function);
      uncoalesced(body, classifier, pointers);
      read_only_pointers(function, body, scan_.parameter_tokens[f]);
      bounds_check(body, classifier, pointers);
    }
    if (function.kind != CudaFunctionKind::Host) {
      bank_conflicts(body, classifier);
      atomics_in_loops(body);
      doubles_in_loops(function, body);
    }
    launches(body);
    std::stable_sort(hints_.begin(), hints_.end(), [](const Hint& a, const Hint& b) { return a.span.begin < b.span.begin; });
    return std::move(hints_);
  }

 private:
  std::string_view text(std::uint32_t i) const { return scan_.code[i].text(source_); }
  std::string_view span_text(Span s) const { return s.text(source_); }
  std::string range_text(TokenRange r) const {
    if (r.empty()) return "";
    return std::string(source_.substr(scan_.code[r.begin].begin, scan_.code[r.end - 1].end - scan_.code[r.begin].begin));
  }

  static std::set<std::string> pointer_parameters(const CudaFunction& f) {
    std::set<std::string> out;
    for (const auto& p : f.parameters) {
      if (p.pointer && !p.name.empty()) out.insert(p.name);
    }
    return out;
  }

  void uncoalesced(const CudaBody& body, const ThreadIndexClassifier& classifier, const std::set<std::string>& pointers) {
    std::set<std::string> reported;  // one hint per distinct access text
    for (const auto& s : body.subscripts) {
      if (s.indices.size() != 1 || !pointers.count(std::string(text(s.name)))) continue;
      const IndexClass c = classifier.classify(s.indices[0], s.name);
      if (c.variation != WarpVariation::Strided) continue;
      const std::string access(span_text(s.span));
      if (!reported.insert(access).second) continue;
      if (const std::string walked = row_walk(body, s); !walked.empty()) {
        // Each thread walks a row of its own: the fix is a row per warp, not a transpose.
        Hint hint = make_hint("cuda.uncoalesced_access", s.span,
                              "'" + access + "': each thread reads its own row, '" + walked +
                                  "' stepping along it, so a warp's loads are " + stride_words(c) +
                                  "; give a row to a warp (or block) whose lanes read consecutive elements and combine "
                                  "with __shfl_down_sync");
        hint.recipe = "s3_warp_shuffle_row_reduction";
        hints_.push_back(std::move(hint));
        continue;
      }
      hints_.push_back(make_hint("cuda.uncoalesced_access", s.span,
                                 "'" + access + "': consecutive threads (threadIdx.x, threadIdx.x + 1) are " + stride_words(c) +
                                     ", so a warp's " + (s.written ? "stores" : "loads") + " are not coalesced"));
    }
  }

  // The loop variable a read steps along, when the read sits in a loop whose
  // variable appears in its index (a per-thread walk of a row); "" otherwise.
  std::string row_walk(const CudaBody& body, const CudaSubscript& s) const {
    // The loop variable alone (a tail loop from the thread's start) walks no row.
    if (s.written || s.indices[0].end - s.indices[0].begin < 2) return "";
    for (const auto& loop : body.loops) {
      if (loop.variable.empty() || s.name < loop.body.begin || s.name >= loop.body.end) continue;
      for (std::uint32_t k = s.indices[0].begin; k < s.indices[0].end; ++k) {
        if (scan_.code[k].kind == TokenKind::Identifier && text(k) == loop.variable) return loop.variable;
      }
    }
    return "";
  }

  void read_only_pointers(const CudaFunction& function, const CudaBody& body, TokenRange params) {
    for (const auto& p : function.parameters) {
      if (!p.pointer || p.name.empty() || (p.is_const && p.restrict)) continue;
      if (!only_read(p.name, body, *function.body)) continue;
      // Where the edits go: `const` before the declaration, `__restrict__` after its last '*'.
      std::optional<std::uint32_t> star;
      for (std::uint32_t k = params.begin; k < params.end; ++k) {
        if (scan_.code[k].begin >= p.span.begin && scan_.code[k].end <= p.span.end && text(k) == "*") star = k;
      }
      if (!star) continue;  // an array parameter (T x[]): leave it
      std::vector<TextEdit> fix;
      if (!p.is_const) fix.push_back({{p.span.begin, p.span.begin}, "const "});
      if (!p.restrict) fix.push_back({{scan_.code[*star].end, scan_.code[*star].end}, " __restrict__"});
      const std::string wanted = p.is_const ? "__restrict__" : p.restrict ? "const" : "const and __restrict__";
      hints_.push_back(make_hint("cuda.missing_restrict", p.span,
                                 "'" + p.name + "' is only read in '" + function.name + "': declare it " + wanted,
                                 std::move(fix)));
    }
  }

  // Every use of `name` in the body is a subscript read (or __ldg of one).
  bool only_read(const std::string& name, const CudaBody& body, Span body_span) const {
    std::set<std::uint32_t> read_subscripts;
    for (const auto& s : body.subscripts) {
      if (text(s.name) != name) continue;
      if (s.written) return false;
      read_subscripts.insert(s.name);
    }
    if (read_subscripts.empty()) return false;
    const auto first = std::lower_bound(scan_.code.begin(), scan_.code.end(), body_span.begin,
                                        [](const Token& t, std::size_t offset) { return t.begin < offset; });
    for (auto k = static_cast<std::uint32_t>(first - scan_.code.begin()); k < scan_.code.size(); ++k) {
      const Token& t = scan_.code[k];
      if (t.end > body_span.end) break;
      if (t.kind == TokenKind::Identifier && text(k) == name && !read_subscripts.count(k)) {
        const bool member = k > 0 && (text(k - 1) == "." || text(k - 1) == "->");
        if (!member) return false;  // it escapes: passed on, offset, assigned
      }
    }
    // A read inside a call that takes its address (atomicAdd(&p[i], v)) writes.
    for (const auto& call : body.calls) {
      for (std::uint32_t k = call.arguments.begin; k + 1 < call.arguments.end; ++k) {
        if (text(k) == "&" && text(k + 1) == name) return false;
      }
    }
    return true;
  }

  void bounds_check(const CudaBody& body, const ThreadIndexClassifier& classifier, const std::set<std::string>& pointers) {
    const CudaSubscript* s = first_unguarded(body, classifier, pointers);
    if (!s) return;  // one per kernel: the first unguarded access
    hints_.push_back(make_hint("cuda.missing_bounds_check", s->span,
                               "'" + std::string(span_text(s->span)) + "': the index comes from blockIdx and threadIdx "
                                   "but is never compared with a size"));
  }

  const CudaSubscript* first_unguarded(const CudaBody& body, const ThreadIndexClassifier& classifier,
                                       const std::set<std::string>& pointers) const {
    for (const auto& s : body.subscripts) {
      if (s.indices.size() != 1 || !pointers.count(std::string(text(s.name)))) continue;
      const IndexClass c = classifier.classify(s.indices[0], s.name);
      if (!c.uses_block || !c.uses_thread) continue;
      if (!guarded(body, classifier, c)) return &s;
    }
    return nullptr;
  }

  // Some condition compares a variable the index depends on (or one that
  // depends on the same thread index) with something.
  bool guarded(const CudaBody& body, const ThreadIndexClassifier& classifier, const IndexClass& index) const {
    for (const auto& condition : body.conditions) {
      bool relational = false;
      bool related = false;
      for (std::uint32_t k = condition.begin; k < condition.end; ++k) {
        const auto t = text(k);
        if (is_relational(t)) relational = true;
        if (scan_.code[k].kind != TokenKind::Identifier) continue;
        if (index.variables.count(std::string(t))) related = true;
        else if (t != "threadIdx" && t != "blockIdx" && t != "blockDim" && t != "gridDim") {
          const IndexClass other = classifier.classify({k, k + 1}, k);
          if (other.uses_block && other.uses_thread) related = true;
        }
      }
      if (relational && related) return true;
    }
    return false;
  }

  void bank_conflicts(const CudaBody& body, const ThreadIndexClassifier& classifier) {
    std::vector<const SharedArray*> arrays;
    for (const auto& a : body.shared_arrays) arrays.push_back(&a);
    for (const auto& a : scan_.shared_arrays) arrays.push_back(&a);
    for (const SharedArray* array : arrays) {
      const int bytes = element_bytes(array->type);
      if (bytes == 0) continue;
      for (const auto& s : body.subscripts) {
        if (text(s.name) != array->name || s.indices.size() != array->dims.size() || s.indices.empty()) continue;
        if (s.indices.size() == 2) {
          const std::optional<std::int64_t> width = dimension(array->dims[1]);
          if (!width || *width <= 0) continue;
          const std::int64_t words = *width * bytes / 4;
          const std::int64_t ways = conflict_ways(words, bytes);
          if (ways < 2) continue;
          const IndexClass row = classifier.classify(s.indices[0], s.name);
          const IndexClass column = classifier.classify(s.indices[1], s.name);
          if (row.variation != WarpVariation::Unit || column.variation == WarpVariation::Unit) continue;
          const std::string width_text(span_text(array->dim_spans[1]));
          const bool literal = scan_.code[array->dims[1].begin].kind == TokenKind::Number && array->dims[1].end == array->dims[1].begin + 1;
          const std::string padded = literal ? std::to_string(*width + 1) : width_text + " + 1";
          hints_.push_back(make_hint("cuda.shared_bank_conflict", s.span,
                                     "'" + std::string(span_text(s.span)) + "': threadIdx.x picks the row of '" + array->name +
                                         "', whose rows are " + std::to_string(words) + " words wide: a " +
                                         std::to_string(ways) + "-way bank conflict; pad the row to " + padded,
                                     {{array->dim_spans[1], padded}}));
          break;  // one per array: the padding fixes every access
        }
        const IndexClass c = classifier.classify(s.indices[0], s.name);
        if (c.variation != WarpVariation::Strided || !c.stride) continue;
        const std::int64_t words = (*c.stride < 0 ? -*c.stride : *c.stride) * bytes / 4;
        const std::int64_t ways = conflict_ways(words, bytes);
        if (ways < 2) continue;
        hints_.push_back(make_hint("cuda.shared_bank_conflict", s.span,
                                   "'" + std::string(span_text(s.span)) + "': threadIdx.x strides '" + array->name + "' by " +
                                       std::to_string(words) + " words: a " + std::to_string(ways) + "-way bank conflict"));
        break;
      }
    }
  }

  std::optional<std::int64_t> dimension(TokenRange r) const { return evaluate_constant(range_text(r), scan_.constants); }

  void atomics_in_loops(const CudaBody& body) {
    for (const auto& call : body.calls) {
      const auto name = text(call.name);
      if (name.rfind("atomic", 0) != 0 || !in_loop(body, call.name)) continue;
      hints_.push_back(make_hint("cuda.atomic_in_loop", call.span,
                                 "'" + std::string(name) + "' inside a loop: every iteration contends for the same memory"));
    }
  }

  void doubles_in_loops(const CudaFunction& function, const CudaBody& body) {
    bool uses_double = false;
    for (const auto& p : function.parameters) uses_double = uses_double || has_word(p.type, "double");
    uses_double = uses_double || !body.double_tokens.empty();
    for (const auto k : body.double_tokens) {
      if (!in_loop(body, k)) continue;
      hints_.push_back(make_hint("cuda.double_in_loop", scan_.code[k].span(), "double-precision variable in a loop of '" + function.name + "'"));
    }
    if (uses_double) return;  // the function works in double on purpose: its literals are not accidents
    for (const auto k : body.float_literals) {
      if (!in_loop(body, k)) continue;
      const auto literal = text(k);
      if (literal.back() == 'l' || literal.back() == 'L') continue;
      const Span at = scan_.code[k].span();
      hints_.push_back(make_hint("cuda.double_in_loop", at,
                                 "'" + std::string(literal) + "' is a double literal: it promotes this arithmetic to double; write " +
                                     std::string(literal) + "f",
                                 {{{at.end, at.end}, "f"}}));
    }
  }

  void launches(const CudaBody& body) {
    for (const auto& launch : body.launches) {
      if (launch.block_threads) {
        const std::int64_t threads = *launch.block_threads;
        const Span at = launch.block_span.empty() ? launch.span : launch.block_span;
        if (threads > 1024) {
          Hint hint = make_hint("cuda.block_size", at,
                                "block of " + std::to_string(threads) + " threads: more than 1024, the launch of '" +
                                    launch.kernel + "' fails");
          hint.severity = Severity::Error;
          hints_.push_back(std::move(hint));
        } else if (threads > 0 && threads % 32 != 0) {
          hints_.push_back(make_hint("cuda.block_size", at,
                                     "block of " + std::to_string(threads) + " threads is not a multiple of 32: its last warp runs " +
                                         std::to_string(threads % 32) + " of 32 lanes"));
        }
      }
      if (launch.in_loop) launch_in_loop(body, launch);
    }
  }

  void launch_in_loop(const CudaBody& body, const LaunchSite& launch) {
    // The loop around the launch whose variable the launch uses.
    for (const auto& loop : body.loops) {
      if (loop.variable.empty() || loop.body.empty()) continue;
      const Span loop_body{scan_.code[loop.body.begin].begin, scan_.code[loop.body.end - 1].end};
      if (!loop_body.contains(launch.span)) continue;
      bool uses = has_word(launch.grid, loop.variable);
      for (const auto& a : launch.arguments) uses = uses || has_word(a, loop.variable);
      if (!uses) continue;
      hints_.push_back(make_hint("cuda.launch_in_loop", launch.span,
                                 "'" + launch.kernel + "' is launched once per iteration of the loop over '" + loop.variable +
                                     "': one launch covering every iteration saves the launch overhead of the rest"));
      return;
    }
  }

  std::string_view source_;
  const CudaScan& scan_;
  std::vector<Hint> hints_;
};

// `(n + a) / b` with n a name and a, b positive literals (spaces anywhere).
struct RoundedUp {
  std::string n;
  long long add = 0, per = 0;
};

std::optional<RoundedUp> rounded_up(std::string_view grid) {
  std::string t;
  for (const char c : grid) {
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  }
  auto digits = [&](std::size_t& at) -> std::optional<long long> {
    const std::size_t from = at;
    while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at])) && at - from < 7) ++at;
    if (at == from || (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at])))) return std::nullopt;
    return std::stoll(t.substr(from, at - from));
  };
  std::size_t at = 0;
  if (t.empty() || t[at++] != '(') return std::nullopt;
  const std::size_t name = at;
  while (at < t.size() && (std::isalnum(static_cast<unsigned char>(t[at])) || t[at] == '_' || t[at] == '.')) ++at;
  if (at == name || std::isdigit(static_cast<unsigned char>(t[name])) || at >= t.size() || t[at++] != '+') return std::nullopt;
  RoundedUp out{t.substr(name, at - 1 - name)};
  const auto add = digits(at);
  if (!add || at + 1 >= t.size() || t[at] != ')' || t[at + 1] != '/') return std::nullopt;
  at += 2;
  const auto per = digits(at);
  if (!per || at != t.size() || *add < 1 || *per < 1) return std::nullopt;
  out.add = *add;
  out.per = *per;
  return out;
}

}  // namespace

std::vector<Hint> launch_overrun_hints(std::string_view source, const std::vector<CudaFunction>& functions,
                                       const std::vector<LaunchSite>& launches, const std::vector<Hint>& hints) {
  // Each kernel's unguarded access, by the kernel's name: its own cuda.missing_bounds_check.
  std::unordered_map<std::string, Span> unguarded;
  for (const auto& h : hints) {
    if (h.rule != "cuda.missing_bounds_check") continue;
    const auto f = std::upper_bound(functions.begin(), functions.end(), h.span.begin,
                                    [](std::size_t at, const CudaFunction& g) { return at < g.span.begin; });
    if (f == functions.begin()) continue;
    const CudaFunction& kernel = *std::prev(f);
    if (kernel.kind == CudaFunctionKind::Kernel && kernel.span.contains(h.span)) unguarded.emplace(kernel.name, h.span);
  }
  std::vector<Hint> out;
  if (unguarded.empty()) return out;
  for (const auto& launch : launches) {
    if (launch.form != LaunchForm::Chevron) continue;
    const auto access = unguarded.find(launch.kernel);
    if (access == unguarded.end()) continue;
    std::string grid = launch.grid;
    for (const auto& sizing : launch.sizing) {
      if (sizing.name == grid) grid = sizing.expression;
    }
    const auto rounded = rounded_up(grid);
    if (!rounded) continue;
    const std::string& n = rounded->n;
    std::string message = "grid '" + grid + "' rounds " + n + " up";
    if (rounded->add >= rounded->per) {
      message += " by a whole block more than the ceiling (" + n + " + " + std::to_string(rounded->per - 1) + ") / " +
                 std::to_string(rounded->per);
    }
    message += ", and '" + launch.kernel + "' never compares its index with a size: the last block's extra threads reach '" +
               std::string(access->second.text(source)) + "' past the end";
    out.push_back(make_hint("cuda.grid_overrun", launch.grid_span.empty() ? launch.span : launch.grid_span, std::move(message)));
  }
  return out;
}

std::vector<Hint> cuda_hints(std::string_view source, const CudaScan& scan, std::size_t function) {
  return CudaRules(source, scan).run(function);
}

}  // namespace hiera::engine::analysis
