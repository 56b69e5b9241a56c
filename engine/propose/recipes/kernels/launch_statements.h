#pragma once
// Pieces of the Python statements that launch a generated kernel: the dtype
// check of its inputs, the dtype and device of the output it allocates, and
// the argument list (tensors as pointers, sizes as int32 or nvrtc_runtime.int64).
#include <map>
#include <string>
#include <vector>

#include "engine/propose/recipes/kernels/elementwise_program.h"

namespace hiera::engine::propose::recipes::kernels {

// `assert a.dtype == torch.float32 and b.dtype == torch.float16, "<kernel> expects float32 a, float16 b"`
// over the leaves of every program (each Python expression once).
std::string dtype_check(const std::vector<const ElementwiseProgram*>& programs, const std::string& kernel);

// The dtype expression for an output of `dtype`: a leaf's `.dtype` when one has
// it (no dtype literal in a call), else the torch literal; throws Unsupported
// for a reduced precision that `allowed_precisions` does not list.
std::string output_dtype(const std::vector<const ElementwiseProgram*>& programs, const std::string& dtype,
                         const std::vector<std::string>& allowed_precisions);

// The device expression for outputs: the first node leaf's `.device`.
std::string output_device(const std::vector<const ElementwiseProgram*>& programs);

// _broadcast_shapes(...) (torch.broadcast_shapes, cached per shapes) of the node leaves (or the one leaf's .shape),
// falling back to the captured shape as a torch.Size literal.
std::string broadcast_shape(const ElementwiseProgram& program, const std::vector<std::int64_t>& captured);

// The launch arguments of a program's kernel parameters, ", "-joined: tensor
// leaves as `x.contiguous()` (a no-op when already contiguous), except those
// whose pointer name `prepared` maps to a Python variable holding them ready.
std::string launch_arguments(const ElementwiseProgram& program,
                             const std::map<std::string, std::string>& prepared = {});

// ", ".join(parts), skipping empty parts.
std::string join_arguments(const std::vector<std::string>& parts);

}  // namespace hiera::engine::propose::recipes::kernels
