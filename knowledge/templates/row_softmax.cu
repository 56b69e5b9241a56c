// hiera template: softmax (or log_softmax) over the last dimension, one block
// per row, with the online max-and-sum of Milakov & Gimelshein: one sweep
// keeps a running max m and a running sum d of exp(x - m), rescaling d when m
// grows; partials merge through warp shuffles and shared memory; a second
// sweep writes exp(x - m) / d. Two reads and one write per element instead of
// the three kernels (max, exp-sum, divide) of an unfused softmax.
// Launch: grid = rows, block = block_size (a multiple of 32, at most 1024).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of in and out
// includes     headers the element type needs, or nothing
// block_size   threads per block, e.g. 256
// log          1 for log_softmax, 0 for softmax
{{includes}}
typedef {{scalar_t}} scalar_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define BLOCK_SIZE {{block_size}}
#define LOG_SOFTMAX {{log}}

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
  const long long row_start = (long long)blockIdx.x * cols;
  MaxSum acc = {-HIERA_INF, 0.0f};
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE) acc = merge(acc, {static_cast<float>(in[row_start + c]), 1.0f});
  acc = warp_merge(acc);

  __shared__ MaxSum partial[BLOCK_SIZE / 32];
  __shared__ MaxSum row;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < BLOCK_SIZE / 32 ? partial[lane] : MaxSum{-HIERA_INF, 0.0f};
    acc = warp_merge(acc);
    if (lane == 0) row = acc;
  }
  __syncthreads();

  const float m = row.max;
#if LOG_SOFTMAX
  const float log_sum = logf(row.sum);
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE)
    out[row_start + c] = static_cast<scalar_t>(static_cast<float>(in[row_start + c]) - m - log_sum);
#else
  const float inv_sum = 1.0f / row.sum;
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE)
    out[row_start + c] = static_cast<scalar_t>(expf(static_cast<float>(in[row_start + c]) - m) * inv_sum);
#endif
}
