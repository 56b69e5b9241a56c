#include "engine/analysis/cuda_thread_index.h"

#include <vector>

namespace hiera::engine::analysis {

namespace {

constexpr int kMaxDepth = 24;  // definitions followed; a deeper chain is irregular

IndexClass irregular(IndexClass c = {}) {
  c.variation = WarpVariation::Irregular;
  c.stride.reset();
  c.value.reset();
  return c;
}

void merge_sources(IndexClass& into, const IndexClass& from) {
  into.uses_block = into.uses_block || from.uses_block;
  into.uses_thread = into.uses_thread || from.uses_thread;
  into.variables.insert(from.variables.begin(), from.variables.end());
}

bool is_operand_end(const Token& t, std::string_view text) {
  return t.kind == TokenKind::Identifier || t.kind == TokenKind::Number || text == ")" || text == "]";
}

std::optional<std::int64_t> integer(std::string_view t) {
  std::int64_t value = 0;
  std::size_t i = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) value = value * 10 + (t[i] - '0');
  if (i == 0) return std::nullopt;
  for (; i < t.size(); ++i) {
    if (t[i] != 'u' && t[i] != 'U' && t[i] != 'l' && t[i] != 'L') return std::nullopt;
  }
  return value;
}

}  // namespace

ThreadIndexClassifier::ThreadIndexClassifier(std::string_view source, const CudaScan& scan, const CudaBody& body)
    : source_(source), scan_(scan), body_(body) {}

std::string_view ThreadIndexClassifier::text(std::uint32_t i) const {
  return i < scan_.code.size() ? scan_.code[i].text(source_) : std::string_view{};
}

std::uint32_t ThreadIndexClassifier::match(std::uint32_t open, std::uint32_t limit) const {
  const std::string_view o = text(open);
  const std::string_view c = o == "(" ? ")" : "]";
  int depth = 0;
  for (std::uint32_t k = open; k < limit; ++k) {
    if (text(k) == o) ++depth;
    else if (text(k) == c && --depth == 0) return k;
  }
  return limit;
}

IndexClass ThreadIndexClassifier::classify(TokenRange expression, std::uint32_t at) const { return sum(expression, at, 0); }

// Terms joined by binary + and -.
IndexClass ThreadIndexClassifier::sum(TokenRange r, std::uint32_t at, int depth) const {
  std::vector<TokenRange> terms;
  int nesting = 0;
  std::uint32_t start = r.begin;
  for (std::uint32_t k = r.begin; k < r.end; ++k) {
    const auto t = text(k);
    if (t == "(" || t == "[") ++nesting;
    else if (t == ")" || t == "]") --nesting;
    else if (nesting == 0 && (t == "?" || t == "<" || t == ">" || t == "==" || t == "!=" || t == "<=" || t == ">=" ||
                              t == "&&" || t == "||" || t == "=")) {
      IndexClass c;
      for (std::uint32_t j = r.begin; j < r.end; ++j) {
        if (scan_.code[j].kind == TokenKind::Identifier) merge_sources(c, factor({j, j + 1}, at, depth + 1));
      }
      return irregular(c);  // a condition or a selection: not an affine index
    } else if (nesting == 0 && (t == "+" || t == "-") && k > start && is_operand_end(scan_.code[k - 1], text(k - 1))) {
      terms.push_back({start, k});
      start = k + 1;
    }
  }
  terms.push_back({start, r.end});
  IndexClass out;
  int units = 0, strided = 0;
  std::optional<std::int64_t> stride;
  std::optional<std::int64_t> value = 0;
  for (const auto& term : terms) {
    const IndexClass c = product(term, at, depth);
    merge_sources(out, c);
    switch (c.variation) {
      case WarpVariation::Irregular: return irregular(out);
      case WarpVariation::Unit: ++units; break;
      case WarpVariation::Strided:
        if (strided++ == 0) stride = c.stride;
        else if (stride != c.stride) stride.reset();
        break;
      case WarpVariation::Uniform:
        if (value && c.value) *value += *c.value;  // the sign of a '-' term is not tracked: values only feed strides
        else value.reset();
        break;
    }
  }
  if (units > 0 && strided > 0) return irregular(out);
  if (units > 0) out.variation = WarpVariation::Unit;
  else if (strided > 0) {
    out.variation = WarpVariation::Strided;
    out.stride = stride;
  } else if (terms.size() == 1) {
    out.value = value;
  }
  return out;
}

