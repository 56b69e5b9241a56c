#pragma once
// How an index expression in a kernel varies across the 32 threads of a warp,
// which differ only in threadIdx.x: not at all (uniform), by one element per
// thread (unit: coalesced), by a fixed or unknown stride (strided), or in some
// other way (irregular). Variables are followed to their definitions in the
// body; constants come from the file's #defines and const integers.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "engine/analysis/cuda_scanner.h"

namespace hiera::engine::analysis {

enum class WarpVariation { Uniform, Unit, Strided, Irregular };

struct IndexClass {
  WarpVariation variation = WarpVariation::Uniform;
  std::optional<std::int64_t> stride;  // Strided: elements per thread, when constant
  std::optional<std::int64_t> value;   // Uniform: the value, when constant
  bool uses_block = false;             // depends on blockIdx
  bool uses_thread = false;            // depends on threadIdx
  std::set<std::string> variables;     // the variables it reads, transitively
};

class ThreadIndexClassifier {
 public:
  ThreadIndexClassifier(std::string_view source, const CudaScan& scan, const CudaBody& body);
  // `at` is the token of the use: a variable means its latest definition before it.
  IndexClass classify(TokenRange expression, std::uint32_t at) const;

 private:
  IndexClass sum(TokenRange r, std::uint32_t at, int depth) const;
  IndexClass product(TokenRange r, std::uint32_t at, int depth) const;
  IndexClass factor(TokenRange r, std::uint32_t at, int depth) const;
  IndexClass variable(std::string_view name, std::uint32_t at, int depth) const;
  std::string_view text(std::uint32_t i) const;
  std::uint32_t match(std::uint32_t open, std::uint32_t limit) const;

  std::string_view source_;
  const CudaScan& scan_;
  const CudaBody& body_;
};

}  // namespace hiera::engine::analysis
