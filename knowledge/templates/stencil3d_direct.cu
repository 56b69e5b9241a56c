// hiera template: a 3D stencil read straight from device memory, no shared
// memory and no barriers. A block owns a tile_x x tile_y column of the output
// and a chunk of z; each thread computes Z_UNROLL planes of its column per
// step with every tap's load issued before the arithmetic, so many loads are
// in flight per thread (the throughput a barrier-per-plane ring loses). The
// neighbours' reads hit L1/L2 (the same lines are read by adjacent threads and
// planes): device memory sees each input point about once. Where every tap of
// a step lies inside the input (all of a valid-region stencil, the interior of
// a padded one) a tap is one load at a constant offset from the thread's
// pointer; only the border pays for bounds checks (index math, not memory,
// bounded the first version at 30% of the DRAM bound on the H200).
// Output point (z, y, x) reads input (z + oz, y + oy, x + ox) with
// lo_z <= oz <= hi_z etc.; points outside the input read as 0 (a convolution's
// zero padding) or, with a boundary mode, as stencil2d_direct.cu maps them. Domain: in [batch, nz, ny, nx], out [batch, oz_n, oy_n, ox_n], contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(ox_n / tile_x), ceil(oy_n / tile_y), batch * ceil(oz_n / z_chunk)).
//
// Placeholders: those of stencil3d_7pt.cu (plane_lo and plane_hi are unused
// here: COL(oz) and PLANE(oz, oy, ox) both read memory), and
// boundary       0 zeros, 1 replicate, 2 reflect, 3 circular
// edge_function  the device function hiera_edge(g, n) of that mode (stencil_kernel.cpp)
{{includes}}
typedef {{in_t}} in_t;
typedef {{out_t}} out_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}
#define Z_UNROLL 4
#define LO_Z ({{lo_z}})
#define HI_Z ({{hi_z}})
#define LO_Y ({{lo_y}})
#define HI_Y ({{hi_y}})
#define LO_X ({{lo_x}})
#define HI_X ({{hi_x}})
#define COLUMN_Y ({{column_y}})
#define COLUMN_X ({{column_x}})
#define COL(oz) TAP(oz, COLUMN_Y, COLUMN_X)
#define PLANE(oz, oy, ox) TAP(oz, oy, ox)
#define BOUNDARY ({{boundary}})
// hiera_edge(g, n): a coordinate outside [0, n) as the boundary mode reads it.
{{edge_function}}
{{functions}}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const in_t* __restrict__ in, out_t* __restrict__ out{{extra_params}}, int nx, int ny, int nz, int ox_n,
                int oy_n, int oz_n, int z_chunk) {
  const int chunks = (oz_n + z_chunk - 1) / z_chunk;
  const long long batch = blockIdx.z / chunks;
  const int z_begin = (int)(blockIdx.z % chunks) * z_chunk;
  const int z_end = min(oz_n, z_begin + z_chunk);
  const long long plane = (long long)ny * nx;
  const in_t* volume = in + batch * nz * plane;
  out_t* volume_out = out + batch * oz_n * (long long)oy_n * ox_n;
  const int xo = blockIdx.x * TILE_X + (int)threadIdx.x, yo = blockIdx.y * TILE_Y + (int)threadIdx.y;
  {{setup}}
  if (xo >= ox_n || yo >= oy_n) return;  // no barrier below: idle threads may leave
  // An input point; outside the input 0, or the point the boundary mode maps it to.
  auto load = [&](int gz, int gy, int gx) {
#if BOUNDARY == 0
    return (gx >= 0 && gx < nx && gy >= 0 && gy < ny && gz >= 0 && gz < nz)
               ? static_cast<float>(volume[((long long)gz * ny + gy) * nx + gx])
               : 0.0f;
#else
    return static_cast<float>(volume[((long long)hiera_edge(gz, nz) * ny + hiera_edge(gy, ny)) * nx + hiera_edge(gx, nx)]);
#endif
  };
  const bool inside_xy = xo + LO_X >= 0 && xo + HI_X < nx && yo + LO_Y >= 0 && yo + HI_Y < ny;
  const in_t* column = volume + (long long)yo * nx + xo;
  out_t* column_out = volume_out + (long long)yo * ox_n + xo;
  const long long out_plane = (long long)oy_n * ox_n;
  for (int z0 = z_begin; z0 < z_end; z0 += Z_UNROLL) {
    float result[Z_UNROLL];
    if (inside_xy && z0 + LO_Z >= 0 && z0 + Z_UNROLL - 1 + HI_Z < nz) {
#define TAP(oz, oy, ox) static_cast<float>(at[(oz) * plane + (oy) * nx + (ox)])
#pragma unroll
      for (int u = 0; u < Z_UNROLL; ++u) {
        const in_t* at = column + (long long)(z0 + u) * plane;
        {{update_body}}
        result[u] = {{update_result}};
      }
#undef TAP
    } else {
#define TAP(oz, oy, ox) load(z + (oz), yo + (oy), xo + (ox))
#pragma unroll
      for (int u = 0; u < Z_UNROLL; ++u) {
        const int z = min(z0 + u, z_end - 1);  // past the chunk: recompute the last plane, stored once
        {{update_body}}
        result[u] = {{update_result}};
      }
#undef TAP
    }
#pragma unroll
    for (int u = 0; u < Z_UNROLL; ++u) {
      if (z0 + u < z_end) column_out[(long long)(z0 + u) * out_plane] = static_cast<out_t>(result[u]);
    }
  }
}
