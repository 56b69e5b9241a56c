// hiera template: normalisation whose segments are too long (or too few) for
// one block each, in three kernels: partial statistics of a slice of every
// sample (grid = samples x splits, so the whole GPU reads), their merge into
// one (mean, rstd) per sample and channel, and the elementwise pass that
// normalises, fused with the ops before it (the input function) and after it
// (the output function, which also applies the affine). A sample is `rows`
// rows of `channels` values, element (sample * rows + r) * channels + c;
// channel c belongs to group c / per_group. Contiguous segments (layer norm
// rows, NCHW groups and planes) are samples of one channel; a channels_last
// tensor's group norm is N samples of H*W rows of C channels. Each thread sums
// differences from its first value (accurate variances without a division per
// element), the partials are merged with Chan's formula; biased variance and
// rstd = rsqrt(var + eps), as torch.
// Launch: _partial grid (samples, splits), block 256; _finalize a grid-stride
// loop over samples * channels; the pass grid (samples, blocks per sample),
// block 256: _vec, which loads and stores `vec` elements at a time, when
// every full-size operand and the output are 16-byte aligned and a sample's
// rows * channels is a multiple of vec (and channels 1 or a multiple of vec),
// else the scalar pass. channels <= 256.
//
// Placeholders: as welford_layernorm.cu, without segment_threads and rows_per_block.
// kernel_name      extern "C" name of the pass; _partial and _finalize are appended for the others
// includes         headers the element types need, or nothing
// index_t          int, or long long when the input can have 2^31 elements or more
// out_t            the output's element type
// eps              the epsilon added to the variance, a float literal
// functions        device helper functions the input and output functions call, or nothing
// input_params     the input function's parameters after its index, each starting with a comma
// input_body       statements computing the input value of element i, in float
// input_result     that value as a float expression
// output_params    the output function's parameters after rstd, each starting with a comma
// output_body      statements computing the output of element i from x (its input value), mean and rstd
// output_result    that output as a float expression
// params           the kernel's input parameters, each followed by a comma
// input_args       the input function's arguments after i (in scope as `i`), each starting with a comma
// output_args      the output function's arguments after rstd, each starting with a comma
// vec              elements per pack: 16 / the widest element size among the full-size operands and the output
// vector_loads     one pack load per full-size operand at pack index v (they enter the functions by value)
// lane_input_args  the input function's arguments after i for lane k of the packs, each starting with a comma
// lane_output_args the output function's arguments after rstd for lane k, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
typedef {{out_t}} out_t;
#define BLOCK 256
#define UNROLL 4
#define HIERA_VEC {{vec}}

template <typename T>
struct alignas(sizeof(T) * HIERA_VEC) hiera_pack {
  T v[HIERA_VEC];
};
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
  if (b.count == 0.0f) return a;
  if (a.count == 0.0f) return b;
  const float delta = b.mean - a.mean;
  const float weight_b = b.count / count;
  return {a.mean + delta * weight_b, a.m2 + b.m2 + delta * delta * a.count * weight_b, count};
}

// Statistics of rows [rows * split / splits, rows * (split + 1) / splits) of
// sample blockIdx.x, one Welford triple per group of that sample, at
// partial[((sample * groups + g) * splits + split) * 3].
extern "C" __global__ void __launch_bounds__(BLOCK)
{{kernel_name}}_partial({{params}}float* __restrict__ partial, long long rows, int channels, int per_group,
                        int splits) {
  const long long sample = blockIdx.x;
  const int split = blockIdx.y;
  // The threads that own a channel each (c = t % channels), and the elements between a thread's values.
  const int lanes = BLOCK / channels * channels;
  const long long begin = (sample * rows + rows * split / splits) * channels;
  const long long end = (sample * rows + rows * (split + 1) / splits) * channels;
  float shift = 0.0f, sum = 0.0f, squares = 0.0f, count = 0.0f;
  long long e = begin + threadIdx.x;
  if (threadIdx.x < lanes && e < end) {
    {
      const index_t i = static_cast<index_t>(e);
      shift = {{kernel_name}}_input(i{{input_args}});
    }
    for (; e + (UNROLL - 1) * (long long)lanes < end; e += UNROLL * (long long)lanes) {
      float v[UNROLL];
#pragma unroll
      for (int k = 0; k < UNROLL; ++k) {
        const index_t i = static_cast<index_t>(e + k * lanes);
        v[k] = {{kernel_name}}_input(i{{input_args}});
      }
#pragma unroll
      for (int k = 0; k < UNROLL; ++k) {
        const float d = v[k] - shift;
        sum += d;
        squares += d * d;
      }
      count += UNROLL;
    }
    for (; e < end; e += lanes) {
      const index_t i = static_cast<index_t>(e);
      const float d = {{kernel_name}}_input(i{{input_args}}) - shift;
      sum += d;
      squares += d * d;
      count += 1.0f;
    }
  }
  Welford w = {0.0f, 0.0f, 0.0f};
  if (count > 0.0f) w = {shift + sum / count, fmaxf(squares - sum * sum / count, 0.0f), count};
  // Lanes of one channel merge through shuffles when channels divides the warp.
  const bool shuffled = 32 % channels == 0;
  if (shuffled) {
    for (int offset = 16; offset >= channels; offset /= 2) {
      const Welford other = {__shfl_xor_sync(0xffffffffu, w.mean, offset), __shfl_xor_sync(0xffffffffu, w.m2, offset),
                             __shfl_xor_sync(0xffffffffu, w.count, offset)};
      w = welford_merge(w, other);
    }
  }
  __shared__ Welford part[BLOCK];
  part[threadIdx.x] = w;
  __syncthreads();
  // Thread g merges its group: lane c of every warp when shuffled, else thread c of every row of lanes.
  const int groups = channels / per_group;
  if (threadIdx.x < groups) {
    const int holders = shuffled ? BLOCK / 32 : BLOCK / channels, spacing = shuffled ? 32 : channels;
    Welford total = {0.0f, 0.0f, 0.0f};
    for (int h = 0; h < holders; ++h)
      for (int c = threadIdx.x * per_group; c < (threadIdx.x + 1) * per_group; ++c)
        total = welford_merge(total, part[h * spacing + c]);
    float* out = partial + ((sample * groups + threadIdx.x) * splits + split) * 3;
    out[0] = total.mean;
    out[1] = total.m2;
    out[2] = total.count;
  }
}

