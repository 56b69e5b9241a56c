#include "server/features/analysis_symbols.h"

namespace hiera::server {

namespace analysis = engine::analysis;

namespace {

// Half-open, as a cursor stands on the character after it.
bool covers(const analysis::Span& span, std::size_t offset) { return span.begin <= offset && offset < span.end; }

}  // namespace

const char* to_string(SymbolKind kind) { return kind == SymbolKind::Kernel ? "kernel" : "module"; }

std::vector<CostSymbol> cost_symbols(const analysis::Analysis& a) {
  std::vector<CostSymbol> out;
  for (const auto& f : a.functions) {
    if (f.kind == analysis::CudaFunctionKind::Kernel) out.push_back({SymbolKind::Kernel, f.name, f.span, f.name_span});
  }
  for (const auto& m : a.modules) out.push_back({SymbolKind::Module, m.name, m.span, m.name_span});
  return out;
}

const analysis::CudaFunction* find_kernel(const analysis::Analysis& a, const std::string& name) {
  for (const auto& f : a.functions) {
    if (f.kind == analysis::CudaFunctionKind::Kernel && f.name == name) return &f;
  }
  return nullptr;
}

std::optional<CostSymbol> symbol_at(const analysis::Analysis& a, analysis::Span range) {
  // A definition's last byte (its closing brace) still counts as inside.
  for (auto& symbol : cost_symbols(a)) {
    if (symbol.span.begin <= range.begin && range.begin <= symbol.span.end) return symbol;
  }
  for (const auto& launch : a.launches) {
    if (!covers(launch.span, range.begin)) continue;
    if (const auto* kernel = find_kernel(a, launch.kernel)) {
      return CostSymbol{SymbolKind::Kernel, kernel->name, kernel->span, kernel->name_span};
    }
  }
  return std::nullopt;
}

std::optional<HoverTarget> hover_target(const analysis::Analysis& a, std::size_t offset) {
  for (const auto& f : a.functions) {
    if (f.kind == analysis::CudaFunctionKind::Kernel && covers(f.name_span, offset)) {
      return HoverTarget{&f, nullptr, nullptr, nullptr, f.name_span};
    }
  }
  for (const auto& launch : a.launches) {
    if (covers(launch.span, offset)) return HoverTarget{find_kernel(a, launch.kernel), &launch, nullptr, nullptr, launch.span};
  }
  for (const auto& m : a.modules) {
    if (covers(m.name_span, offset)) return HoverTarget{nullptr, nullptr, &m, nullptr, m.name_span};
    if (!m.forward || !covers(*m.forward, offset)) continue;
    const analysis::ForwardOp* innermost = nullptr;
    for (const auto& op : m.ops) {
      if (covers(op.span, offset) && (!innermost || op.span.size() < innermost->span.size())) innermost = &op;
    }
    if (innermost) return HoverTarget{nullptr, nullptr, &m, innermost, innermost->span};
  }
  return std::nullopt;
}

}  // namespace hiera::server
