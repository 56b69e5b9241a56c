// hiera template: normalisation over contiguous segments with one-pass
// Welford statistics, fused with the elementwise ops before it (the input
// function, at each element's linear index i) and after it (the output
// function, which also applies the affine). A segment is a row of a
// LayerNorm, a (sample, group) run of C / G channels of a GroupNorm, a
// (sample, channel) plane of an InstanceNorm. Mean and variance come from one
// sweep (numerically stable, unlike sum and sum of squares), merged with
// Chan's formula through warp shuffles and shared memory; a second sweep,
// which hits L1/L2, writes the outputs. Biased variance and
// rstd = rsqrt(var + eps), as torch. One warp per segment for short segments,
// one block per segment for long ones.
// Launch: block (segment_threads, rows_per_block), grid = _grid(segments, rows_per_block).
//
// Placeholders:
// kernel_name      extern "C" name
// includes         headers the element types need, or nothing
// index_t          int, or long long when the input can have 2^31 elements or more
// out_t            the output's element type
// segment_threads  threads per segment: 32 (one warp), or a multiple of 32 up to 1024 (one block)
// rows_per_block   segments a block handles at once: 1 unless segment_threads is 32
// eps              the epsilon added to the variance, a float literal
// functions        device helper functions the input and output functions call, or nothing
// input_params     the input function's parameters after its index, each starting with a comma
// input_body       statements computing the input value of element i, in float
// input_result     that value as a float expression
// output_params    the output function's parameters after rstd, each starting with a comma
// output_body      statements computing the output of element i from x (its input value), mean and rstd
// output_result    that output as a float expression
// params           the kernel's input parameters, each followed by a comma
// input_args       the input function's arguments after i, each starting with a comma
// output_args      the output function's arguments after rstd, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define SEGMENT_THREADS {{segment_threads}}
#define ROWS_PER_BLOCK {{rows_per_block}}
{{functions}}
__device__ __forceinline__ float {{kernel_name}}_input(const index_t i{{input_params}}) {
  {{input_body}}
  return {{input_result}};
}

__device__ __forceinline__ float {{kernel_name}}_output(const index_t i, const float x, const float mean,
                                                        const float rstd{{output_params}}) {
  {{output_body}}
  return {{output_result}};
}

struct Welford {
  float mean, m2, count;
};

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
  const float count = a.count + b.count;
  if (count == 0.0f) return a;
  const float delta = b.mean - a.mean;
  const float weight_b = b.count / count;
  return {a.mean + delta * weight_b, a.m2 + b.m2 + delta * delta * a.count * weight_b, count};
}

__device__ __forceinline__ Welford warp_merge(Welford w) {
  for (int offset = 16; offset > 0; offset /= 2) {
    Welford other = {__shfl_xor_sync(0xffffffffu, w.mean, offset), __shfl_xor_sync(0xffffffffu, w.m2, offset),
                     __shfl_xor_sync(0xffffffffu, w.count, offset)};
    w = welford_merge(w, other);
  }
  return w;
}

// Every thread's partial statistics merged: shuffles within each warp, then one shared slot per warp.
__device__ __forceinline__ Welford reduce(Welford w) {
  w = warp_merge(w);
#if SEGMENT_THREADS > 32
  __shared__ Welford partial[SEGMENT_THREADS / 32];
  __shared__ Welford total;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = w;
  __syncthreads();
  if (warp == 0) {
    w = lane < SEGMENT_THREADS / 32 ? partial[lane] : Welford{0.0f, 0.0f, 0.0f};
    w = warp_merge(w);
    if (lane == 0) total = w;
  }
  __syncthreads();
  w = total;
#endif
  return w;
}

extern "C" __global__ void __launch_bounds__(SEGMENT_THREADS * ROWS_PER_BLOCK)
{{kernel_name}}({{params}}out_t* __restrict__ out, long long segments, long long length) {
  for (long long segment = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.y; segment < segments;
       segment += (long long)gridDim.x * ROWS_PER_BLOCK) {
    const long long start = segment * length;
    Welford w = {0.0f, 0.0f, 0.0f};
    for (long long c = threadIdx.x; c < length; c += SEGMENT_THREADS) {
      const float v = {{kernel_name}}_input(static_cast<index_t>(start + c){{input_args}});
      w.count += 1.0f;
      const float delta = v - w.mean;
      w.mean += delta / w.count;
      w.m2 += delta * (v - w.mean);
    }
    w = reduce(w);
    const float mean = w.mean, rstd = rsqrtf(w.m2 / (float)length + {{eps}});
    for (long long c = threadIdx.x; c < length; c += SEGMENT_THREADS) {
      const index_t i = static_cast<index_t>(start + c);
      const float x = {{kernel_name}}_input(i{{input_args}});
      out[i] = static_cast<out_t>({{kernel_name}}_output(i, x, mean, rstd{{output_args}}));
    }
  }
}
