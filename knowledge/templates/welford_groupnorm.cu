// hiera template: GroupNorm on a contiguous NC* tensor with one-pass Welford
// statistics. A group (n, g) is one contiguous run of (C / G) * spatial
// elements, so one block per group computes its mean and variance in one
// sweep, then normalises with the per-channel affine in a second sweep.
// Launch: grid = N * G, block = block_size (a multiple of 32, at most 1024).
// weight and bias (length C) may be null (affine=False). Biased variance, as torch.
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of x, weight, bias and out
// includes     headers the element type needs, or nothing
// block_size   threads per block, e.g. 512
{{includes}}
typedef {{scalar_t}} scalar_t;
#define BLOCK_SIZE {{block_size}}

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

// channels: C; groups: G; spatial: product of the dimensions after C (1 for N x C input).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
{{kernel_name}}(const scalar_t* __restrict__ x, const scalar_t* __restrict__ weight, const scalar_t* __restrict__ bias,
                scalar_t* __restrict__ out, int channels, int groups, long long spatial, float eps) {
  const int channels_per_group = channels / groups;
  const long long group_size = (long long)channels_per_group * spatial;
  const long long start = (long long)blockIdx.x * group_size;
  const int first_channel = (blockIdx.x % groups) * channels_per_group;

  Welford w = {0.0f, 0.0f, 0.0f};
  for (long long j = threadIdx.x; j < group_size; j += BLOCK_SIZE) {
    const float v = static_cast<float>(x[start + j]);
    w.count += 1.0f;
    const float delta = v - w.mean;
    w.mean += delta / w.count;
    w.m2 += delta * (v - w.mean);
  }
  w = warp_merge(w);

  __shared__ Welford partial[BLOCK_SIZE / 32];
  __shared__ float group_mean, group_rstd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = w;
  __syncthreads();
  if (warp == 0) {
    w = lane < BLOCK_SIZE / 32 ? partial[lane] : Welford{0.0f, 0.0f, 0.0f};
    w = warp_merge(w);
    if (lane == 0) {
      group_mean = w.mean;
      group_rstd = rsqrtf(w.m2 / (float)group_size + eps);
    }
  }
  __syncthreads();

  const float mean = group_mean, rstd = group_rstd;
  for (long long j = threadIdx.x; j < group_size; j += BLOCK_SIZE) {
    const int c = first_channel + (int)(j / spatial);
    float y = (static_cast<float>(x[start + j]) - mean) * rstd;
    if (weight != nullptr) y *= static_cast<float>(weight[c]);
    if (bias != nullptr) y += static_cast<float>(bias[c]);
    out[start + j] = static_cast<scalar_t>(y);
  }
}
