// hiera template: an op over contiguous rows whose length is known when the
// kernel is generated (softmax, log_softmax, a layer norm, a reduction whose
// result is broadcast back over its row), fused with the elementwise ops
// before it (the input function, at each element's linear index i) and after
// it (the output function). Each thread loads its VPT elements of the row into
// registers once, all loads in flight together; the row's statistics come
// from those registers (two exact passes for the norm's mean and variance, the
// max then the sum of exp for softmax), merged through warp shuffles and, for
// rows of more than one warp, shared memory; the outputs are written from the
// same registers. One read and one write per element, no division per
// element, the row length and the loops compiled in.
// Launch: block (segment_threads, rows_per_block), grid = ceil(rows / rows_per_block);
// only for rows of exactly `cols` elements (the caller checks and falls back:
// to a streaming kernel, or for a reduction to the _any_length entry point,
// which takes the row length as an argument).
//
// Placeholders:
// kernel_name      extern "C" name
// includes         headers the element types need, or nothing
// index_t          int, or long long when the input can have 2^31 elements or more
// out_t            the output's element type
// cols             the row length, an integer literal
// segment_threads  threads per row: 32 (one warp), or a multiple of 32 up to 1024 (one block)
// rows_per_block   rows a block handles: 1 unless segment_threads is 32
// stats            1: softmax (row_max, row_sum of exp(x - row_max)); 2: norm (mean, rstd);
//                  3: reduction (acc, the combine of the row's inputs)
// eps              the norm's epsilon, a float literal (any float for other stats)
// identity         the reduction's identity (any float for other stats)
// combine          the reduction's combine of floats a and b (any float expression for other stats)
// functions        device helper functions the input and output functions call, or nothing
// input_params     the input function's parameters after its index, each starting with a comma
// input_body       statements computing the input value of element i, in float
// input_result     that value as a float expression
// output_params    the output function's parameters after the statistics, each starting with a comma
// output_body      statements computing the output of element i from x (its input value) and
//                      the statistics (row_max, row_sum, cols; mean, rstd; acc, cols)
// output_result    that output as a float expression
// params           the kernel's input parameters, each followed by a comma
// input_args       the input function's arguments after i, each starting with a comma
// output_args      the output function's arguments after the statistics, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define COLS {{cols}}
#define SEGMENT_THREADS {{segment_threads}}
#define ROWS_PER_BLOCK {{rows_per_block}}
#define VPT ((COLS + SEGMENT_THREADS - 1) / SEGMENT_THREADS)
#define STATS {{stats}}
// Element k of this thread is column threadIdx.x + k * SEGMENT_THREADS: consecutive lanes, consecutive addresses.
#define IN_ROW(k) (COLS % SEGMENT_THREADS == 0 || (int)threadIdx.x + (k) * SEGMENT_THREADS < COLS)
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_input(const index_t i{{input_params}}) {
  {{input_body}}
  return {{input_result}};
}

#if STATS == 1
#define OUTPUT_STATS const float row_max, const float row_sum, const long long cols
#define STATS_ARGS row_max, row_sum, (long long)COLS
#elif STATS == 2
#define OUTPUT_STATS const float mean, const float rstd
#define STATS_ARGS mean, rstd
#else
#define OUTPUT_STATS const float acc, const long long cols
#define STATS_ARGS acc, (long long)COLS
#endif

__device__ __forceinline__ float {{kernel_name}}_output(const index_t i, const float x, OUTPUT_STATS{{output_params}}) {
  {{output_body}}
  return {{output_result}};
}

// How a row's values merge: sum and max for the softmax and norm statistics, or the reduction's own combine.
enum Merge { MERGE_SUM, MERGE_MAX, MERGE_COMBINE };
template <int HOW>
__device__ __forceinline__ float {{kernel_name}}_merge(const float a, const float b) {
  if (HOW == MERGE_SUM) return a + b;
  if (HOW == MERGE_MAX) return fmaxf(a, b);
  return {{combine}};
}

// The row's merge of every thread's v: shuffles within each warp, then every
// warp merges the per-warp partials itself (no second broadcast).
template <int HOW>
__device__ __forceinline__ float {{kernel_name}}_row_reduce(float v, const float identity) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = {{kernel_name}}_merge<HOW>(v, __shfl_xor_sync(0xffffffffu, v, offset));
#if SEGMENT_THREADS > 32
  __shared__ float partial[SEGMENT_THREADS / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < SEGMENT_THREADS / 32 ? partial[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2)
    v = {{kernel_name}}_merge<HOW>(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();  // partial is written again by the next reduction
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
{{kernel_name}}({{params}}out_t* __restrict__ out, long long rows) {
  const long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
  // Only a warp per row can leave early: a block per row has rows_per_block 1 and exactly `rows` blocks.
  if (row >= rows) return;
  const index_t start = static_cast<index_t>(row * COLS);
  float v[VPT];
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) v[k] = {{kernel_name}}_input(start + (index_t)threadIdx.x + k * SEGMENT_THREADS{{input_args}});
#if STATS == 1
  float m = -HIERA_INF;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) m = fmaxf(m, v[k]);
  const float row_max = {{kernel_name}}_row_reduce<MERGE_MAX>(m, -HIERA_INF);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) s += expf(v[k] - row_max);
  const float row_sum = {{kernel_name}}_row_reduce<MERGE_SUM>(s, 0.0f);
#elif STATS == 2
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) s += v[k];
  const float mean = {{kernel_name}}_row_reduce<MERGE_SUM>(s, 0.0f) * (1.0f / (float)COLS);
  float d = 0.0f;
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) d += (v[k] - mean) * (v[k] - mean);
  const float rstd = rsqrtf({{kernel_name}}_row_reduce<MERGE_SUM>(d, 0.0f) * (1.0f / (float)COLS) + {{eps}});
#else
  float a = {{identity}};
#pragma unroll
  for (int k = 0; k < VPT; ++k)
    if (IN_ROW(k)) a = {{kernel_name}}_merge<MERGE_COMBINE>(a, v[k]);
  const float acc = {{kernel_name}}_row_reduce<MERGE_COMBINE>(a, {{identity}});
#endif
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    if (!IN_ROW(k)) continue;
    const index_t i = start + (index_t)threadIdx.x + k * SEGMENT_THREADS;
    out[i] = static_cast<out_t>({{kernel_name}}_output(i, v[k], STATS_ARGS{{output_args}}));
  }
}

#if STATS == 3
// Rows of another length than COLS: two sweeps, the second re-reading the row (from L1/L2).
extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
{{kernel_name}}_any_length({{params}}out_t* __restrict__ out, long long rows, long long cols) {
  const long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y;
  if (row >= rows) return;
  const long long start = row * cols;
  float a = {{identity}};
  for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS)
    a = {{kernel_name}}_merge<MERGE_COMBINE>(a, {{kernel_name}}_input(static_cast<index_t>(start + c){{input_args}}));
  const float acc = {{kernel_name}}_row_reduce<MERGE_COMBINE>(a, {{identity}});
  for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS) {
    const index_t i = static_cast<index_t>(start + c);
    out[i] = static_cast<out_t>({{kernel_name}}_output(i, {{kernel_name}}_input(i{{input_args}}), acc, cols{{output_args}}));
  }
}
#endif
