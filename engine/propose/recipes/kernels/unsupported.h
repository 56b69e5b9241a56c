#pragma once
// Thrown while a group of nodes is turned into a kernel and something in it is
// beyond the generator (an argument kind, a broadcast pattern, a dtype). The
// finders catch it and keep the message as the group's skip reason, so one
// odd node costs its group and nothing else.
#include <stdexcept>

namespace hiera::engine::propose::recipes::kernels {

struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace hiera::engine::propose::recipes::kernels
