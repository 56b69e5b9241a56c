// hiera template: LayerNorm over the last dimension with one-pass Welford
// statistics: one block per row computes mean and variance in a single sweep
// (numerically stable, unlike sum and sum-of-squares), merges per-thread
// partials with Chan's formula through warp shuffles and shared memory, then
// normalises and applies the optional affine in a second sweep that hits L1/L2.
// Launch: grid = rows, block = block_size (a multiple of 32, at most 1024).
// weight and bias may be null (elementwise_affine=False). Biased variance, as torch.
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of x, weight, bias and out
// includes     headers the element type needs, or nothing
// block_size   threads per block, e.g. 256 (rows of >= 4096 elements: 512 or 1024)
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

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
{{kernel_name}}(const scalar_t* __restrict__ x, const scalar_t* __restrict__ weight, const scalar_t* __restrict__ bias,
                scalar_t* __restrict__ out, long long cols, float eps) {
  const long long row_start = (long long)blockIdx.x * cols;
  Welford w = {0.0f, 0.0f, 0.0f};
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE) {
    const float v = static_cast<float>(x[row_start + c]);
    w.count += 1.0f;
    const float delta = v - w.mean;
    w.mean += delta / w.count;
    w.m2 += delta * (v - w.mean);
  }
  w = warp_merge(w);

  __shared__ Welford partial[BLOCK_SIZE / 32];
  __shared__ float row_mean, row_rstd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = w;
  __syncthreads();
  if (warp == 0) {
    w = lane < BLOCK_SIZE / 32 ? partial[lane] : Welford{0.0f, 0.0f, 0.0f};
    w = warp_merge(w);
    if (lane == 0) {
      row_mean = w.mean;
      row_rstd = rsqrtf(w.m2 / (float)cols + eps);
    }
  }
  __syncthreads();

  const float mean = row_mean, rstd = row_rstd;
  for (long long c = threadIdx.x; c < cols; c += BLOCK_SIZE) {
    float y = (static_cast<float>(x[row_start + c]) - mean) * rstd;
    if (weight != nullptr) y *= static_cast<float>(weight[c]);
    if (bias != nullptr) y += static_cast<float>(bias[c]);
    out[row_start + c] = static_cast<scalar_t>(y);
  }
}
