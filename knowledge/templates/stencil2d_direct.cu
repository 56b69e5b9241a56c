// hiera template: a 2D stencil read straight from device memory, one output
// point per thread, no shared memory and no barriers: the neighbours' reads
// hit L1/L2 (adjacent threads read the same lines), so device memory sees
// each input point about once, and nothing waits on a tile load. Where every
// tap lies inside the input (all of a valid-region stencil, the interior of a
// padded one) a tap is one load at a constant offset from the thread's
// pointer; only the border pays for bounds checks.
// Output point (y, x) reads input (y + oy, x + ox) with lo_y <= oy <= hi_y,
// lo_x <= ox <= hi_x; points outside the input read as 0, or, with a boundary
// mode (a pad with mode replicate / reflect / circular folded in), as the
// input point that mode maps them to.
// Domain: in [batch, ny, nx], out [batch, oy_n, ox_n], contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(ox_n / tile_x), ceil(oy_n / tile_y), min(batch, 65535)).
//
// Placeholders: those of stencil2d_tiled.cu, and
// boundary       0 zeros, 1 replicate, 2 reflect, 3 circular
// edge_function  the device function hiera_edge(g, n) of that mode (stencil_kernel.cpp)
{{includes}}
typedef {{in_t}} in_t;
typedef {{out_t}} out_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}
#define LO_Y ({{lo_y}})
#define HI_Y ({{hi_y}})
#define LO_X ({{lo_x}})
#define HI_X ({{hi_x}})
#define BOUNDARY ({{boundary}})
// hiera_edge(g, n): a coordinate outside [0, n) as the boundary mode reads it.
{{edge_function}}
{{functions}}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const in_t* __restrict__ in, out_t* __restrict__ out{{extra_params}}, int nx, int ny, int ox_n, int oy_n,
                long long batches) {
  const int xo = blockIdx.x * TILE_X + (int)threadIdx.x, yo = blockIdx.y * TILE_Y + (int)threadIdx.y;
  const bool inside = xo + LO_X >= 0 && xo + HI_X < nx && yo + LO_Y >= 0 && yo + HI_Y < ny;
  for (long long batch = blockIdx.z; batch < batches; batch += gridDim.z) {
    const in_t* plane = in + batch * ny * (long long)nx;
    {{setup}}
    if (xo >= ox_n || yo >= oy_n) continue;  // no barrier: idle threads only skip the store
    float value;
    if (inside) {
      const in_t* at = plane + (long long)yo * nx + xo;
#define IN(oy, ox) static_cast<float>(at[(oy) * nx + (ox)])
      {{update_body}}
      value = {{update_result}};
#undef IN
    } else {
      auto load = [&](int gy, int gx) {
#if BOUNDARY == 0
        return (gx >= 0 && gx < nx && gy >= 0 && gy < ny) ? static_cast<float>(plane[(long long)gy * nx + gx]) : 0.0f;
#else
        return static_cast<float>(plane[(long long)hiera_edge(gy, ny) * nx + hiera_edge(gx, nx)]);
#endif
      };
#define IN(oy, ox) load(yo + (oy), xo + (ox))
      {{update_body}}
      value = {{update_result}};
#undef IN
    }
    out[(batch * oy_n + yo) * (long long)ox_n + xo] = static_cast<out_t>(value);
  }
}
