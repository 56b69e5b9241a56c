#pragma once
// The NVRTC program of hiera-worker's own check kernels: check_math.h
// followed by check_kernels.cu, both embedded in the binary at build time
// from the files themselves. It is compiled like a candidate (so its cubin is
// cached by content) for the device's architecture; needs no GPU.
#include <string>

#include "engine/worker/nvrtc_compiler.h"
#include "engine/worker/scalar_types.h"

namespace hiera::engine::worker {

// The whole source NVRTC compiles.
const std::string& check_program_source();

// Name expressions of each kernel for one element type ("hiera_check_compare<0>").
std::string check_generate_kernel(ScalarType type);
std::string check_compare_kernel(ScalarType type);
std::string check_changed_kernel(ScalarType type);

// Every kernel for every type in one request, compiled with --fmad=false: a
// multiply-add contracted into an FMA would round differently from the host.
CompileRequest check_compile_request(const std::string& arch);

}  // namespace hiera::engine::worker
