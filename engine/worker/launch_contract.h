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

#include <nlohmann/json_fwd.hpp>

#include "engine/worker/scalar_types.h"
#include "engine/worker/size_expression.h"

namespace hiera::worker {

class ContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ArgRole { Input, Output, InOut, Scalar };
const char* to_string(ArgRole role);

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

struct LaunchSpec {
  std::array<std::string, 3> grid{"1", "1", "1"};
  std::array<std::string, 3> block{"1", "1", "1"};
  std::string shared_bytes = "0";
};

struct LaunchContract {
  SizeEnv sizes;
  std::optional<SizeEnv> second_sizes;  // already merged over `sizes`
  std::vector<ContractArg> args;
  LaunchSpec reference_launch;
  LaunchSpec candidate_launch;  // the reference's when the contract gives none
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

LaunchDims resolve_launch(const LaunchSpec& spec, const SizeEnv& sizes);
std::uint64_t element_count(const ContractArg& arg, const SizeEnv& sizes);
std::uint64_t byte_count(const ContractArg& arg, const SizeEnv& sizes);
// The bytes of a scalar argument as the kernel receives it.
std::vector<std::byte> scalar_argument(const ContractArg& arg, const SizeEnv& sizes);
// flops or bytes of the contract at these sizes; nullopt when not given.
std::optional<double> work_count(const std::optional<std::string>& expression, const SizeEnv& sizes);

}  // namespace hiera::worker
