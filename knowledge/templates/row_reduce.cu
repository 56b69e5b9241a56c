// hiera template: a reduction over the last (contiguous) dimension, one block
// per row: each thread folds a strided slice of the row in registers, warps
// combine with __shfl_xor_sync, and one shared-memory slot per warp finishes
// the block. Reads every element once; no atomics, so the result is
// deterministic. Launch: grid = rows, block = block_size (a multiple of 32, at most 1024).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of the input and output
// includes     headers the element type needs, or nothing
// block_size   threads per block, e.g. 256
// identity     the neutral value of combine, e.g. 0.0f or -HIERA_INF
// map          float value folded for element x (a float), e.g. x * x or fabsf(x)
// combine      combine two partial results a and b, e.g. a + b or fmaxf(a, b)
// finalize     result from the combined acc and the row length cols, e.g. sqrtf(acc / cols)
{{includes}}
typedef {{scalar_t}} scalar_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define BLOCK_SIZE {{block_size}}

__device__ __forceinline__ float map_value(float x) { return {{map}}; }
__device__ __forceinline__ float combine(float a, float b) { return {{combine}}; }

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, long long cols) {
  const scalar_t* row = in + (long long)blockIdx.x * cols;
  float acc = {{identity}};
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE) acc = combine(acc, map_value(static_cast<float>(row[c])));

  for (int offset = 16; offset > 0; offset /= 2) acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
  __shared__ float partial[BLOCK_SIZE / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < BLOCK_SIZE / 32 ? partial[lane] : {{identity}};
    for (int offset = 16; offset > 0; offset /= 2) acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
    if (lane == 0) out[blockIdx.x] = static_cast<scalar_t>({{finalize}});
  }
}
