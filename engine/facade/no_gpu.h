#pragma once
// A run refused before it starts: no worker has a GPU and no CPU run was asked
// for (OptimizerSetupArgs::device). what() says which workers answered without
// one; each front end adds what to set up, in its own words (flags, settings).
#include <stdexcept>

namespace hiera::engine::facade {

struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace hiera::engine::facade
