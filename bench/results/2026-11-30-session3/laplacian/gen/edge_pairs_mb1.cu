// hiera: generated from knowledge/templates/stencil3d_vec4.cu

#define TILE_Y 4
#define MIN_BLOCKS 1
#define J_LO (0)
#define J_N (2)
// Floor division and remainder by 4 for negative offsets too (constants after unrolling).
#define HIERA_FLOOR4(v) ((v) >= 0 ? (v) / 4 : -((3 - (v)) / 4))
#define HIERA_MOD4(v) ((v) - 4 * HIERA_FLOOR4(v))
#define TAP(r, ox) hiera_component(row##r[HIERA_FLOOR4(i + (ox)) - J_LO], HIERA_MOD4(i + (ox)))


__device__ __forceinline__ float hiera_component(const float4& v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

// One input row into chunks[j]: the float4 4 * (J_LO + j) floats from `row`
// (which points at the thread's own float4, x4), where output offsets
// LO..HI + 3 need it; zeros outside the input. `row` is read only when `row_ok`.
template <int LO, int HI>
__device__ __forceinline__ void hiera_load_row(float4 (&chunks)[J_N], const float* __restrict__ row, bool row_ok, int x4,
                                               int nx, int lane) {
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float4 own = row_ok && x4 < nx ? __ldg(reinterpret_cast<const float4*>(row)) : zero;
#pragma unroll
  for (int j = 0; j < J_N; ++j) {
    const int d = J_LO + j;
    chunks[j] = zero;
    if (4 * d + 3 < LO || 4 * d > HI + 3) continue;  // this row's taps need nothing from chunk d
    if (d == 0) {
      chunks[j] = own;
      continue;
    }
    const int source = lane + d;
    const bool shuffled = source >= 0 && source < 32;
    // Only the components some tap reads cross lanes; a lane at the warp's edge loads those itself.
    const int from = shuffled ? source : lane;
    const int x = x4 + 4 * d;
    const bool edge_ok = !shuffled && row_ok && x >= 0 && x < nx;
    float4 v = zero;
#define HIERA_TAKE(c, f)                                                     \
    if (4 * d + c >= LO && 4 * d + c <= HI + 3) {                           \
      v.f = __shfl_sync(0xffffffffu, own.f, from);                          \
      if (!shuffled) v.f = edge_ok ? __ldg(row + 4 * d + c) : 0.0f;         \
    }
    HIERA_TAKE(0, x)
    HIERA_TAKE(1, y)
    HIERA_TAKE(2, z)
    HIERA_TAKE(3, w)
#undef HIERA_TAKE
    chunks[j] = v;
  }
}

extern "C" __global__ void __launch_bounds__(128 * TILE_Y, MIN_BLOCKS)
stencil_lap_vec4(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, int ox_n,
                int oy_n, int oz_n, int z_chunk) {
  nz = 512, ny = 512, nx = 512, oz_n = 510, oy_n = 510, ox_n = 510;  // compiled in: the launch checks them
  const int chunks = (oz_n + z_chunk - 1) / z_chunk;
  const long long batch = blockIdx.z / chunks;
  const int z_begin = (int)(blockIdx.z % chunks) * z_chunk;
  const int z_end = min(oz_n, z_begin + z_chunk);
  const long long plane = (long long)ny * nx;
  const float* volume = in + batch * nz * plane;
  float* volume_out = out + batch * oz_n * (long long)oy_n * ox_n;
  const int x4 = 4 * (int)(blockIdx.x * 128 + threadIdx.x);
  const int yo = blockIdx.y * TILE_Y + (int)threadIdx.y;
  const int lane = (int)(threadIdx.x & 31);
  
  // No early exit: every lane of a warp (one row, 32 consecutive float4s) takes part in the shuffles.
  const long long out_plane = (long long)oy_n * ox_n;
  const bool pairs = (ox_n & 1) == 0;  // output rows start 8-byte aligned: store float2s
  // Pointers at (z, yo, x4) moved one plane per step; each row an offset from them, fixed for the march.
  // Rows past the output's last read its last row's input (and store nothing): in bounds without checks.
  const int yl = min(yo, oy_n - 1);
  const float* at = volume + ((long long)z_begin * ny + yl) * nx + x4;
  float* o = volume_out + ((long long)z_begin * oy_n + yo) * ox_n + x4;
  const long long off0 = (long long)(0) * plane + (long long)(1) * nx;
  const long long off1 = (long long)(1) * plane + (long long)(0) * nx;
  const long long off2 = (long long)(1) * plane + (long long)(1) * nx;
  const long long off3 = (long long)(1) * plane + (long long)(2) * nx;
  const long long off4 = (long long)(2) * plane + (long long)(1) * nx;
  float4 row0[J_N];
  hiera_load_row<0, 2>(row0, at + off0, true, x4, nx, lane);
  float4 row2[J_N];
  hiera_load_row<0, 2>(row2, at + off2, true, x4, nx, lane);
  for (int z = z_begin; z < z_end; ++z, at += plane, o += out_plane) {
    float4 row4[J_N];
    hiera_load_row<0, 2>(row4, at + off4, true, x4, nx, lane);
    float4 row1[J_N];
    hiera_load_row<1, 1>(row1, at + off1, true, x4, nx, lane);
    float4 row3[J_N];
    hiera_load_row<1, 1>(row3, at + off3, true, x4, nx, lane);
    float result[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float t0 = TAP(4, 1) + TAP(0, 1);
      const float t1 = t0 + TAP(3, 1);
      const float t2 = t1 + TAP(1, 1);
      const float t3 = t2 + TAP(2, 2);
      const float t4 = t3 + TAP(2, 0);
      const float t5 = 6.0f * TAP(2, 1);
      const float t6 = t4 - t5;
      result[i] = t6;
    }
    if (yo < oy_n) {
      if (pairs) {
        if (x4 < ox_n) *reinterpret_cast<float2*>(o) = make_float2(result[0], result[1]);
        if (x4 + 2 < ox_n) *reinterpret_cast<float2*>(o + 2) = make_float2(result[2], result[3]);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (x4 + i < ox_n) o[i] = result[i];
      }
    }
#pragma unroll
    for (int j = 0; j < J_N; ++j) row0[j] = row2[j], row2[j] = row4[j];
  }
}
