// hiera template: a chain of elementwise ops fused into one grid-stride kernel.
// Every input is read once and the output written once, instead of one full
// memory round trip per op. Launch: block 256, grid = min(ceil(n / 256),
// sm_count * blocks_per_sm) (see grid_size() in nvrtc_module.py).
//
// Placeholders:
// kernel_name  extern "C" name, e.g. fused_bias_gelu
// scalar_t     element type of inputs and output: float, double, __half, __nv_bfloat16
// includes     headers the element type needs (#include <cuda_fp16.h>, <cuda_bf16.h>) or nothing
// params       the inputs and scalars, e.g. const float* __restrict__ x, const float* __restrict__ bias, float alpha
// prelude      per-element loads and named intermediates, in float, using index i; may be empty
// expression   the result as a float expression, e.g. v * normcdff(v)
{{includes}}
typedef {{scalar_t}} scalar_t;

extern "C" __global__ void {{kernel_name}}({{params}}, scalar_t* __restrict__ out, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    {{prelude}}
    out[i] = static_cast<scalar_t>({{expression}});
  }
}
