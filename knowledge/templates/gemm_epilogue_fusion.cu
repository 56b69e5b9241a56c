// hiera template: everything after a GEMM in one pass. The library GEMM
// (cuBLAS through torch.matmul / torch.mm) writes acc = A @ B; this kernel
// then applies bias, activation, scaling and residual together, reading the
// GEMM output once, instead of one full pass over the M x N output per op.
// In place is fine (out may equal acc; no __restrict__ between them).
// Launch: block 256, grid = min(ceil(rows * cols / 256), sm_count * blocks_per_sm).
//
// Placeholders:
// kernel_name  extern "C" name
// scalar_t     element type of acc, bias, residual and out
// includes     headers the element type needs, or nothing
// extra_params more parameters the epilogue uses, e.g. float scale (start with a comma: , float scale), or nothing
// epilogue     the output as a float expression of acc (GEMM result), b (bias[col], 0 without bias),
//                  r (residual[row, col], 0 without residual), row and col, e.g. fmaxf(acc + b, 0.0f) + r
{{includes}}
typedef {{scalar_t}} scalar_t;

extern "C" __global__ void {{kernel_name}}(const scalar_t* acc_in, const scalar_t* __restrict__ bias,
                                           const scalar_t* __restrict__ residual, scalar_t* out, long long rows,
                                           long long cols{{extra_params}}) {
  const long long n = rows * cols;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const long long row = i / cols, col = i - row * cols;
    const float acc = static_cast<float>(acc_in[i]);
    const float b = bias != nullptr ? static_cast<float>(bias[col]) : 0.0f;
    const float r = residual != nullptr ? static_cast<float>(residual[i]) : 0.0f;
    (void)row;
    out[i] = static_cast<scalar_t>({{epilogue}});
  }
}
