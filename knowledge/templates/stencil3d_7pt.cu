// hiera template: a 3D stencil with register blocking along z (the 7-point
// Laplacian is the case it is named for; any offsets work). A block owns a
// tile_x x tile_y column of the output and marches up a chunk of z: each
// thread keeps its own input column (the points at in-plane offset
// (column_y, column_x) for every z offset) in a register window that slides
// one plane per step, so each input point is read from device memory about
// once. The planes whose in-plane neighbours the update needs (z offsets
// plane_lo..plane_hi) also go through a shared-memory ring: each thread
// stores its register value, and only the halo around the tile is read from
// memory. One __syncthreads per plane (the ring has one spare slot).
// Output point (z, y, x) reads input (z + oz, y + oy, x + ox) with
// lo_z <= oz <= hi_z etc.; points outside the input read as 0 (a convolution's
// zero padding). Domain: in [batch, nz, ny, nx], out [batch, oz_n, oy_n, ox_n], contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(ox_n / tile_x), ceil(oy_n / tile_y), batch * ceil(oz_n / z_chunk)).
//
// Placeholders:
// kernel_name    extern "C" name
// includes       headers the element types need, or nothing
// in_t, out_t    element types of the input and the output
// tile_x         block width, e.g. 32
// tile_y         block height, e.g. 16
// lo_z, hi_z     the smallest and largest z offset; likewise lo_y, hi_y, lo_x, hi_x
// column_y       the in-plane offset whose column lives in registers (the most used one)
// column_x
// plane_lo       the z offsets whose planes are shared (in-plane neighbours needed): plane_lo..plane_hi;
// plane_hi           plane_hi = plane_lo - 1 when no plane is
// functions      device helper functions the update calls, or nothing
// extra_params   more kernel parameters (start with a comma: , const float* __restrict__ weight), or nothing
// setup          statements run once per block after batch is known (e.g. coefficients into registers), or nothing
// update_body    statements naming intermediates of the update, over COL(oz) (the thread's column at z offset
//                    oz) and PLANE(oz, oy, ox) (a shared plane's point), in float
// update_result  the output value as a float expression
{{includes}}
typedef {{in_t}} in_t;
typedef {{out_t}} out_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}
#define LO_Z ({{lo_z}})
#define HI_Z ({{hi_z}})
#define LO_Y ({{lo_y}})
#define HI_Y ({{hi_y}})
#define LO_X ({{lo_x}})
#define HI_X ({{hi_x}})
#define COLUMN_Y ({{column_y}})
#define COLUMN_X ({{column_x}})
#define PLANE_LO ({{plane_lo}})
#define PLANE_HI ({{plane_hi}})
#define KZ (HI_Z - LO_Z + 1)
#define RING (PLANE_HI - PLANE_LO + 2)
#define TILE_H (TILE_Y + HI_Y - LO_Y)
#define TILE_W (TILE_X + HI_X - LO_X)
#define COL(oz) column[(oz) - LO_Z]
#define PLANE(oz, oy, ox) tile[(z + (oz) - PLANE_LO) % RING][ty + (oy) - LO_Y][tx + (ox) - LO_X]
{{functions}}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const in_t* __restrict__ in, out_t* __restrict__ out{{extra_params}}, int nx, int ny, int nz, int ox_n,
                int oy_n, int oz_n, int z_chunk) {
#if PLANE_HI >= PLANE_LO
  __shared__ float tile[RING][TILE_H][TILE_W];
#endif
  const int chunks = (oz_n + z_chunk - 1) / z_chunk;
  const long long batch = blockIdx.z / chunks;
  const int z_begin = (int)(blockIdx.z % chunks) * z_chunk;
  const int z_end = min(oz_n, z_begin + z_chunk);
  const in_t* volume = in + batch * nz * (long long)ny * nx;
  out_t* volume_out = out + batch * oz_n * (long long)oy_n * ox_n;
  const int tx = threadIdx.x, ty = threadIdx.y;  // signed: offsets may be negative
  const int x0 = blockIdx.x * TILE_X, y0 = blockIdx.y * TILE_Y;
  const int xo = x0 + tx, yo = y0 + ty;
  {{setup}}
  // An input point, or 0 outside the input.
  auto load = [&](int gz, int gy, int gx) {
    return (gx >= 0 && gx < nx && gy >= 0 && gy < ny && gz >= 0 && gz < nz)
               ? static_cast<float>(volume[((long long)gz * ny + gy) * nx + gx])
               : 0.0f;
  };
#if PLANE_HI >= PLANE_LO
  // Input plane gz into its ring slot: the cells the threads hold in registers
  // come from `own` (when given), the rest (the halo) from memory.
  auto fill = [&](int slot, int gz, bool use_own, float own) {
    if (use_own) tile[slot][ty + COLUMN_Y - LO_Y][tx + COLUMN_X - LO_X] = own;
    for (int idx = ty * TILE_X + tx; idx < TILE_H * TILE_W; idx += TILE_X * TILE_Y) {
      const int j = idx / TILE_W, i = idx % TILE_W;
      const int tj = j - (COLUMN_Y - LO_Y), ti = i - (COLUMN_X - LO_X);
      if (use_own && tj >= 0 && tj < TILE_Y && ti >= 0 && ti < TILE_X) continue;  // a thread's own cell
      tile[slot][j][i] = load(gz, y0 + LO_Y + j, x0 + LO_X + i);
    }
  };
#endif
  // The register window: column[d] = input (z + LO_Z + d, yo + COLUMN_Y, xo + COLUMN_X) for the output plane z.
  const int cy = yo + COLUMN_Y, cx = xo + COLUMN_X;
  float column[KZ];
#pragma unroll
  for (int d = 0; d + 1 < KZ; ++d) column[d + 1] = load(z_begin + LO_Z + d, cy, cx);
#if PLANE_HI >= PLANE_LO
  for (int s = PLANE_LO; s < PLANE_HI; ++s) fill((z_begin + s - PLANE_LO) % RING, z_begin + s, false, 0.0f);
#endif
  for (int z = z_begin; z < z_end; ++z) {
#pragma unroll
    for (int d = 0; d + 1 < KZ; ++d) column[d] = column[d + 1];
    column[KZ - 1] = load(z + HI_Z, cy, cx);
#if PLANE_HI >= PLANE_LO
    fill((z + PLANE_HI - PLANE_LO) % RING, z + PLANE_HI, true, COL(PLANE_HI));
    __syncthreads();  // the slot written two planes ago is free: everyone passed the previous barrier
#endif
    if (xo < ox_n && yo < oy_n) {
      {{update_body}}
      volume_out[((long long)z * oy_n + yo) * ox_n + xo] = static_cast<out_t>({{update_result}});
    }
  }
}
