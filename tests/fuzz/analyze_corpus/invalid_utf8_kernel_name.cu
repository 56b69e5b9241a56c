__global__ void kÿernel(float* x, int n) {
  int i = threadIdx.x;
  if (i < n) x[i] = 0.5f;
}
void go(float* x) { kÿernel<<<1, 1024 + 32>>>(x, 7); }
