#pragma once
// What `hiera optimize FILE[::SYMBOL]` points at: a PyTorch module in a .py
// file (KernelBench format: the class, get_inputs, get_init_inputs) or a CUDA
// kernel in a .cu/.cuh file, with its source read from disk.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/spec/target_kind.h"

namespace hiera::engine::optimize {

// The largest source hiera optimizes: a job carries it at least twice (the
// reference and a candidate) in one job-protocol frame of at most 64 MiB.
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Target {
  std::filesystem::path file;
  std::string symbol;  // the module class or the kernel
  spec::TargetKind kind = spec::TargetKind::Pytorch;
  std::string source;  // the file as read
  // "model.py::Model"
  std::string name() const { return file.filename().string() + "::" + symbol; }
  // The source the worker runs as the reference: for a module not named
  // Model, the file plus `Model = <symbol>` (the runner's entry point).
  std::string reference_source() const;
  // The reference dressed as a candidate (its class renamed ModelNew), timed
  // against itself to measure the baseline and prove the harness runs it.
  std::string reference_as_candidate() const;
};

// Parses "FILE[::SYMBOL]" and reads FILE. Without SYMBOL: "Model" for Python
// (or the only nn.Module class), the only __global__ kernel for CUDA. Throws
// TargetError: unreadable file, unknown extension, symbol not found (naming
// the ones that are), KernelBench functions missing, a file over
// kMaxSourceBytes (naming the limit and its size; it is not read).
Target load_target(std::string_view spec);
// The same, with the source given (an editor buffer that is not saved).
Target make_target(const std::filesystem::path& file, std::string symbol, std::string source);

}  // namespace hiera::engine::optimize
