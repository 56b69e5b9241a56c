// hiera template: a fused group of elementwise ops with 16-byte vector loads
// and stores: each thread handles `vec` consecutive elements, loading every
// full-size operand as one 16-byte pack (float4, 8 x half) and storing the
// results as one pack: a quarter (fp32) or an eighth (fp16) of the memory
// instructions of the scalar kernel, which keeps a memory-bound kernel near
// peak bandwidth. Broadcast operands are read per element through their index
// math. Requires every full-size pointer and the output to be 16-byte aligned
// (check data_ptr() % 16 before choosing this kernel); any n works: a scalar
// tail finishes n % vec. Each thread takes two packs a trip of its grid-stride
// loop, so that two packs' loads are in flight at once.
// Launch: block 256, grid = min(ceil(n / vec / 256), sm_count * 8) (_grid(ceil(n / vec), 256, 8)).
//
// Placeholders:
// kernel_name     extern "C" name
// includes        headers the element types need, or nothing
// index_t         int, or long long when the output can have 2^31 elements or more
// out_t           the output's element type
// vec             elements per pack: 16 / the widest element size among the full-size operands and the output
// functions       device helper functions the element function calls, or nothing
// element_params  the element function's parameters after its index, each starting with a comma
// body            statements that load the broadcast operands of element i and name the intermediates, in float
// result          the value of element i as a float expression
// params          the kernel's input parameters, each followed by a comma
// vector_loads    one pack load per full-size operand at pack index v, e.g.
//                     const hiera_pack<float> a0_pack = reinterpret_cast<const hiera_pack<float>*>(a0)[v];
// lane_args       the element function's arguments after i for lane k of the packs, each starting with a comma
// element_args    the element function's arguments after i for the scalar tail, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define HIERA_VEC {{vec}}

template <typename T>
struct alignas(sizeof(T) * HIERA_VEC) hiera_pack {
  T v[HIERA_VEC];
};
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_element(const index_t i{{element_params}}) {
  {{body}}
  return {{result}};
}

extern "C" __global__ void {{kernel_name}}({{params}}out_t* __restrict__ out, long long n) {
  const long long packs = n / HIERA_VEC;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  // Pack v: its loads, its elements, its store.
  const auto pack = [&](const long long v) {
    {{vector_loads}}
    hiera_pack<out_t> r;
#pragma unroll
    for (int k = 0; k < HIERA_VEC; ++k) {
      const index_t i = static_cast<index_t>(v * HIERA_VEC + k);
      r.v[k] = static_cast<out_t>({{kernel_name}}_element(i{{lane_args}}));
    }
    reinterpret_cast<hiera_pack<out_t>*>(out)[v] = r;
  };
  // Two packs a trip: the operands are __restrict__, so the second pack's
  // loads issue before the first's store and each thread keeps twice the
  // bytes in flight (one pack at a time left the kernel latency-bound).
  long long v = first;
  for (; v + stride < packs; v += 2 * stride) {
    pack(v);
    pack(v + stride);
  }
  if (v < packs) pack(v);
  for (long long j = packs * HIERA_VEC + first; j < n; j += stride) {
    const index_t i = static_cast<index_t>(j);
    out[i] = static_cast<out_t>({{kernel_name}}_element(i{{element_args}}));
  }
}