// mean and rstd of each sample's channel c, from its group's `splits` partials.
extern "C" __global__ void __launch_bounds__(BLOCK)
{{kernel_name}}_finalize(const float* __restrict__ partial, float2* __restrict__ stats, long long samples,
                         int channels, int per_group, int splits) {
  const int groups = channels / per_group;
  for (long long k = (long long)blockIdx.x * BLOCK + threadIdx.x; k < samples * channels;
       k += (long long)gridDim.x * BLOCK) {
    const long long slot = k / channels * groups + k % channels / per_group;
    Welford w = {0.0f, 0.0f, 0.0f};
    for (int s = 0; s < splits; ++s) {
      const float* p = partial + (slot * splits + s) * 3;
      w = welford_merge(w, {p[0], p[1], p[2]});
    }
    stats[k] = make_float2(w.mean, rsqrtf(w.m2 / w.count + {{eps}}));
  }
}

// The elementwise pass over sample blockIdx.x: each thread's channel advances
// by a fixed step, so its statistics come without a division per element.
extern "C" __global__ void __launch_bounds__(BLOCK)
{{kernel_name}}({{params}}const float2* __restrict__ stats, out_t* __restrict__ out, long long rows, int channels) {
  const long long sample = blockIdx.x, size = rows * channels, base = sample * size;
  const float2* sample_stats = stats + sample * channels;
  const long long stride = (long long)gridDim.y * BLOCK;
  const int step = static_cast<int>(stride % channels);
  long long j = (long long)blockIdx.y * BLOCK + threadIdx.x;
  int c = static_cast<int>(j % channels);
  for (; j + (UNROLL - 1) * stride < size; j += UNROLL * stride) {
    float x[UNROLL];
    int cs[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const index_t i = static_cast<index_t>(base + j + k * stride);
      x[k] = {{kernel_name}}_input(i{{input_args}});
      cs[k] = c;
      c += step;
      if (c >= channels) c -= channels;
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const index_t i = static_cast<index_t>(base + j + k * stride);
      const float2 s = sample_stats[cs[k]];
      out[i] = static_cast<out_t>({{kernel_name}}_output(i, x[k], s.x, s.y{{output_args}}));
    }
  }
  for (; j < size; j += stride) {
    const index_t i = static_cast<index_t>(base + j);
    const float2 s = sample_stats[c];
    out[i] = static_cast<out_t>({{kernel_name}}_output(i, {{kernel_name}}_input(i{{input_args}}), s.x, s.y{{output_args}}));
    c += step;
    if (c >= channels) c -= channels;
  }
}

// The pass with 16-byte packs: lanes k of a pack are channels c + k of one
// position (channels a multiple of vec), or one segment's elements (channels 1).
extern "C" __global__ void __launch_bounds__(BLOCK)
{{kernel_name}}_vec({{params}}const float2* __restrict__ stats, out_t* __restrict__ out, long long rows, int channels) {
  const long long sample = blockIdx.x, size = rows * channels, base = sample * size;
  const float2* sample_stats = stats + sample * channels;
  const long long packs = size / HIERA_VEC, stride = (long long)gridDim.y * BLOCK;
  const int step = static_cast<int>(stride * HIERA_VEC % channels);
  long long p = (long long)blockIdx.y * BLOCK + threadIdx.x;
  int c = static_cast<int>(p * HIERA_VEC % channels);
  for (; p < packs; p += stride) {
    const long long v = base / HIERA_VEC + p;
    {{vector_loads}}
    hiera_pack<out_t> r;
#pragma unroll
    for (int k = 0; k < HIERA_VEC; ++k) {
      const index_t i = static_cast<index_t>(v * HIERA_VEC + k);
      const float2 s = sample_stats[channels == 1 ? 0 : c + k];
      const float x = {{kernel_name}}_input(i{{lane_input_args}});
      r.v[k] = static_cast<out_t>({{kernel_name}}_output(i, x, s.x, s.y{{lane_output_args}}));
    }
    reinterpret_cast<hiera_pack<out_t>*>(out)[v] = r;
    c += step;
    if (c >= channels) c -= channels;
  }
}
