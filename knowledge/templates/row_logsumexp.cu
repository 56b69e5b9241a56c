// hiera template: the online max and sum of exp over the last (contiguous)
// dimensions, fused with the elementwise ops before (the input function, at
// each element's linear index i) and after it. One sweep keeps a running max
// m and a running sum d of exp(x - m), rescaled when m grows (Milakov &
// Gimelshein), merged through warp shuffles and shared memory; then either
// one value per row (logsumexp: m + log(d)) or, with per_element 1, a second
// sweep writing a function of each element and the row's m and d (softmax:
// exp(x - m) / d, log_softmax: x - m - log(d)). Stable for large inputs.
// One warp per row for short rows, a block's row of segment_threads threads
// for long ones, rows_per_block rows per block either way. A thread loads
// UNROLL elements before using any (loads in flight, not a chain of merges),
// takes their max, rescales its running sum only when that max grows, and
// adds one exp per element: the sweep is bound by memory, not by exp.
// Launch: block (segment_threads, rows_per_block), grid = _grid(rows, rows_per_block).
// The _strided entry point works on a dimension that is not the last: the
// row of output (o, j) is input (o, r, j) for r < reduced, one thread per row
// and consecutive threads on consecutive j, so every read is coalesced.
// Launch: block 256, grid _grid(outer * inner, 256).
//
// Placeholders:
// kernel_name      extern "C" name
// includes         headers the element types need, or nothing
// index_t          int, or long long when the input can have 2^31 elements or more
// out_t            the output's element type
// segment_threads  threads per row: 32 (one warp), or a multiple of 32 up to 1024
// rows_per_block   rows a block handles at once (segment_threads * rows_per_block <= 1024)
// per_element      1: the output has the input's shape (softmax); 0: one value per row (logsumexp)
// functions        device helper functions the input and output functions call, or nothing
// input_params     the input function's parameters after its index, each starting with a comma
// input_body       statements computing the input value of element i, in float
// input_result     that value as a float expression
// output_params    the output function's parameters after cols, each starting with a comma
// output_body      statements computing the output at index i (an element, or a row) from x (the
//                      element's input value; 0 for a row), row_max, row_sum and cols
// output_result    that output as a float expression
// params           the kernel's input parameters, each followed by a comma
// input_args       the input function's arguments after i, each starting with a comma
// output_args      the output function's arguments after cols, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define SEGMENT_THREADS {{segment_threads}}
#define ROWS_PER_BLOCK {{rows_per_block}}
#define PER_ELEMENT {{per_element}}
#define UNROLL 8
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_input(const index_t i{{input_params}}) {
  {{input_body}}
  return {{input_result}};
}

__device__ __forceinline__ float {{kernel_name}}_output(const index_t i, const float x, const float row_max,
                                                        const float row_sum, const long long cols{{output_params}}) {
  {{output_body}}
  return {{output_result}};
}

struct MaxSum {
  float max, sum;  // sum of exp(x - max)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  if (a.max == -HIERA_INF) return b;
  if (b.max == -HIERA_INF) return a;
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// UNROLL loaded elements into a thread's running max and sum: the same values
// as merging them one by one (NaN stays NaN, -inf adds nothing), with one exp
// per element and a rescale only when the max grows.
__device__ __forceinline__ void accumulate(MaxSum& acc, const float (&x)[UNROLL]) {
  float m = x[0];
  bool nan = x[0] != x[0];
#pragma unroll
  for (int u = 1; u < UNROLL; ++u) {
    m = fmaxf(m, x[u]);
    nan = nan || x[u] != x[u];
  }
  if (nan) {
    acc.max = acc.sum = __int_as_float(0x7fffffff);
    return;
  }
  if (m > acc.max) {
    acc.sum = acc.max == -HIERA_INF ? 0.0f : acc.sum * expf(acc.max - m);
    acc.max = m;
  }
  if (acc.max == -HIERA_INF) return;  // every element so far is -inf
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) sum += expf(x[u] - acc.max);
  acc.sum += sum;
}

