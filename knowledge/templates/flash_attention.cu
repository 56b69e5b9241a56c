// hiera template: fused attention softmax(Q K^T * scale [+ causal mask]) V in
// the flash-attention style: one block per (batch x head, tile of block_m
// queries), one query per thread with its row of Q and of the output in
// registers; K and V stream through shared memory in tiles of block_n keys
// and the softmax is computed online (running max and sum, rescaled per tile),
// so the L x L score matrix never touches device memory. CUDA cores, fp32
// accumulation: it beats the unfused math path on memory traffic, not cuDNN or
// FlashAttention-2 on tensor-core throughput (for fp16/bf16 prefer SDPA).
// Q: [BH, Lq, D], K and V: [BH, Lk, D], out: [BH, Lq, D], contiguous; D = head_dim.
// Causal: key j is masked for query i when j > i (torch's is_causal, top-left aligned).
// Launch: block block_m, grid (ceil(Lq / block_m), BH);
// static shared memory 2 * block_n * head_dim * 4 bytes.
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of q, k, v and out
// includes     headers the element type needs, or nothing
// head_dim     D, e.g. 64 (128 spills registers with block_m 128; use block_m 64)
// block_m      queries per block = threads per block, e.g. 128
// block_n      keys per shared-memory tile, e.g. 32
{{includes}}
typedef {{scalar_t}} scalar_t;
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY
#define HEAD_DIM {{head_dim}}
#define BLOCK_M {{block_m}}
#define BLOCK_N {{block_n}}

extern "C" __global__ void __launch_bounds__(BLOCK_M)
{{kernel_name}}(const scalar_t* __restrict__ q, const scalar_t* __restrict__ k, const scalar_t* __restrict__ v,
                scalar_t* __restrict__ out, int lq, int lk, float scale, int causal) {
  __shared__ float k_tile[BLOCK_N][HEAD_DIM];
  __shared__ float v_tile[BLOCK_N][HEAD_DIM];
  const long long bh = blockIdx.y;
  const int query = blockIdx.x * BLOCK_M + threadIdx.x;
  const bool active = query < lq;

  float q_row[HEAD_DIM], o_row[HEAD_DIM];
  for (int d = 0; d < HEAD_DIM; ++d) {
    q_row[d] = active ? static_cast<float>(q[(bh * lq + query) * HEAD_DIM + d]) * scale : 0.0f;
    o_row[d] = 0.0f;
  }
  float running_max = -HIERA_INF, running_sum = 0.0f;

  // With a causal mask, keys past the block's last query are never needed.
  const int last_key = causal ? min(lk, (int)(blockIdx.x + 1) * BLOCK_M) : lk;
  for (int start = 0; start < last_key; start += BLOCK_N) {
    __syncthreads();  // the previous tile is no longer read
    for (int e = threadIdx.x; e < BLOCK_N * HEAD_DIM; e += BLOCK_M) {
      const int j = e / HEAD_DIM, d = e % HEAD_DIM;
      const bool valid = start + j < lk;
      k_tile[j][d] = valid ? static_cast<float>(k[(bh * lk + start + j) * HEAD_DIM + d]) : 0.0f;
      v_tile[j][d] = valid ? static_cast<float>(v[(bh * lk + start + j) * HEAD_DIM + d]) : 0.0f;
    }
    __syncthreads();
    if (!active) continue;

    float scores[BLOCK_N];
    float tile_max = -HIERA_INF;
    for (int j = 0; j < BLOCK_N; ++j) {
      const int key = start + j;
      float s = -HIERA_INF;
      if (key < lk && !(causal && key > query)) {
        s = 0.0f;
        for (int d = 0; d < HEAD_DIM; ++d) s += q_row[d] * k_tile[j][d];
      }
      scores[j] = s;
      tile_max = fmaxf(tile_max, s);
    }
    if (tile_max == -HIERA_INF) continue;  // every key of this tile is masked for this query
    const float new_max = fmaxf(running_max, tile_max);
    const float correction = expf(running_max - new_max);  // 0 on the first tile (running_max = -inf)
    running_sum *= correction;
    for (int d = 0; d < HEAD_DIM; ++d) o_row[d] *= correction;
    for (int j = 0; j < BLOCK_N; ++j) {
      const float p = expf(scores[j] - new_max);  // 0 for masked keys
      running_sum += p;
      for (int d = 0; d < HEAD_DIM; ++d) o_row[d] += p * v_tile[j][d];
    }
    running_max = new_max;
  }
  if (active) {
    const float inv_sum = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d) out[(bh * lq + query) * HEAD_DIM + d] = static_cast<scalar_t>(o_row[d] * inv_sum);
  }
}
