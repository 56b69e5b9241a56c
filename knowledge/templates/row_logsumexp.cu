// hiera template: logsumexp over the last dimension, one block per row, in a
// single read: the online running max m and sum d of exp(x - m) (rescaled
// when m grows), merged through warp shuffles and shared memory; the result
// is m + log(d). Stable for large inputs, unlike log(sum(exp(x))).
// Launch: grid = rows, block = block_size (a multiple of 32, at most 1024).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of in and out
// includes     headers the element type needs, or nothing
// block_size   threads per block, e.g. 256
{{includes}}
typedef {{scalar_t}} scalar_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define BLOCK_SIZE {{block_size}}

struct MaxSum {
  float max, sum;  // sum of exp(x - max)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.max == -HIERA_INF) return b;
  if (b.max == -HIERA_INF) return a;
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = merge(v, {__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, long long cols) {
  const scalar_t* row = in + (long long)blockIdx.x * cols;
  MaxSum acc = {-HIERA_INF, 0.0f};
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE) acc = merge(acc, {static_cast<float>(row[c]), 1.0f});
  acc = warp_merge(acc);

  __shared__ MaxSum partial[BLOCK_SIZE / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < BLOCK_SIZE / 32 ? partial[lane] : MaxSum{-HIERA_INF, 0.0f};
    acc = warp_merge(acc);
    // A row of -inf gives -inf (torch does the same); a +inf element gives +inf.
    if (lane == 0) out[blockIdx.x] = static_cast<scalar_t>(acc.max == -HIERA_INF || acc.max == HIERA_INF ? acc.max : acc.max + logf(acc.sum));
  }
}
