// Prototype: implicit-GEMM conv2d (stride 1) on TF32 mma.sync, NCHW in, fused epilogue.
// Compile-time: CIN COUT KH KW PAD_H PAD_W ROWS BW MT EPI (0 elementwise, 1 min over channels)
#define NT (COUT / 8)
#define WM (MT * 16)
#define BM (ROWS * BW)
#define WARPS (BM / WM)
#define THREADS (WARPS * 32)
#define PR (ROWS + KH - 1)
#define ALPAD (((PAD_W) + 3) / 4 * 4)
#define SHIFT (ALPAD - (PAD_W))
#define CH ((BW + KW - 1 + SHIFT + 3) / 4)
#define PC (CH * 4)
#define PITCH PC
#define CS0 (PR * PITCH)
#define CS (CS0 + ((8 - CS0 % 32) + 32) % 32)
#define PATCH (CIN * CS)
#define KSTEPS (KH * KW * CIN / 8)
#define WFLOATS (KSTEPS * NT * 64)
#define CHUNKS (CIN * PR * CH)

__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void mma_tf32(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool valid) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ float epi_tanh(float x) { return tanhf(x); }

extern "C" __global__ void __launch_bounds__(THREADS) conv_tc(const float* __restrict__ x, const float* __restrict__ w,
                                                             const float* __restrict__ bias, float* __restrict__ out,
                                                             int N, int H, int W, int HO, int WO) {
  extern __shared__ float smem[];
  float* s_w = smem;                 // WFLOATS, fragment order
  float* s_in = smem + WFLOATS;      // 2 x PATCH
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;

  // Weights, permuted into B fragments: [kstep][j/2][lane] -> (b0, b1) of n-tiles j and j+1.
  for (int e = tid; e < KSTEPS * NT * 32; e += THREADS) {
    const int l = e & 31, j = (e >> 5) % NT, s = (e >> 5) / NT;
    const int kk = s / (CIN / 8), c0 = (s % (CIN / 8)) * 8;  // kk = kh * KW + kw
    const int kh = kk / KW, kw = kk % KW;
    const int n = j * 8 + (l >> 2), c = c0 + (l & 3);
    const float v0 = w[((n * CIN + c) * KH + kh) * KW + kw];
    const float v1 = w[((n * CIN + c + 4) * KH + kh) * KW + kw];
    float* dst = s_w + ((s * (NT / 2) + j / 2) * 32 + l) * 4 + (j & 1) * 2;
    dst[0] = __uint_as_float(to_tf32(v0));
    dst[1] = __uint_as_float(to_tf32(v1));
  }
  float bias_r[NT][2];
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    bias_r[j][0] = bias[j * 8 + 2 * (lane & 3)];
    bias_r[j][1] = bias[j * 8 + 2 * (lane & 3) + 1];
  }

  const int tiles_w = (WO + BW - 1) / BW, tiles_h = (HO + ROWS - 1) / ROWS;
  const int ntiles = N * tiles_h * tiles_w;

  auto load = [&](int tile, float* buf) {
    const int tw = tile % tiles_w, th = (tile / tiles_w) % tiles_h, n = tile / (tiles_w * tiles_h);
    const int ih0 = th * ROWS - PAD_H, iw0 = tw * BW - ALPAD;
    const float* xn = x + (size_t)n * CIN * H * W;
    for (int e = tid; e < CHUNKS; e += THREADS) {
      const int c = e / (PR * CH), rem = e % (PR * CH), r = rem / CH, q = rem % CH;
      const int ih = ih0 + r, iw = iw0 + 4 * q;
      const bool ok = ih >= 0 && ih < H && iw >= 0 && iw < W;
      cp_async16(buf + c * CS + r * PITCH + 4 * q, ok ? xn + ((size_t)c * H + ih) * W + iw : x, ok);
    }
  };
  auto round_own = [&](float* buf) {
    for (int e = tid; e < CHUNKS; e += THREADS) {
      const int c = e / (PR * CH), rem = e % (PR * CH), r = rem / CH, q = rem % CH;
      float4* p = reinterpret_cast<float4*>(buf + c * CS + r * PITCH + 4 * q);
      float4 v = *p;
      v.x = __uint_as_float(to_tf32(v.x)); v.y = __uint_as_float(to_tf32(v.y));
      v.z = __uint_as_float(to_tf32(v.z)); v.w = __uint_as_float(to_tf32(v.w));
      *p = v;
    }
  };

  int tile = blockIdx.x;
  if (tile < ntiles) load(tile, s_in);
  asm volatile("cp.async.commit_group;\n" ::);
  int buf = 0;
  // This warp's positions: one row of the tile (BW a multiple of WM).
  const int m0 = warp * WM, rr = m0 / BW, cc0 = m0 % BW;
  for (; tile < ntiles; tile += gridDim.x) {
    const int next = tile + gridDim.x;
    if (next < ntiles) load(next, s_in + (buf ^ 1) * PATCH);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    float* cur = s_in + buf * PATCH;
    round_own(cur);
    __syncthreads();

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

    const float* abase = cur + t * CS + rr * PITCH + cc0 + g + SHIFT;
    const float4* wb = reinterpret_cast<const float4*>(s_w) + lane;
#pragma unroll
    for (int kh = 0; kh < KH; ++kh)
#pragma unroll
      for (int kw = 0; kw < KW; ++kw)
#pragma unroll
        for (int c0 = 0; c0 < CIN; c0 += 8) {
          const int s = (kh * KW + kw) * (CIN / 8) + c0 / 8;
          unsigned a[MT][4];
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            const float* p = abase + c0 * CS + kh * PITCH + kw + i * 16;
            a[i][0] = __float_as_uint(p[0]);
            a[i][1] = __float_as_uint(p[8]);
            a[i][2] = __float_as_uint(p[4 * CS]);
            a[i][3] = __float_as_uint(p[4 * CS + 8]);
          }
#pragma unroll
          for (int jp = 0; jp < NT / 2; ++jp) {
            const float4 b = wb[(s * (NT / 2) + jp) * 32];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              mma_tf32(acc[i][2 * jp], a[i], __float_as_uint(b.x), __float_as_uint(b.y));
              mma_tf32(acc[i][2 * jp + 1], a[i], __float_as_uint(b.z), __float_as_uint(b.w));
            }
          }
        }

    // Epilogue.
    const int tw = tile % tiles_w, th = (tile / tiles_w) % tiles_h, n = tile / (tiles_w * tiles_h);
    const int oh = th * ROWS + rr;
#if EPI == 0
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int ow = tw * BW + cc0 + i * 16 + g + 8 * h;
        if (oh < HO && ow < WO) {
#pragma unroll
          for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
              const int co = j * 8 + 2 * t + q;
              float v = acc[i][j][2 * h + q] + bias_r[j][q];
              EPILOGUE
              out[(((size_t)n * COUT + co) * HO + oh) * WO + ow] = v;
            }
        }
      }
#else
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float m = __int_as_float(0x7f800000);
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int q = 0; q < 2; ++q) m = fminf(m, acc[i][j][2 * h + q] + bias_r[j][q]);
        m = fminf(m, __shfl_xor_sync(0xffffffffu, m, 1));
        m = fminf(m, __shfl_xor_sync(0xffffffffu, m, 2));
        const int ow = tw * BW + cc0 + i * 16 + g + 8 * h;
        if (t == 0 && oh < HO && ow < WO) {
          float v = m;
          EPILOGUE
          out[((size_t)n * HO + oh) * WO + ow] = v;
        }
      }
#endif
    __syncthreads();
    buf ^= 1;
  }
}
