#define TILE 32
__global__ void transpose(float* out, float* in, int w, int h) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  out[x * h + y] = tile[threadIdx.x][threadIdx.y];
  for (int k = 0; k < 4; ++k) atomicAdd(out, 1.0);
}
