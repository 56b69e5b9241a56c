// hiera template: a 2D stencil of radius R (radius) through a shared-memory
// tile with halo: each input point is read from device memory about once per
// block instead of once per neighbour that uses it ((2R+1)^2 or 4R+1 times).
// Domain: [batch, ny, nx] contiguous. Launch: block (tile_x, tile_y),
// grid (ceil(nx / tile_x), ceil(ny / tile_y), batch).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of in and out
// includes     headers the element type needs, or nothing
// radius       stencil radius R, e.g. 1
// tile_x       block width, e.g. 32 (a multiple of 32 keeps rows coalesced)
// tile_y       block height, e.g. 8
// extra_params coefficients the update uses (start with a comma: , float c0, float c1), or nothing
// update       the new value at an interior point (R <= x < nx - R, R <= y < ny - R) as a float
//                  expression of IN(dy, dx), the input at (y + dy, x + dx), |dy|, |dx| <= R, e.g.
//                  c0 * IN(0, 0) + c1 * (IN(0, -1) + IN(0, 1) + IN(-1, 0) + IN(1, 0))
// boundary     the value at a point closer than R to the edge, e.g. IN(0, 0) (copy) or 0.0f
{{includes}}
typedef {{scalar_t}} scalar_t;
#define R {{radius}}
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}
#define IN(dy, dx) tile[threadIdx.y + R + (dy)][threadIdx.x + R + (dx)]

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int nx, int ny{{extra_params}}) {
  __shared__ float tile[TILE_Y + 2 * R][TILE_X + 2 * R];
  const long long plane = (long long)blockIdx.z * nx * ny;
  const int x0 = blockIdx.x * TILE_X - R, y0 = blockIdx.y * TILE_Y - R;
  // The tile and its halo, loaded cooperatively; points outside the domain read as 0 (only boundary points see them).
  for (int j = threadIdx.y; j < TILE_Y + 2 * R; j += TILE_Y) {
    for (int i = threadIdx.x; i < TILE_X + 2 * R; i += TILE_X) {
      const int gx = x0 + i, gy = y0 + j;
      tile[j][i] = (gx >= 0 && gx < nx && gy >= 0 && gy < ny) ? static_cast<float>(in[plane + (long long)gy * nx + gx]) : 0.0f;
    }
  }
  __syncthreads();
  const int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const bool interior = x >= R && x < nx - R && y >= R && y < ny - R;
  out[plane + (long long)y * nx + x] = static_cast<scalar_t>(interior ? ({{update}}) : ({{boundary}}));
}
