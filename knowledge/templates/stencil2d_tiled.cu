// hiera template: a 2D stencil through a shared-memory tile with halo: each
// input point is read from device memory about once per block instead of
// once per neighbour that uses it. Output point (y, x) reads input
// (y + oy, x + ox) with lo_y <= oy <= hi_y, lo_x <= ox <= hi_x (any offsets:
// shifted slices, or a convolution with padding); points outside the input
// read as 0. Domain: in [batch, ny, nx], out [batch, oy_n, ox_n], contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(ox_n / tile_x), ceil(oy_n / tile_y), min(batch, 65535)).
//
// Placeholders:
// kernel_name    extern "C" name
// includes       headers the element types need, or nothing
// in_t, out_t    element types of the input and the output
// tile_x         block width, e.g. 32 (a multiple of 32 keeps rows coalesced)
// tile_y         block height, e.g. 8
// lo_y, hi_y     the smallest and largest y offset; likewise lo_x, hi_x
// functions      device helper functions the update calls, or nothing
// extra_params   more kernel parameters (start with a comma: , const float* __restrict__ weight), or nothing
// setup          statements run per plane after batch is known (e.g. coefficients into registers), or nothing
// update_body    statements naming intermediates over IN(oy, ox) (the input at (y + oy, x + ox)), in float
// update_result  the output value as a float expression
{{includes}}
typedef {{in_t}} in_t;
typedef {{out_t}} out_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}
#define LO_Y ({{lo_y}})
#define HI_Y ({{hi_y}})
#define LO_X ({{lo_x}})
#define HI_X ({{hi_x}})
#define TILE_H (TILE_Y + HI_Y - LO_Y)
#define TILE_W (TILE_X + HI_X - LO_X)
#define IN(oy, ox) tile[ty + (oy) - LO_Y][tx + (ox) - LO_X]
{{functions}}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const in_t* __restrict__ in, out_t* __restrict__ out{{extra_params}}, int nx, int ny, int ox_n, int oy_n,
                long long batches) {
  __shared__ float tile[TILE_H][TILE_W];
  const int tx = threadIdx.x, ty = threadIdx.y;  // signed: offsets may be negative
  const int x0 = blockIdx.x * TILE_X, y0 = blockIdx.y * TILE_Y;
  const int xo = x0 + tx, yo = y0 + ty;
  for (long long batch = blockIdx.z; batch < batches; batch += gridDim.z) {
    const in_t* plane = in + batch * ny * (long long)nx;
    {{setup}}
    __syncthreads();  // the previous plane's tile is no longer read
    // The tile and its halo, loaded cooperatively; points outside the input read as 0.
    for (int idx = ty * TILE_X + tx; idx < TILE_H * TILE_W; idx += TILE_X * TILE_Y) {
      const int j = idx / TILE_W, i = idx % TILE_W;
      const int gy = y0 + LO_Y + j, gx = x0 + LO_X + i;
      tile[j][i] = (gx >= 0 && gx < nx && gy >= 0 && gy < ny) ? static_cast<float>(plane[(long long)gy * nx + gx]) : 0.0f;
    }
    __syncthreads();
    if (xo < ox_n && yo < oy_n) {
      {{update_body}}
      out[(batch * oy_n + yo) * (long long)ox_n + xo] = static_cast<out_t>({{update_result}});
    }
  }
}
