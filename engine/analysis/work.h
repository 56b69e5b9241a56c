#pragma once
// The work of one op or kernel per call, when its shapes are known: counted
// floating-point operations (a multiply-add is 2), the fewest bytes that must
// cross device memory (inputs read once, outputs written once), and the dtype
// whose peak rate the flops are held against. Hardware-free: the roofline
// time on a given GPU is roofline_time.h's business.
#include <cstdint>
#include <string>
#include <vector>

namespace hiera::engine::analysis {

struct Work {
  double flops = 0.0;
  double bytes = 0.0;
  std::string dtype = "float32";
  std::string source;  // where the shapes came from: "get_inputs", "annotations"
  bool operator==(const Work&) const = default;
};

using Shape = std::vector<std::int64_t>;

}  // namespace hiera::engine::analysis
