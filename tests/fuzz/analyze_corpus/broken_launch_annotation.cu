// hiera: size N=
// hiera: arg x in float32[N
// hiera: launch grid=(N+255)/ block=
// hiera: flops=2**N bytes=
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] *= 2.0f;
}
void host(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n
