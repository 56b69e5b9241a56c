#pragma once
// Go to definition from a launch (textDocument/definition): the kernel name
// of a `kernel<<<…>>>(…)` launch or of cudaLaunchKernel's first argument, to
// the kernel's `__global__` definition.
#include <cstddef>
#include <optional>

#include "engine/facade/document_analysis.h"

namespace hiera::server {

// The launch whose kernel name covers `offset` (the byte just after the name
// counts, as a cursor stands there); nullptr when there is none.
const engine::analysis::LaunchSite* launch_at_kernel_name(const engine::analysis::Analysis& analysis, std::size_t offset);

}  // namespace hiera::server
