#pragma once
// The fixed cost of one kernel launch, the least time a kernel takes however
// little it does: the planner's latency bound (engine/plan's Ceilings) and the
// editor's estimates (engine/analysis's launch floor) count the same figure.
namespace hiera::engine {

inline constexpr double kKernelLaunchUs = 3.0;

}  // namespace hiera::engine
