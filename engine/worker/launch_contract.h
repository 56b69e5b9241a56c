#pragma once
// The launch contract of a CUDA task (engine/eval/JOB_PROTOCOL.md): sizes,
// typed arguments with roles and extents, and the launch geometry of the
// reference and the candidate, all as integer size expressions. Parsing checks
// every expression against the sizes up front, so a bad contract is one clear
// ContractError (InvalidParams) before anything touches the GPU.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/kernel_args.h"
#include "engine/common/launch_geometry.h"
#include "engine/common/size_expression.h"
#include "engine/worker/scalar_types.h"

namespace hiera::engine::worker {

// The contract's vocabulary is the engine's too (engine/common).
using engine::ArgRole;
using engine::LaunchGeometry;
using engine::SizeMap;
// The worker's older name for SizeMap, still used by native_evaluator.cpp.
using SizeEnv = SizeMap;

class ContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ContractArg {
  std::string name;
  ArgRole role = ArgRole::Input;
  ScalarType type = ScalarType::Float32;
  std::string extent;  // arrays: element count, a size expression
  std::string value;   // scalars: a number, or a size expression
  // Optional (an extension of the protocol): inputs drawn uniformly from
  // [lo, hi) instead of the trial's distribution, for index or mask arguments
  // that random values would send out of bounds.
  std::optional<std::pair<double, double>> range;
  bool is_array() const { return role != ArgRole::Scalar; }
  bool is_compared() const { return role == ArgRole::Output || role == ArgRole::InOut; }
};

struct LaunchContract {
  SizeMap sizes;
  std::optional<SizeMap> second_sizes;  // already merged over `sizes`
  std::vector<ContractArg> args;
  LaunchGeometry reference_launch;
  LaunchGeometry candidate_launch;  // the reference's when the contract gives none
  std::optional<std::string> flops;
  std::optional<std::string> bytes;
  // Taken to mean the candidate may write its `input` arguments (work in
  // place); when false, any change to an input fails `input_mutation`.
  bool inout_allowed = false;
};

LaunchContract parse_launch_contract(const nlohmann::json& contract);

struct LaunchDims {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;
};

LaunchDims resolve_launch(const LaunchGeometry& launch, const SizeMap& sizes);
std::uint64_t element_count(const ContractArg& arg, const SizeMap& sizes);
std::uint64_t byte_count(const ContractArg& arg, const SizeMap& sizes);
// The bytes of a scalar argument as the kernel receives it.
std::vector<std::byte> scalar_argument(const ContractArg& arg, const SizeMap& sizes);
// flops or bytes of the contract at these sizes; nullopt when not given.
std::optional<double> work_count(const std::optional<std::string>& expression, const SizeMap& sizes);

}  // namespace hiera::engine::worker
