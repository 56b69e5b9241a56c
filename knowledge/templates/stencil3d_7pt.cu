// hiera template: a 3D 7-point stencil with register blocking along z. A
// block owns a tile_x x tile_y column of the grid and marches up z:
// the points below, at and above the current plane live in registers; the
// current plane is copied from the registers into shared memory, with a
// one-point halo ring read from memory, for the four in-plane neighbours.
// Each input point is read from device memory about once (plus the halo),
// against seven times for the naive kernel. Domain: [batch, nz, ny, nx] contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(nx / tile_x), ceil(ny / tile_y), batch).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of in and out
// includes     headers the element type needs, or nothing
// tile_x       block width, e.g. 32
// tile_y       block height, e.g. 8
// extra_params coefficients the update uses (start with a comma: , float c0, float c1), or nothing
// update       the new value at an interior point as a float expression of center, west (x-1), east (x+1),
//                  south (y-1), north (y+1), down (z-1), up (z+1), e.g.
//                  c0 * center + c1 * (west + east + south + north + down + up)
// boundary     the value on the faces of the domain, e.g. center (copy) or 0.0f
{{includes}}
typedef {{scalar_t}} scalar_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int nx, int ny, int nz{{extra_params}}) {
  __shared__ float plane_tile[TILE_Y + 2][TILE_X + 2];
  const long long plane_size = (long long)nx * ny;
  const scalar_t* volume = in + (long long)blockIdx.z * plane_size * nz;
  scalar_t* volume_out = out + (long long)blockIdx.z * plane_size * nz;
  const int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
  const bool inside = x < nx && y < ny;
  const long long column = (long long)y * nx + x;

  float down = 0.0f;
  float center = inside ? static_cast<float>(volume[column]) : 0.0f;
  float up = inside && nz > 1 ? static_cast<float>(volume[plane_size + column]) : 0.0f;
  // A point of plane z, or 0 outside the domain (only boundary points read those).
  auto load = [&](int gx, int gy, int z) {
    return (gx >= 0 && gx < nx && gy >= 0 && gy < ny) ? static_cast<float>(volume[(long long)z * plane_size + (long long)gy * nx + gx]) : 0.0f;
  };
  for (int z = 0; z < nz; ++z) {
    __syncthreads();  // everyone is done reading the previous plane
    // The tile comes from the registers; only its one-point halo ring is read from memory.
    plane_tile[threadIdx.y + 1][threadIdx.x + 1] = center;
    if (threadIdx.x == 0) plane_tile[threadIdx.y + 1][0] = load(x - 1, y, z);
    if (threadIdx.x == TILE_X - 1) plane_tile[threadIdx.y + 1][TILE_X + 1] = load(x + 1, y, z);
    if (threadIdx.y == 0) plane_tile[0][threadIdx.x + 1] = load(x, y - 1, z);
    if (threadIdx.y == TILE_Y - 1) plane_tile[TILE_Y + 1][threadIdx.x + 1] = load(x, y + 1, z);
    __syncthreads();
    if (inside) {
      const float west = plane_tile[threadIdx.y + 1][threadIdx.x], east = plane_tile[threadIdx.y + 1][threadIdx.x + 2];
      const float south = plane_tile[threadIdx.y][threadIdx.x + 1], north = plane_tile[threadIdx.y + 2][threadIdx.x + 1];
      const bool interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1;
      volume_out[(long long)z * plane_size + column] = static_cast<scalar_t>(interior ? ({{update}}) : ({{boundary}}));
    }
    down = center;
    center = up;
    up = inside && z + 2 < nz ? static_cast<float>(volume[(long long)(z + 2) * plane_size + column]) : 0.0f;
  }
}