// Factors joined by * / % & << >>, folded left to right.
IndexClass ThreadIndexClassifier::product(TokenRange r, std::uint32_t at, int depth) const {
  std::vector<std::pair<std::string_view, TokenRange>> factors;  // operator before each factor
  int nesting = 0;
  std::uint32_t start = r.begin;
  std::string_view op;
  for (std::uint32_t k = r.begin; k < r.end; ++k) {
    const auto t = text(k);
    if (t == "(" || t == "[") ++nesting;
    else if (t == ")" || t == "]") --nesting;
    else if (nesting == 0 && k > start && (t == "*" || t == "/" || t == "%" || t == "&" || t == "<<" || t == ">>")) {
      factors.emplace_back(op, TokenRange{start, k});
      op = t;
      start = k + 1;
    }
  }
  factors.emplace_back(op, TokenRange{start, r.end});
  IndexClass acc = factor(factors[0].second, at, depth);
  for (std::size_t i = 1; i < factors.size(); ++i) {
    const auto& [o, range] = factors[i];
    const IndexClass rhs = factor(range, at, depth);
    IndexClass next;
    merge_sources(next, acc);
    merge_sources(next, rhs);
    const bool lu = acc.variation == WarpVariation::Uniform, ru = rhs.variation == WarpVariation::Uniform;
    if (lu && ru) {
      next.variation = WarpVariation::Uniform;
      if (acc.value && rhs.value) {
        if (o == "*") next.value = *acc.value * *rhs.value;
        else if (o == "/" && *rhs.value != 0) next.value = *acc.value / *rhs.value;
        else if (o == "%" && *rhs.value != 0) next.value = *acc.value % *rhs.value;
        else if (o == "<<" && *rhs.value >= 0 && *rhs.value < 62) next.value = *acc.value << *rhs.value;
        else if (o == ">>" && *rhs.value >= 0 && *rhs.value < 62) next.value = *acc.value >> *rhs.value;
        else if (o == "&") next.value = *acc.value & *rhs.value;
      }
    } else if (o == "*" && (lu || ru)) {
      const IndexClass& varying = lu ? rhs : acc;
      const IndexClass& scale = lu ? acc : rhs;
      if (varying.variation == WarpVariation::Irregular) {
        next = irregular(next);
      } else {
        const std::optional<std::int64_t> base = varying.variation == WarpVariation::Unit ? std::optional<std::int64_t>(1) : varying.stride;
        const std::optional<std::int64_t> s = base && scale.value ? std::optional<std::int64_t>(*base * *scale.value) : std::nullopt;
        if (s && (*s == 1 || *s == -1)) next.variation = WarpVariation::Unit;
        else if (s && *s == 0) next.variation = WarpVariation::Uniform;
        else {
          next.variation = WarpVariation::Strided;
          next.stride = s;
        }
      }
    } else if ((o == "/" || o == ">>") && ru && acc.variation != WarpVariation::Irregular) {
      // tid / 32: neighbouring threads share a value (a broadcast, not a stride).
      next.variation = acc.variation == WarpVariation::Unit ? WarpVariation::Uniform : WarpVariation::Irregular;
    } else if ((o == "%" || o == "&") && ru) {
      next.variation = acc.variation;  // tid % 32 keeps neighbours contiguous
      next.stride = acc.stride;
    } else if (o == "<<" && ru && rhs.value && *rhs.value >= 0 && *rhs.value < 31 && acc.variation != WarpVariation::Irregular) {
      const std::int64_t scale = std::int64_t{1} << *rhs.value;
      const std::optional<std::int64_t> base = acc.variation == WarpVariation::Unit ? std::optional<std::int64_t>(1) : acc.stride;
      next.variation = scale == 1 ? acc.variation : WarpVariation::Strided;
      if (base) next.stride = *base * scale;
    } else {
      next = irregular(next);
    }
    acc = std::move(next);
  }
  return acc;
}

