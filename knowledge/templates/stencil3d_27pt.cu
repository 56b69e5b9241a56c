// hiera template: a symmetric 3D 27-point stencil (weights by distance class:
// centre, 6 faces, 12 edges, 8 corners) with three shared-memory planes that
// slide along z. A block owns a tile_x x tile_y column of the grid;
// each plane is loaded once (with a one-point halo) and used for three output
// planes, so each input point is read from device memory about once instead
// of 27 times. Domain: [batch, nz, ny, nx] contiguous.
// Launch: block (tile_x, tile_y), grid (ceil(nx / tile_x), ceil(ny / tile_y), batch);
// static shared memory 3 * (tile_y + 2) * (tile_x + 2) * 4 bytes.
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of in and out
// includes     headers the element type needs, or nothing
// tile_x       block width, e.g. 32
// tile_y       block height, e.g. 8
// boundary     the value on the faces of the domain, a float expression of center, e.g. center or 0.0f
{{includes}}
typedef {{scalar_t}} scalar_t;
#define TILE_X {{tile_x}}
#define TILE_Y {{tile_y}}

// out = c_center * centre + c_face * sum(6 faces) + c_edge * sum(12 edges) + c_corner * sum(8 corners)
extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int nx, int ny, int nz, float c_center,
                float c_face, float c_edge, float c_corner) {
  __shared__ float planes[3][TILE_Y + 2][TILE_X + 2];
  const long long plane_size = (long long)nx * ny;
  const scalar_t* volume = in + (long long)blockIdx.z * plane_size * nz;
  scalar_t* volume_out = out + (long long)blockIdx.z * plane_size * nz;
  const int x0 = blockIdx.x * TILE_X - 1, y0 = blockIdx.y * TILE_Y - 1;
  const int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
  const float weights[4] = {c_center, c_face, c_edge, c_corner};

  // Plane z goes to slot z % 3; before output plane z is computed, z - 1, z and z + 1 are loaded.
  auto load_plane = [&](int z) {
    for (int j = threadIdx.y; j < TILE_Y + 2; j += TILE_Y) {
      for (int i = threadIdx.x; i < TILE_X + 2; i += TILE_X) {
        const int gx = x0 + i, gy = y0 + j;
        planes[z % 3][j][i] = (gx >= 0 && gx < nx && gy >= 0 && gy < ny)
                                  ? static_cast<float>(volume[(long long)z * plane_size + (long long)gy * nx + gx])
                                  : 0.0f;
      }
    }
  };
  load_plane(0);
  for (int z = 0; z < nz; ++z) {
    if (z + 1 < nz) load_plane(z + 1);  // overwrites slot (z - 2) % 3, last read in the previous iteration
    __syncthreads();
    if (x < nx && y < ny) {
      const float center = planes[z % 3][threadIdx.y + 1][threadIdx.x + 1];
      const bool interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1;
      float value;
      if (interior) {
        value = 0.0f;
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
              value += weights[(dz != 0) + (dy != 0) + (dx != 0)] * planes[(z + dz + 3) % 3][threadIdx.y + 1 + dy][threadIdx.x + 1 + dx];
      } else {
        value = {{boundary}};
      }
      volume_out[(long long)z * plane_size + (long long)y * nx + x] = static_cast<scalar_t>(value);
    }
    __syncthreads();  // the next iteration overwrites the slot of plane z - 1
  }
}
