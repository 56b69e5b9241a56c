// hiera: size N=1048576
// hiera: flops=2*N bytes=12*N
// hiera: arg x in float32[N]
// hiera: arg y inout float32[N]
// hiera: launch grid=(N+255)/256 block=256
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void run(int n, float a, const float* x, float* y) {
  const int threads = 256;
  dim3 grid((n + threads - 1) / threads);
  for (int r = 0; r < 3; ++r) saxpy<<<grid, threads, 0, 0>>>(n, a, x, y);
}
