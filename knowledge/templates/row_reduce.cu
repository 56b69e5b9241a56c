// hiera template: a reduction over the last (contiguous) dimensions fused
// with the elementwise ops before it (the input function, evaluated at each
// element's linear index i) and after it (the output function, evaluated at
// the row index with the reduced value acc). One warp per row for short rows
// (segment_threads 32, several rows per block), a fraction of a warp for
// very short ones (segment_threads 4, 8 or 16: several rows per warp, so
// each warp has more loads in flight), one block per row for long ones; each
// thread folds a strided slice of the row in registers, lanes combine with
// __shfl_xor_sync, and one shared-memory slot per warp finishes a block. Reads every element once; no atomics, so the result is
// deterministic. Launch: block (segment_threads, rows_per_block),
// grid = min(ceil(rows / rows_per_block), sm_count * 4) (_grid(rows, rows_per_block)).
// The _strided entry point reduces a dimension that is not the last: output
// (o, j) folds input (o, r, j) for r < reduced, one thread per output and
// consecutive threads on consecutive j, so every read is coalesced.
// Launch: block 256, grid _grid(outer * inner, 256).
//
// Placeholders:
// kernel_name      extern "C" name
// includes         headers the element types need, or nothing
// index_t          int, or long long when the input can have 2^31 elements or more
// out_t            the output's element type
// segment_threads  threads per row: 4, 8, 16, 32 (one warp), or a multiple of 32 up to 1024 (one block)
// rows_per_block   rows a block handles at once: 1 when segment_threads is over 32
// functions        device helper functions the input and output functions call, or nothing
// input_params     the input function's parameters after its index, each starting with a comma
// input_body       statements computing the value folded for element i (loads, intermediates), in float
// input_result     that value as a float expression
// output_params    the output function's parameters after acc and cols, each starting with a comma
// output_body      statements computing the output of row i from acc (the combined value) and cols
// output_result    that output as a float expression
// identity         the neutral value of combine, e.g. 0.0f or -HIERA_INF
// combine          two partial results a and b combined, e.g. a + b
// params           the kernel's input parameters, each followed by a comma
// input_args       the input function's arguments after i, each starting with a comma
// output_args      the output function's arguments after acc and cols, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define SEGMENT_THREADS {{segment_threads}}
#define ROWS_PER_BLOCK {{rows_per_block}}
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_input(const index_t i{{input_params}}) {
  {{input_body}}
  return {{input_result}};
}

__device__ __forceinline__ float {{kernel_name}}_output(const index_t i, const float acc, const long long cols{{output_params}}) {
  {{output_body}}
  return {{output_result}};
}

__device__ __forceinline__ float {{kernel_name}}_combine(const float a, const float b) { return {{combine}}; }

// Every thread's partial combined: shuffles within each warp, then one shared slot per warp.
// Lanes that share a row: a warp, or a part of one.
#define ROW_LANES (SEGMENT_THREADS < 32 ? SEGMENT_THREADS : 32)

__device__ __forceinline__ float {{kernel_name}}_reduce(float v) {
  for (int offset = ROW_LANES / 2; offset > 0; offset /= 2)
    v = {{kernel_name}}_combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
#if SEGMENT_THREADS > 32
  __shared__ float partial[SEGMENT_THREADS / 32];
  __shared__ float total;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < SEGMENT_THREADS / 32 ? partial[lane] : {{identity}};
    for (int offset = 16; offset > 0; offset /= 2) v = {{kernel_name}}_combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (lane == 0) total = v;
  }
  __syncthreads();
  v = total;
#endif
  return v;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
{{kernel_name}}({{params}}out_t* __restrict__ out, long long rows, long long cols) {
  // Every thread of a block takes the same number of trips: the lanes of a
  // warp that hold different rows shuffle together, past the last row too.
  for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
       first += (long long)gridDim.x * ROWS_PER_BLOCK) {
    const long long row = first + threadIdx.y;
    const long long start = row * cols;
    float acc = {{identity}};
    if (row < rows)
      for (long long c = threadIdx.x; c < cols; c += SEGMENT_THREADS)
        acc = {{kernel_name}}_combine(acc, {{kernel_name}}_input(static_cast<index_t>(start + c){{input_args}}));
    acc = {{kernel_name}}_reduce(acc);
    if (threadIdx.x == 0 && row < rows)
      out[row] = static_cast<out_t>({{kernel_name}}_output(static_cast<index_t>(row), acc, cols{{output_args}}));
  }
}

extern "C" __global__ void __launch_bounds__(256)
{{kernel_name}}_strided({{params}}out_t* __restrict__ out, long long outer, long long reduced, long long inner) {
  const long long n = outer * inner;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
    const long long o = k / inner, j = k - o * inner;
    float acc = {{identity}};
    for (long long r = 0; r < reduced; ++r)
      acc = {{kernel_name}}_combine(acc, {{kernel_name}}_input(static_cast<index_t>((o * reduced + r) * inner + j){{input_args}}));
    out[k] = static_cast<out_t>({{kernel_name}}_output(static_cast<index_t>(k), acc, reduced{{output_args}}));
  }
}