// Every thread's partial merged: shuffles within each warp, then one shared slot per warp.
__device__ __forceinline__ MaxSum reduce(MaxSum v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = merge(v, {__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
#if SEGMENT_THREADS > 32
  // One slot per warp of each row (a warp never spans two rows: segment_threads is a multiple of 32).
  __shared__ MaxSum partial[ROWS_PER_BLOCK][SEGMENT_THREADS / 32];
  __shared__ MaxSum total[ROWS_PER_BLOCK];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[threadIdx.y][warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < SEGMENT_THREADS / 32 ? partial[threadIdx.y][lane] : MaxSum{-HIERA_INF, 0.0f};
    for (int offset = 16; offset > 0; offset /= 2)
      v = merge(v, {__shfl_xor_sync(0xffffffffu, v.max, offset), __shfl_xor_sync(0xffffffffu, v.sum, offset)});
    if (lane == 0) total[threadIdx.y] = v;
  }
  __syncthreads();
  v = total[threadIdx.y];
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
{{kernel_name}}({{params}}out_t* __restrict__ out, long long rows, long long cols) {
  // Rows in steps of the block's rows: every thread reaches reduce()'s barriers as often as the others.
  for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows; first += (long long)gridDim.x * ROWS_PER_BLOCK) {
    const long long row = first + threadIdx.y;
    const bool active = row < rows;
    const long long start = row * cols;
    MaxSum acc = {-HIERA_INF, 0.0f};
    if (active) {
      long long c = threadIdx.x;
      for (; c + (UNROLL - 1) * SEGMENT_THREADS < cols; c += UNROLL * SEGMENT_THREADS) {
        float values[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) values[u] = {{kernel_name}}_input(static_cast<index_t>(start + c + u * SEGMENT_THREADS){{input_args}});
        accumulate(acc, values);
      }
      for (; c < cols; c += SEGMENT_THREADS)
        acc = merge(acc, MaxSum{ {{kernel_name}}_input(static_cast<index_t>(start + c){{input_args}}), 1.0f });
    }
    acc = reduce(acc);
    if (!active) continue;
#if PER_ELEMENT
    // The second sweep re-reads the row: it was just loaded, so it comes from L1/L2.
    for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS) {
      const index_t i = static_cast<index_t>(start + c);
      const float x = {{kernel_name}}_input(i{{input_args}});
      out[i] = static_cast<out_t>({{kernel_name}}_output(i, x, acc.max, acc.sum, cols{{output_args}}));
    }
#else
    if (threadIdx.x == 0)
      out[row] = static_cast<out_t>({{kernel_name}}_output(static_cast<index_t>(row), 0.0f, acc.max, acc.sum, cols{{output_args}}));
#endif
  }
}

extern "C" __global__ void __launch_bounds__(256)
{{kernel_name}}_strided({{params}}out_t* __restrict__ out, long long outer, long long reduced, long long inner) {
  const long long n = outer * inner;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
    const long long o = k / inner, j = k - o * inner;
    MaxSum acc = {-HIERA_INF, 0.0f};
    for (long long r = 0; r < reduced; ++r)
      acc = merge(acc, MaxSum{ {{kernel_name}}_input(static_cast<index_t>((o * reduced + r) * inner + j){{input_args}}), 1.0f });
#if PER_ELEMENT
    for (long long r = 0; r < reduced; ++r) {
      const index_t i = static_cast<index_t>((o * reduced + r) * inner + j);
      const float x = {{kernel_name}}_input(i{{input_args}});
      out[i] = static_cast<out_t>({{kernel_name}}_output(i, x, acc.max, acc.sum, reduced{{output_args}}));
    }
#else
    out[k] = static_cast<out_t>({{kernel_name}}_output(static_cast<index_t>(k), 0.0f, acc.max, acc.sum, reduced{{output_args}}));
#endif
  }
}
