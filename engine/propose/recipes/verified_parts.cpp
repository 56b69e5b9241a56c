#include "engine/propose/recipes/verified_parts.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/common/number_text.h"
#include "engine/common/sha256.h"
#include "engine/propose/recipes/replacement_sets.h"

namespace hiera::engine::propose::recipes {

namespace {

// Everything a replacement emits, in one text (the digest's input).
std::string emitted_text(const Replacement& r) {
  std::string text = r.produces + "\n";
  for (const auto& name : r.covered) text += "covers " + name + "\n";
  for (const auto& s : r.statements) text += s + "\n";
  for (const auto& k : r.kernels) {
    text += "kernel " + k.name + "\n" + k.source + "\n";
    for (const auto& o : k.options) text += "option " + o + "\n";
  }
  for (const auto& d : r.definitions) text += "definition " + d + "\n";
  for (const auto& [flag, value] : r.settings) text += "set " + flag + "=" + value + "\n";
  if (r.cuda_graph) text += "cuda graph\n";
  return text;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Whether the `[` at `bracket` indexes a module list (`self.blocks[3]`), not a value (`qkv[0]`).
bool indexes_a_submodule(const std::string& text, std::size_t bracket) {
  std::size_t start = bracket;
  while (start > 0 && (word_char(text[start - 1]) || text[start - 1] == '_' || text[start - 1] == '.')) --start;
  return text.compare(start, 5, "self.") == 0;
}

// Node names become $0, $1 ... in order of first use (each `$` when
// `anonymous`), also inside longer identifiers (`_blocks_0_norm_in_shape`,
// kernel `fused_mul_1_vec`: generated names are built from node names, `_`
// joining the pieces); module indices (`blocks.3.norm`, `layers[3]`) become `#`.
std::string positional(const std::string& text, const std::set<std::string>& nodes,
                       std::map<std::string, std::string>& names, bool anonymous = false) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const bool starts_piece = i == 0 || !word_char(text[i - 1]);
    if (starts_piece && std::isdigit(static_cast<unsigned char>(text[i])) && i > 0 &&
        (text[i - 1] == '.' || (text[i - 1] == '[' && indexes_a_submodule(text, i - 1)))) {
      std::size_t end = i;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end < text.size() && (text[end] == '.' || text[end] == ']')) {
        out += '#';
        i = end;
        continue;
      }
    }
    // An attribute (`threadIdx.x`) is never a node, but a submodule of the model (`self.ln_2`: its
    // call_module node has that name) is; `_` only joins pieces.
    const bool of_self = i >= 5 && text.compare(i - 5, 5, "self.") == 0 && (i == 5 || !word_char(text[i - 6]));
    const bool attribute = i > 0 && text[i - 1] == '.' && !of_self;
    if (!starts_piece || attribute || !std::isalpha(static_cast<unsigned char>(text[i]))) {
      std::size_t end = i + 1;
      if (attribute) {
        while (end < text.size() && (word_char(text[end]) || text[end] == '_')) ++end;
      }
      out += text.substr(i, end - i);
      i = end;
      continue;
    }
    // The longest node name starting here and ending where the identifier or one of its `_` pieces ends.
    std::size_t run = i;
    while (run < text.size() && (word_char(text[run]) || text[run] == '_')) ++run;
    std::size_t matched = 0;
    for (std::size_t end = run; end > i; --end) {
      if (end < run && text[end] != '_') continue;
      if (nodes.count(text.substr(i, end - i))) {
        matched = end - i;
        break;
      }
    }
    if (matched == 0) {
      // Not a node name: copy up to the next `_` piece (which may start one).
      std::size_t piece = i + 1;
      while (piece < run && text[piece] != '_') ++piece;
      out += text.substr(i, piece - i);
      i = piece;
      continue;
    }
    if (anonymous) {
      out += '$';
    } else {
      auto [slot, added] = names.emplace(text.substr(i, matched), std::string());
      if (added) slot->second = "$" + std::to_string(names.size() - 1);
      out += slot->second;
    }
    i += matched;
  }
  return out;
}

std::string digest(const std::string& text) { return sha256_hex(text).substr(0, 16); }

std::string times(double speedup) { return fixed(speedup, 2) + "x"; }

