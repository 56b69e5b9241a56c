#pragma once
// The parameter names of a __global__ kernel, read from its CUDA source, so the
// `hiera: arg` annotations can be checked against the kernel they describe
// (same names, same order): a launch with its arguments in the wrong order
// would verify garbage.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::spec {

// nullopt when no `__global__` kernel of that name is found (a name
// expression such as "scale<float>" is looked up as "scale").
std::optional<std::vector<std::string>> kernel_parameters(std::string_view cuda_source, std::string_view kernel);

}  // namespace hiera::engine::spec
