#pragma once
// Where the findings of an analysis are, for the editor features: the
// symbols a user can profile or optimize (kernels and nn.Module classes), and
// what is under the cursor for a hover. Byte offsets in, findings out.
#include <optional>
#include <string>
#include <vector>

#include "engine/facade/document_analysis.h"

namespace hiera::server {

enum class SymbolKind { Kernel, Module };
const char* to_string(SymbolKind kind);  // "kernel" / "module": the `kind` of the hiera.*Symbol commands

// A kernel (`__global__`, not a device function) or an nn.Module class.
struct CostSymbol {
  SymbolKind kind = SymbolKind::Kernel;
  std::string name;
  engine::analysis::Span span;       // the whole definition
  engine::analysis::Span name_span;
};

// Every kernel and module class, in source order.
std::vector<CostSymbol> cost_symbols(const engine::analysis::Analysis& analysis);

// The symbol an action at [begin, end] is for: the kernel or module whose
// definition contains `begin`, else the kernel of the file a launch
// containing `begin` launches.
std::optional<CostSymbol> symbol_at(const engine::analysis::Analysis& analysis, engine::analysis::Span range);

// What a hover at one byte can be about; exactly one pointer is set, except
// that a launch's `kernel` is also set when the file defines that kernel and
// an op's `module` is the module whose forward holds it.
struct HoverTarget {
  const engine::analysis::CudaFunction* kernel = nullptr;
  const engine::analysis::LaunchSite* launch = nullptr;
  const engine::analysis::TorchModule* module = nullptr;
  const engine::analysis::ForwardOp* op = nullptr;
  engine::analysis::Span span;  // what the hover covers
};

// A kernel's name, a launch expression, a forward op's call (the innermost
// when calls nest) or a module class's name containing `offset`; nullopt
// anywhere else.
std::optional<HoverTarget> hover_target(const engine::analysis::Analysis& analysis, std::size_t offset);

// The kernel the file defines with this name (the first definition); nullptr if none.
const engine::analysis::CudaFunction* find_kernel(const engine::analysis::Analysis& analysis, const std::string& name);

}  // namespace hiera::server
