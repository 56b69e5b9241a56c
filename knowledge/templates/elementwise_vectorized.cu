// hiera template: a fused float32 elementwise chain with 16-byte (float4) loads
// and stores: a quarter of the memory instructions of the scalar kernel, which
// is what keeps a memory-bound kernel near peak bandwidth on wide buses.
// Requires 16-byte aligned pointers (torch allocations are; slices with an
// offset may not be) and handles n % 4 != 0 with a scalar tail.
// Launch: block 256, grid = min(ceil(n / 4 / 256), sm_count * blocks_per_sm).
//
// Placeholders:
// kernel_name   extern "C" name
// params        const float* __restrict__ inputs and float scalars, e.g. const float* __restrict__ x, float alpha
// op_params     the per-element function's parameters, e.g. float x, float alpha
// expression    the result in terms of op_params, e.g. fmaxf(x * alpha, 0.0f)
// vector_loads  one float4 load per input at vector index v, e.g.
//                   const float4 x4 = reinterpret_cast<const float4*>(x)[v];
// lane_args     op arguments for one lane LANE of the float4s, e.g. x4.LANE, alpha
// scalar_args   op arguments at scalar index i, e.g. x[i], alpha

__device__ __forceinline__ float {{kernel_name}}_op({{op_params}}) { return {{expression}}; }

extern "C" __global__ void {{kernel_name}}({{params}}, float* __restrict__ out, long long n) {
  const long long n4 = n / 4;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long v = first; v < n4; v += stride) {
    {{vector_loads}}
    float4 r;
#define LANE x
    r.x = {{kernel_name}}_op({{lane_args}});
#undef LANE
#define LANE y
    r.y = {{kernel_name}}_op({{lane_args}});
#undef LANE
#define LANE z
    r.z = {{kernel_name}}_op({{lane_args}});
#undef LANE
#define LANE w
    r.w = {{kernel_name}}_op({{lane_args}});
#undef LANE
    reinterpret_cast<float4*>(out)[v] = r;
  }
  for (long long i = 4 * n4 + first; i < n; i += stride) out[i] = {{kernel_name}}_op({{scalar_args}});
}
