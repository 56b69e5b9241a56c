#include "engine/spec/target_kind.h"

namespace hiera::engine::spec {

const char* to_string(TargetKind kind) {
  switch (kind) {
    case TargetKind::Cuda: return "cuda";
    case TargetKind::Pytorch: return "pytorch";
  }
  return "?";
}

std::optional<TargetKind> parse_target_kind(std::string_view text) {
  if (text == "cuda") return TargetKind::Cuda;
  if (text == "pytorch") return TargetKind::Pytorch;
  return std::nullopt;
}

}  // namespace hiera::engine::spec