IndexClass ThreadIndexClassifier::factor(TokenRange r, std::uint32_t at, int depth) const {
  if (r.empty() || depth > kMaxDepth) return irregular();
  const auto first = text(r.begin);
  if (first == "-" || first == "+" || first == "~" || first == "!") {
    IndexClass c = factor({r.begin + 1, r.end}, at, depth + 1);
    if (first == "-" && c.value) c.value = -*c.value;
    if (first == "~" || first == "!") c.value.reset();
    return c;
  }
  if (first == "(") {
    const std::uint32_t close = match(r.begin, r.end);
    if (close + 1 == r.end) return sum({r.begin + 1, close}, at, depth + 1);
    // A C-style cast: (int)x.
    bool type_only = close < r.end;
    for (std::uint32_t k = r.begin + 1; k < close && type_only; ++k) {
      type_only = scan_.code[k].kind == TokenKind::Identifier || text(k) == "*";
    }
    if (type_only) return factor({close + 1, r.end}, at, depth + 1);
    return irregular();
  }
  const Token& token = scan_.code[r.begin];
  if (token.kind == TokenKind::Number) {
    IndexClass c;
    c.value = integer(first);
    return r.end == r.begin + 1 ? c : irregular();
  }
  if (token.kind != TokenKind::Identifier) return irregular();
  // threadIdx.x / blockIdx.y / blockDim.x / gridDim.x
  if (r.end == r.begin + 3 && text(r.begin + 1) == ".") {
    const auto member = text(r.begin + 2);
    IndexClass c;
    if (first == "threadIdx") {
      c.uses_thread = true;
      c.variables.insert("threadIdx");
      if (member == "x") c.variation = WarpVariation::Unit;
    } else if (first == "blockIdx") {
      c.uses_block = true;
      c.variables.insert("blockIdx");
    }
    return c;
  }
  if (r.end == r.begin + 1) return variable(first, at, depth + 1);
  // A call or a subscript: uniform only when everything inside is.
  if (r.begin + 1 < r.end && (text(r.begin + 1) == "(" || text(r.begin + 1) == "[") && match(r.begin + 1, r.end) + 1 == r.end) {
    IndexClass inner = sum({r.begin + 2, r.end - 1}, at, depth + 1);
    if (first == "min" || first == "max" || first == "__ldg") return inner.variation == WarpVariation::Uniform ? inner : irregular(inner);
    if (inner.variation == WarpVariation::Uniform) {
      inner.value.reset();
      return inner;
    }
    return irregular(inner);
  }
  return irregular();
}

IndexClass ThreadIndexClassifier::variable(std::string_view name, std::uint32_t at, int depth) const {
  if (const auto c = scan_.constants.find(name); c != scan_.constants.end()) {
    IndexClass out;
    out.value = c->second;
    return out;
  }
  const CudaAssignment* definition = nullptr;
  for (const auto& a : body_.assignments) {
    if (a.at >= at) break;
    if (a.name == name && a.type != "dim3") definition = &a;
  }
  IndexClass out;
  if (definition && depth <= kMaxDepth) {
    out = sum(definition->value, definition->at, depth + 1);
    // A variable assigned again in a loop (tid += stride) keeps its class:
    // the per-thread offset is what the warp sees.
  }
  out.variables.insert(std::string(name));
  return out;
}

}  // namespace hiera::engine::analysis
