#pragma once
// What analysis finds in CUDA source: kernels and device functions with their
// parameters, and launch sites (`k<<<grid, block, smem, stream>>>(args)` and
// cudaLaunchKernel) with the host code that sizes them where it is visible.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/source_span.h"
#include "engine/analysis/work.h"

namespace hiera::engine::analysis {

struct CudaParameter {
  std::string name;        // "" for an unnamed parameter
  std::string type;        // the declaration without the name, spaces normalized: "const float* __restrict__"
  Span span;               // the whole declaration
  bool pointer = false;    // a pointer (or array) parameter
  bool is_const = false;   // const pointee (`const float*`, `float const*`)
  bool restrict = false;   // __restrict__ / __restrict
  bool operator==(const CudaParameter&) const = default;
};

enum class CudaFunctionKind { Kernel, Device, Host };
const char* to_string(CudaFunctionKind kind);  // "kernel" / "device" / "host"

struct CudaFunction {
  CudaFunctionKind kind = CudaFunctionKind::Host;
  std::string name;
  Span span;       // from its first specifier (template included) to the end of its body or ';'
  Span name_span;
  std::optional<Span> body;  // the braces; absent for a declaration or a head still being typed
  bool complete = true;      // false when the parameter list or the body is not closed
  std::vector<CudaParameter> parameters;
  std::string template_parameters;       // "typename T, int N" for a template
  std::optional<std::string> launch_bounds;  // the __launch_bounds__ arguments
  std::optional<Work> work;              // filled by a caller that knows the work (annotations)
  bool operator==(const CudaFunction&) const = default;
};

// A host variable a launch's configuration uses, as the enclosing function
// defines it before the launch: `dim3 block(16, 16)`, `int threads = 256`.
struct HostSizing {
  std::string name;
  std::string expression;  // "16, 16" for dim3 constructor arguments, else the initializer
  Span span;               // the definition
  bool operator==(const HostSizing&) const = default;
};

enum class LaunchForm { Chevron, LaunchKernel };
const char* to_string(LaunchForm form);  // "chevron" / "cudaLaunchKernel"

struct LaunchSite {
  LaunchForm form = LaunchForm::Chevron;
  std::string kernel;      // "saxpy", template arguments dropped
  Span span;               // the whole launch expression
  Span kernel_span;
  std::string grid, block, shared_bytes = "0", stream = "0";  // expressions as written
  Span grid_span, block_span;  // empty when the launch does not give them (`k<<<` cut short)
  std::vector<std::string> arguments;
  std::string caller;      // the enclosing function ("" at file scope)
  bool in_loop = false;
  std::vector<HostSizing> sizing;
  std::optional<std::int64_t> block_threads;  // x*y*z when the block evaluates to constants
  bool operator==(const LaunchSite&) const = default;
};

}  // namespace hiera::engine::analysis
