#include "server/features/layer_definition.h"

namespace hiera::server {

const engine::analysis::TorchLayer* layer_at_call(const engine::analysis::Analysis& analysis, std::string_view text,
                                                  std::size_t offset) {
  constexpr std::string_view kSelf = "self.";
  for (const auto& module : analysis.modules) {
    for (const auto& op : module.ops) {
      if (op.call.rfind(kSelf, 0) != 0 || offset < op.span.begin || offset > op.span.begin + op.call.size()) continue;
      if (text.substr(op.span.begin, op.call.size()) != op.call) continue;  // the call is not written where the op starts
      const auto name = std::string_view(op.call).substr(kSelf.size());
      for (const auto& layer : module.layers) {
        if (layer.name == name) return &layer;
      }
    }
  }
  return nullptr;
}

}  // namespace hiera::server
