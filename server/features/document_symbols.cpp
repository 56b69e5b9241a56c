#include "server/features/document_symbols.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "engine/facade/quantity_text.h"
#include "server/features/analysis_symbols.h"
#include "engine/facade/cost_estimates.h"
#include "server/features/cost_text.h"

namespace hiera::server {

namespace analysis = engine::analysis;
namespace lsp = protocol::lsp;

namespace {

constexpr std::size_t npos = std::string_view::npos;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The cost the lens shows, when there is one to show (a measurement or a
// roofline time); nullopt rather than "not measured yet".
std::optional<std::string> cost_detail(const std::optional<Measurement>& measured, const std::optional<engine::facade::CostEstimate>& estimate,
                                       const EstimateTarget& target) {
  const bool has_measurement = measured && (measured->median_ms || measured->verified_speedup);
  if (!has_measurement && !(estimate && estimate->seconds)) return std::nullopt;
  return lens_title(measured, estimate, target);
}

// Runs of white space as one space: expressions written over several lines.
std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Just past the bracket that closes the one at `open` ('(' or '{'), skipping
// comments and string and character literals; npos when it is not closed.
std::size_t past_matching(std::string_view text, std::size_t open) {
  const char opening = text[open];
  const char closing = opening == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t k = open; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '/' && k + 1 < text.size() && text[k + 1] == '/') {
      k = text.find('\n', k);
      if (k == npos) return npos;
    } else if (c == '/' && k + 1 < text.size() && text[k + 1] == '*') {
      k = text.find("*/", k + 2);
      if (k == npos) return npos;
      ++k;
    } else if (c == '"' || c == '\'') {
      for (++k; k < text.size() && text[k] != c; ++k) {
        if (text[k] == '\\') ++k;
      }
      if (k >= text.size()) return npos;
    } else if (c == opening) {
      ++depth;
    } else if (c == closing && --depth == 0) {
      return k + 1;
    }
  }
  return npos;
}

// A host function as the outline needs it. The analysis keeps only each
// launch's caller's name, so its definition is found in the text: the last
// `name(…) … {` between `floor` and the first launch (a call is followed by
// ';', not '{'), its body to the matching brace.
struct HostFunction {
  analysis::Span name;
  std::size_t begin = 0, end = 0;
};

std::optional<HostFunction> find_host_function(std::string_view text, const std::string& name, std::size_t floor,
                                               std::size_t launch) {
  if (name.empty()) return std::nullopt;
  std::size_t from = launch;
  while (from > floor) {
    const std::size_t found = text.rfind(name, from - 1);
    if (found == npos || found < floor) return std::nullopt;
    from = found;
    const std::size_t after = found + name.size();
    if ((found > 0 && ident_char(text[found - 1])) || (after < text.size() && ident_char(text[after]))) continue;
    std::size_t k = after;
    while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
    if (k >= text.size() || text[k] != '(') continue;
    k = past_matching(text, k);
    if (k == npos || k > launch) continue;
    // Qualifiers between the parameters and the body: const, noexcept, override.
    while (k < text.size() && (std::isspace(static_cast<unsigned char>(text[k])) || ident_char(text[k]))) ++k;
    if (k >= text.size() || text[k] != '{' || k > launch) continue;
    const std::size_t end = past_matching(text, k);
    if (end == npos || end <= launch) continue;
    // The definition starts where its line's text does (the return type).
    std::size_t begin = text.rfind('\n', found);
    begin = begin == npos ? 0 : begin + 1;
    while (begin < found && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
    return HostFunction{{found, after}, std::max(begin, floor), end};
  }
  return std::nullopt;
}

class Outline {
 public:
  Outline(const TextDocument& document, const analysis::Analysis& a, const MeasurementStore& measurements,
          const EstimateTarget& target, PositionEncoding encoding)
      : document_(document), a_(a), measurements_(measurements), target_(target), encoding_(encoding),
        roofline_(target.roofline ? &*target.roofline : nullptr) {}

  std::vector<lsp::DocumentSymbol> cuda() const {
    // Functions and launch groups, merged by where they start.
    std::vector<std::pair<std::size_t, lsp::DocumentSymbol>> top;
    for (const auto& f : a_.functions) {
      if (f.kind == analysis::CudaFunctionKind::Host) continue;
      lsp::DocumentSymbol symbol{f.name, std::nullopt, lsp::SymbolKind::Function, range(f.span), range(f.name_span), {}};
      if (f.kind == analysis::CudaFunctionKind::Kernel) {
        symbol.detail = cost_detail(measurements_.get(document_.uri(), f.name), engine::facade::kernel_estimate(f, roofline_), target_);
      } else {
        symbol.detail = "__device__";
      }
      top.emplace_back(f.span.begin, std::move(symbol));
    }
    std::size_t floor = 0;
    for (std::size_t i = 0; i < a_.launches.size();) {
      const auto& first = a_.launches[i];
      std::size_t j = i + 1;
      while (!first.caller.empty() && j < a_.launches.size() && a_.launches[j].caller == first.caller) ++j;
      // Host code starts after the function definitions before it.
      for (const auto& f : a_.functions) {
        if (f.span.end <= first.span.begin) floor = std::max(floor, f.span.end);
      }
      std::vector<lsp::DocumentSymbol> launches;
      for (std::size_t k = i; k < j; ++k) launches.push_back(launch_symbol(a_.launches[k]));
      const auto& last = a_.launches[j - 1];
      if (first.caller.empty()) {
        for (std::size_t k = 0; k < launches.size(); ++k) top.emplace_back(a_.launches[i + k].span.begin, std::move(launches[k]));
      } else {
        const auto host = find_host_function(document_.text(), first.caller, floor, first.span.begin);
        analysis::Span whole{first.span.begin, last.span.end}, name = first.kernel_span;
        if (host && host->end >= last.span.end) {
          whole = {host->begin, host->end};
          name = host->name;
        }
        lsp::DocumentSymbol symbol{first.caller, engine::plan::count_of(static_cast<long long>(j - i), "launch", "launches"),
                                   lsp::SymbolKind::Function, range(whole), range(name), std::move(launches)};
        top.emplace_back(whole.begin, std::move(symbol));
        floor = whole.end;
      }
      floor = std::max(floor, last.span.end);
      i = j;
    }
    std::stable_sort(top.begin(), top.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
    std::vector<lsp::DocumentSymbol> out;
    for (auto& [begin, symbol] : top) out.push_back(std::move(symbol));
    return out;
  }

  std::vector<lsp::DocumentSymbol> python() const {
    std::vector<lsp::DocumentSymbol> out;
    for (const auto& m : a_.modules) {
      lsp::DocumentSymbol symbol{m.name, cost_detail(measurements_.get(document_.uri(), m.name), engine::facade::module_estimate(m, roofline_), target_),
                                 lsp::SymbolKind::Class, range(m.span), range(m.name_span), {}};
      if (m.forward) {
        const auto& forward = *m.forward;
        analysis::Span name = forward;
        if (const auto at = document_.text().find("forward", forward.begin); at != npos && at + 7 <= forward.end) {
          name = {at, at + 7};
        }
        lsp::DocumentSymbol method{"forward", engine::plan::count_of(static_cast<long long>(m.ops.size()), "op", "ops"),
                                   lsp::SymbolKind::Method, range(forward), range(name), {}};
        for (const auto& op : m.ops) {
          std::string detail = op.op;
          if (const auto cost = cost_detail(std::nullopt, engine::facade::op_estimate(op, roofline_), target_)) detail += " · " + *cost;
          method.children.push_back({op.call, detail, lsp::SymbolKind::Operator, range(op.span), range(op.span), {}});
        }
        symbol.children.push_back(std::move(method));
      }
      out.push_back(std::move(symbol));
    }
    return out;
  }

 private:
  lsp::Range range(const analysis::Span& span) const {
    return {document_.position_of(span.begin, encoding_), document_.position_of(span.end, encoding_)};
  }

  lsp::DocumentSymbol launch_symbol(const analysis::LaunchSite& launch) const {
    // The configuration as written, the defaults (no shared memory, stream 0) left out.
    std::string config = one_line(launch.grid) + ", " + one_line(launch.block);
    if (launch.shared_bytes != "0" || launch.stream != "0") config += ", " + one_line(launch.shared_bytes);
    if (launch.stream != "0") config += ", " + one_line(launch.stream);
    std::string name = launch.form == analysis::LaunchForm::Chevron ? launch.kernel + "<<<" + config + ">>>"
                                                                     : "cudaLaunchKernel(" + launch.kernel + ", " + config + ")";
    std::optional<std::string> detail;
    if (const auto* kernel = find_kernel(a_, launch.kernel)) {
      detail = cost_detail(measurements_.get(document_.uri(), kernel->name), engine::facade::kernel_estimate(*kernel, roofline_), target_);
    }
    if (launch.in_loop) detail = detail ? *detail + " · in a loop" : "in a loop";
    return {std::move(name), std::move(detail), lsp::SymbolKind::Event, range(launch.span), range(launch.kernel_span), {}};
  }

  const TextDocument& document_;
  const analysis::Analysis& a_;
  const MeasurementStore& measurements_;
  const EstimateTarget& target_;
  PositionEncoding encoding_;
  const engine::GpuCeilings* roofline_;
};

}  // namespace

std::vector<lsp::DocumentSymbol> document_symbols(const TextDocument& document, const analysis::Analysis& a,
                                                  const MeasurementStore& measurements, const EstimateTarget& target,
                                                  PositionEncoding encoding) {
  Outline outline(document, a, measurements, target, encoding);
  return a.language == analysis::Language::Python ? outline.python() : outline.cuda();
}

}  // namespace hiera::server