void keep_best(std::optional<double>& slot, std::optional<double> value) {
  if (value && (!slot || *value > *slot)) slot = value;
}

}  // namespace

std::string part_key(const Replacement& r) {
  return r.recipe + ":" + (r.produces.empty() ? std::string("forward") : r.produces) + ":" + digest(emitted_text(r));
}

namespace {

std::set<std::string> node_names(const graph::OpGraph& graph) {
  std::set<std::string> nodes;
  for (const auto& n : graph.nodes) nodes.insert(n.name);
  return nodes;
}

std::string shape_of(const Replacement& r, const std::set<std::string>& nodes) {
  std::map<std::string, std::string> names;
  Replacement general = r;
  general.produces = positional(r.produces, nodes, names);
  general.covered.clear();
  for (auto& s : general.statements) s = positional(s, nodes, names);
  // Kernel sources also name values after nodes, and their helpers' locals
  // may share a node's name (`float x`): there every node name is one `$`.
  for (auto& k : general.kernels) {
    k.name = positional(k.name, nodes, names);
    k.source = positional(k.source, nodes, names, true);
  }
  for (auto& d : general.definitions) d = positional(d, nodes, names);
  return r.recipe + ":" + digest(emitted_text(general) + "covers " + std::to_string(r.covered.size()) + " nodes\n");
}

}  // namespace

std::string part_shape(const Replacement& r, const graph::OpGraph& graph) { return shape_of(r, node_names(graph)); }

std::vector<std::string> part_shapes(const std::vector<Replacement>& pool, const graph::OpGraph& graph) {
  const std::set<std::string> nodes = node_names(graph);
  std::vector<std::string> out;
  for (const auto& r : pool) out.push_back(shape_of(r, nodes));
  return out;
}

std::vector<PartEvidence> part_evidence(const std::vector<std::string>& keys, const std::vector<std::string>& shapes,
                                        const std::vector<Attempt>& history) {
  std::map<std::string, PartEvidence> by_key;
  // Passing candidates first: a failure's blame goes to a part no passing candidate holds.
  for (const auto& a : history) {
    if (!a.correct || a.candidate.parts.empty() || a.candidate.parts_under_compile) continue;
    for (const auto& part : a.candidate.parts) {
      PartEvidence& e = by_key[part.key];
      e.passed = true;
      keep_best(e.best_with, a.speedup);
      if (a.candidate.parts.size() == 1) keep_best(e.alone, a.speedup);
    }
  }
  for (const auto& a : history) {
    // A rejected candidate never reached verification: it says nothing about its parts.
    if (a.correct || a.candidate.parts.empty() || a.candidate.rejected || a.candidate.parts_under_compile) continue;
    std::vector<std::string> unverified;
    for (const auto& part : a.candidate.parts) {
      const auto found = by_key.find(part.key);
      if (found == by_key.end() || !found->second.passed) unverified.push_back(part.key);
    }
    if (unverified.size() != 1) continue;
    PartEvidence& e = by_key[unverified.front()];
    e.blamed = true;
    const std::string why = a.failures.empty() ? std::string("failed") : a.failures.front();
    e.blame = a.candidate.parts.size() == 1 ? a.candidate.id + " of it alone: " + why
                                            : a.candidate.id + " (its other parts passed elsewhere): " + why;
  }

  std::vector<PartEvidence> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (const auto it = by_key.find(keys[i]); it != by_key.end()) out[i] = it->second;
  }
  // Twins: a part never judged borrows the verdict of an instance of the same shape (a failure first).
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (out[i].passed || out[i].blamed) continue;
    const PartEvidence* twin = nullptr;
    for (std::size_t j = 0; j < keys.size(); ++j) {
      const auto it = by_key.find(keys[j]);
      if (j == i || shapes[j] != shapes[i] || it == by_key.end()) continue;
      if (it->second.blamed) {
        twin = &it->second;
        out[i].twin = keys[j];
        break;
      }
      if (it->second.alone && (!twin || *it->second.alone > *twin->alone)) {
        twin = &it->second;
        out[i].twin = keys[j];
      }
    }
    if (!twin) continue;
    if (twin->blamed) {
      out[i].blamed = true;
      out[i].blame = "the same rewrite of an identical region failed: " + twin->blame;
    } else {
      out[i].alone = twin->alone;
    }
  }
  return out;
}

