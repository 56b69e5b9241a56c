// hiera template: a float32 3D stencil with four outputs in x per thread and
// 16-byte loads, specialised to one grid size. Each thread reads, for every
// input row (oz, oy) its taps use, its own aligned float4 of that row; the
// floats a tap needs left or right of it come from the neighbouring lanes'
// float4s through warp shuffles (a lane at the warp's edge loads them), so a
// warp issues one 16-byte load per row where the scalar direct kernel issues
// one 4-byte load per tap. Rows with the same oy and consecutive oz are one
// chain marching along z: each step loads only the chain's top row and
// shifts the others down in registers. A stencil whose value combines sums
// of coefficient x tap (a conv with known coefficients) holds sums instead
// of rows: each step loads the top plane's rows one at a time, adds each
// term to the output plane it serves (one slot of four floats an output
// plane), and the lowest slot is then complete. Blocks are threads_x threads (4 *
// threads_x outputs, at most 512) wide, no wider than the row, and march
// through short z chunks. The grid's sizes are compiled in
// (the launch checks them and takes the generic scalar kernel otherwise):
// with run-time sizes, the index arithmetic and the registers it holds cost
// the H200 a fifth of its bandwidth here.
// Output point (z, y, x) reads input (z + oz, y + oy, x + ox); points outside
// the input read as 0 (a convolution's zero padding), or, with a boundary mode,
// as the point that mode maps them to (row_setup maps a row's y; in 3D each load
// names its mapped plane, which a chain's shifts keep right).
// Domain: in [batch, nz, ny, nx] float32, nx % 4 == 0, 16-byte aligned;
// out [batch, oz_n, oy_n, ox_n] float32; both contiguous.
// Launch: block (threads_x, tile_y), grid (ceil(ox_n / (4 * threads_x)), ceil(oy_n / tile_y), batch * ceil(oz_n / z_chunk)).
//
// Placeholders: kernel_name, includes, functions (device helpers), threads_x
// (a multiple of 32: each warp is one row's 32 consecutive float4s), tile_y,
// j_lo / j_n (the float4s a row may need, relative to the thread's own:
// j_lo .. j_lo + j_n - 1), fixed_sizes (statements setting nx, ny, nz, ox_n,
// oy_n, oz_n to constants), extra_params, setup (statements with `batch`
// known), row_setup (each row's offset from the thread's point and, where
// some output's taps reach outside the input, whether its y is inside; the
// chains' lower rows loaded for the first plane, or the sums' slots and the
// planes below the first output added into them),
// row_loads (each chain's top row for this plane: hiera_load_row<lo, hi>(rowR,
// ...), lo/hi the x offsets the chain's taps read; or the top plane's rows,
// each added into the slots), row_shifts (each chain or slot moved down one
// plane), update_body and update_result (over TAP(R, ox): row R's input at
// output x + i + ox, or the sums' names, for the output i = 0..3 computed),
// boundary (0 zeros, 1 replicate, 2 reflect, 3 circular),
// edge_function (hiera_edge(g, n) of that mode, from stencil_kernel.cpp).
{{includes}}
#define THREADS_X {{threads_x}}
#define TILE_Y {{tile_y}}
#define J_LO ({{j_lo}})
#define J_N ({{j_n}})
// Floor division and remainder by 4 for negative offsets too (constants after unrolling).
#define HIERA_FLOOR4(v) ((v) >= 0 ? (v) / 4 : -((3 - (v)) / 4))
#define HIERA_MOD4(v) ((v) - 4 * HIERA_FLOOR4(v))
#define TAP(r, ox) hiera_component(row##r[HIERA_FLOOR4(i + (ox)) - J_LO], HIERA_MOD4(i + (ox)))
#define BOUNDARY ({{boundary}})
// hiera_edge(g, n): a coordinate outside [0, n) as the boundary mode reads it.
{{edge_function}}
{{functions}}

