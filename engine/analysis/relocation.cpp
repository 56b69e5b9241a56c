#include "engine/analysis/relocation.h"

namespace hiera::engine::analysis {

void relocate(Span& span, std::int64_t delta) {
  span.begin = static_cast<std::size_t>(static_cast<std::int64_t>(span.begin) + delta);
  span.end = static_cast<std::size_t>(static_cast<std::int64_t>(span.end) + delta);
}

void relocate(CudaFunction& function, std::int64_t delta) {
  relocate(function.span, delta);
  relocate(function.name_span, delta);
  if (function.body) relocate(*function.body, delta);
  for (auto& p : function.parameters) relocate(p.span, delta);
}

void relocate(LaunchSite& launch, std::int64_t delta) {
  relocate(launch.span, delta);
  relocate(launch.kernel_span, delta);
  // An empty grid or block span is one the launch does not give (cuda_findings.h): it stays unset.
  if (!launch.grid_span.empty()) relocate(launch.grid_span, delta);
  if (!launch.block_span.empty()) relocate(launch.block_span, delta);
  for (auto& s : launch.sizing) relocate(s.span, delta);
}

void relocate(TorchModule& module, std::int64_t delta) {
  relocate(module.span, delta);
  relocate(module.name_span, delta);
  if (module.init) relocate(*module.init, delta);
  if (module.forward) relocate(*module.forward, delta);
  for (auto& layer : module.layers) relocate(layer.span, delta);
  for (auto& op : module.ops) relocate(op.span, delta);
}

void relocate(Hint& hint, std::int64_t delta) {
  relocate(hint.span, delta);
  for (auto& edit : hint.fix) relocate(edit.span, delta);
}

}  // namespace hiera::engine::analysis
