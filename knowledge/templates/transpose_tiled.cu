// hiera template: transpose of the last two dimensions of a contiguous
// [batch, rows, cols] tensor into [batch, cols, rows] through a 32 x 33
// shared-memory tile: reads and writes are both coalesced, and the padding
// column keeps the tile's column reads free of bank conflicts. Replaces
// x.transpose(-1, -2).contiguous() and the strided copies it implies.
// Launch: block (32, 8), grid (ceil(cols / 32), ceil(rows / 32), batch).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type
// includes     headers the element type needs, or nothing
{{includes}}
typedef {{scalar_t}} scalar_t;
#define TILE 32
#define BLOCK_ROWS 8

extern "C" __global__ void __launch_bounds__(TILE * BLOCK_ROWS)
{{kernel_name}}(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int rows, int cols) {
  __shared__ scalar_t tile[TILE][TILE + 1];
  const long long matrix = (long long)blockIdx.z * rows * cols;
  const int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[matrix + (long long)(y + j) * cols + x];
  }
  __syncthreads();
  const int tx = blockIdx.y * TILE + threadIdx.x;  // column of the output = row of the input
  y = blockIdx.x * TILE + threadIdx.y;             // row of the output = column of the input
  for (int j = 0; j < TILE; j += BLOCK_ROWS) {
    if (tx < rows && y + j < cols) out[matrix + (long long)(y + j) * rows + tx] = tile[threadIdx.x][threadIdx.y + j];
  }
}
