#include "server/features/kernel_definition.h"

namespace hiera::server {

const engine::analysis::LaunchSite* launch_at_kernel_name(const engine::analysis::Analysis& analysis, std::size_t offset) {
  for (const auto& launch : analysis.launches) {
    if (launch.kernel_span.begin <= offset && offset <= launch.kernel_span.end) return &launch;
  }
  return nullptr;
}

}  // namespace hiera::server