__device__ __forceinline__ float hiera_component(const float4& v, int c) {
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

// One input row into chunks[j]: the float4 4 * (J_LO + j) floats from `row`
// (which points at the thread's own float4, x4), where output offsets
// LO..HI + 3 need it; outside the input zeros, or the boundary mode's point
// (only threads at a row's ends load it). `row` is read only when `row_ok`.
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
    // Only the floats some tap reads cross lanes; a lane at the warp's edge loads those itself, one
    // float each (a whole float4 there held four more registers and cost the H200 8% of its bandwidth).
    const int from = shuffled ? source : lane;
    const int x = x4 + 4 * d;
    const bool edge_ok = !shuffled && row_ok && x >= 0 && x < nx;
    float4 v = zero;
#define HIERA_TAKE(c, f)                                           \
    if (4 * d + (c) >= LO && 4 * d + (c) <= HI + 3) {             \
      v.f = __shfl_sync(0xffffffffu, own.f, from);                \
      if (!shuffled) v.f = edge_ok ? __ldg(row + 4 * d + (c)) : 0.0f; \
    }
    HIERA_TAKE(0, x)
    HIERA_TAKE(1, y)
    HIERA_TAKE(2, z)
    HIERA_TAKE(3, w)
#undef HIERA_TAKE
#if BOUNDARY != 0
#define HIERA_EDGE(c, f)                                                             \
    if (4 * d + (c) >= LO && 4 * d + (c) <= HI + 3 && (x + (c) < 0 || x + (c) >= nx)) \
      v.f = row_ok ? __ldg(row + (hiera_edge(x + (c), nx) - x4)) : 0.0f;
    HIERA_EDGE(0, x)
    HIERA_EDGE(1, y)
    HIERA_EDGE(2, z)
    HIERA_EDGE(3, w)
#undef HIERA_EDGE
#endif
    chunks[j] = v;
  }
}

// At least two 512-thread blocks a SM (registers capped at 64): the 27-point box's nine rows held 79
// registers a thread, one block a SM, a quarter of its threads. A block one row high (a 2D row march) has room.
#define MIN_BLOCKS (TILE_Y > 1 ? 2 : 1)
extern "C" __global__ void __launch_bounds__(THREADS_X * TILE_Y, MIN_BLOCKS)
{{kernel_name}}(const float* __restrict__ in, float* __restrict__ out{{extra_params}}, int nx, int ny, int nz, int ox_n,
                int oy_n, int oz_n, int z_chunk) {
  {{fixed_sizes}}
  const int chunks = (oz_n + z_chunk - 1) / z_chunk;
  const long long batch = blockIdx.z / chunks;
  const int z_begin = (int)(blockIdx.z % chunks) * z_chunk;
  const int z_end = min(oz_n, z_begin + z_chunk);
  const long long plane = (long long)ny * nx;
  const float* volume = in + batch * nz * plane;
  float* volume_out = out + batch * oz_n * (long long)oy_n * ox_n;
  const int x4 = 4 * (int)(blockIdx.x * THREADS_X + threadIdx.x);
  const int yo = blockIdx.y * TILE_Y + (int)threadIdx.y;
  const int lane = (int)(threadIdx.x & 31);
  {{setup}}
  // No early exit: every lane of a warp (one row, 32 consecutive float4s) takes part in the shuffles.
  const long long out_plane = (long long)oy_n * ox_n;
  const bool pairs = (ox_n & 1) == 0;  // output rows start 8-byte aligned: store float2s
  // Pointers at (z, yo, x4) moved one plane per step; each row an offset from them, fixed for the march.
  // Rows past the output's last read its last row's input (and store nothing): in bounds without checks.
  const int yl = min(yo, oy_n - 1);
  const float* at = volume + ((long long)z_begin * ny + yl) * nx + x4;
  float* o = volume_out + ((long long)z_begin * oy_n + yo) * ox_n + x4;
{{row_setup}}
  for (int z = z_begin; z < z_end; ++z, at += plane, o += out_plane) {
{{row_loads}}
    float result[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      {{update_body}}
      result[i] = {{update_result}};
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
{{row_shifts}}
  }
}