namespace {

// The parts that qualify for the stitched module, best first where two rewrite the same region.
std::vector<std::size_t> qualifying_parts(const std::vector<Replacement>& pool, const std::vector<PartEvidence>& evidence) {
  // A part qualifies when it was faster alone (or its twin was), or, never tried alone, passed in a faster candidate.
  const auto gain = [&](std::size_t i) -> std::optional<double> {
    const PartEvidence& e = evidence[i];
    if (e.blamed) return std::nullopt;
    if (e.alone) return *e.alone > 1.0 ? e.alone : std::nullopt;
    if (e.passed && e.best_with && *e.best_with > 1.0) return e.best_with;
    return std::nullopt;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (gain(i)) order.push_back(i);
  }
  // Measured alone beats "passed with others"; then the larger speedup; then the pool's order.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool alone_a = evidence[a].alone.has_value(), alone_b = evidence[b].alone.has_value();
    if (alone_a != alone_b) return alone_a;
    return *gain(a) > *gain(b);
  });
  std::vector<std::size_t> chosen;
  for (const auto i : order) {
    if (std::none_of(chosen.begin(), chosen.end(), [&](std::size_t c) { return conflict(pool[i], pool[c]); })) {
      chosen.push_back(i);
    }
  }
  return chosen;
}


}  // namespace

std::vector<std::size_t> compose_verified(const std::vector<Replacement>& pool,
                                          const std::vector<PartEvidence>& evidence) {
  std::vector<std::size_t> chosen = qualifying_parts(pool, evidence);
  if (chosen.size() < 2) return {};
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::optional<Bisection> bisect_failure(const std::vector<Replacement>& pool, const std::vector<std::string>& keys,
                                        const std::vector<PartEvidence>& evidence, const std::vector<Attempt>& history) {
  for (auto a = history.rbegin(); a != history.rend(); ++a) {
    if (a->correct || a->candidate.rejected || a->candidate.parts.size() < 2 || a->candidate.parts_under_compile) continue;
    std::vector<std::size_t> unjudged;
    for (const auto& part : a->candidate.parts) {
      const auto at = std::find(keys.begin(), keys.end(), part.key);
      if (at == keys.end()) {
        unjudged.clear();  // made of rewrites this request's pool does not hold (another space): not here
        break;
      }
      const auto i = static_cast<std::size_t>(at - keys.begin());
      if (!evidence[i].passed && !evidence[i].blamed) unjudged.push_back(i);
    }
    if (unjudged.size() < 2) continue;
    // A risky rewrite (another algorithm, a capture) is the likelier culprit: where some are and some
    // are not, the first split is the safe ones (the set without the risky ones), then halves.
    const auto safe = std::stable_partition(unjudged.begin(), unjudged.end(), [&](std::size_t i) { return !pool[i].risky; });
    const auto safe_count = static_cast<std::size_t>(safe - unjudged.begin());
    const std::size_t take = safe_count > 0 && safe_count < unjudged.size() ? safe_count : unjudged.size() / 2;
    Bisection b;
    b.failed = a->candidate.id.empty() ? std::string("an earlier candidate") : a->candidate.id;
    b.unjudged = unjudged.size();
    b.set = qualifying_parts(pool, evidence);
    for (std::size_t n = 0; n < take; ++n) {
      const std::size_t i = unjudged[n];
      if (std::none_of(b.set.begin(), b.set.end(), [&](std::size_t c) { return conflict(pool[i], pool[c]); })) {
        b.set.push_back(i);
        ++b.tried;
      }
    }
    if (b.tried == 0) continue;
    std::sort(b.set.begin(), b.set.end());
    return b;
  }
  return std::nullopt;
}

std::string evidence_text(const PartEvidence& e) {
  if (e.twin && e.alone) return "(as its identical region, " + times(*e.alone) + " alone)";
  if (e.alone) return "(" + times(*e.alone) + " alone)";
  if (e.best_with) return "(passed in a " + times(*e.best_with) + " candidate)";
  return "(not yet judged)";
}

}  // namespace hiera::engine::propose::recipes
