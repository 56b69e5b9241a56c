// hiera template: a fused group of elementwise ops (a chain or a DAG, with
// broadcast operands) in one grid-stride kernel: every input is read once and
// the output written once, instead of one memory round trip per op. The
// element function computes in float; the output is converted once, at the
// store. Broadcast operands are read through their index math (e.g. a
// per-channel bias at (i / (H * W)) % C).
// Launch: block 256, grid = min(ceil(n / 256), sm_count * 4) (_grid(n, 256)).
//
// Placeholders:
// kernel_name     extern "C" name, e.g. fused_bias_gelu
// includes        headers the element types need (#include <cuda_fp16.h>, <cuda_bf16.h>) or nothing
// index_t         int, or long long when the output can have 2^31 elements or more
// out_t           the output's element type: float, __half, __nv_bfloat16
// functions       device helper functions the element function calls, or nothing
// element_params  the element function's parameters after its index, each starting with a comma
// body            statements that load the operands of element i and name the intermediates, in float
// result          the value of element i as a float expression
// params          the kernel's input parameters (pointers, broadcast sizes), each followed by a comma
// element_args    the element function's arguments after i, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_element(const index_t i{{element_params}}) {
  {{body}}
  return {{result}};
}

extern "C" __global__ void {{kernel_name}}({{params}}out_t* __restrict__ out, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
    const index_t i = static_cast<index_t>(j);
    out[i] = static_cast<out_t>({{kernel_name}}_element(i{{element_args}}));
  }
}
