// hiera template: a float32 2D convolution (stride 1, dilation 1, one group,
// zero padding) as an implicit GEMM on TF32 tensor cores (mma.sync
// m16n8k8), reading the NCHW input as it lies, with what follows the
// convolution computed in the epilogue from the accumulators: an
// elementwise function of each output element (bias, activations,
// per-channel scales); a reduction over all output channels of a position
// followed by an elementwise function of the result; or an elementwise
// function of each element (after a 2x2 average pool with POOL) summed over
// the whole image (each tile's sum to out[tile], then _images sums each
// image's tiles in a fixed order). The convolution's output never reaches memory.
//
// Blocks are persistent: each loads every weight once into shared memory,
// permuted into the B fragments the warps read (16 bytes a lane), and walks
// tiles of ROWS x BW output positions of one image. The input tile (CINP
// channels: CIN rounded up to 8, the extra ones zero x ROWS + KH - 1 rows x BW + KW - 1 columns, as 16-byte chunks) is
// fetched with cp.async into one of two buffers while the other is computed;
// a row reads 16-byte chunks from a column a multiple of 4 before the tile,
// so `pitch` (the input's row length in memory) must be a multiple of 4 and
// the input 16-byte aligned, columns from `width` to `pitch` zero. Each warp
// owns 16 * MT positions of one tile row and every output channel; a
// channel stride of 8 (mod 32) words keeps the A-fragment reads free of bank
// conflicts. With SPLIT each operand is split into a TF32 high part and a
// TF32 remainder and three products are summed (3xTF32: float32 accuracy at
// three times the tensor work), for when TF32 is not allowed.
// Launch: block 32 * ROWS * BW / (16 * MT), grid = min(tiles, SMs x blocks per SM),
// dynamic shared memory 4 * (KH * KW * CINP * COUTP + 2 * CINP * channel_stride) bytes.
//
// Placeholders:
// kernel_name     extern "C" name
// includes        headers the epilogue's operand types need, or nothing
// index_t         int, or long long when the output can have 2^31 elements or more
// cin, cout       input and output channels
// kh, kw          kernel size
// pad_h, pad_w    zero padding
// rows, bw        output rows and columns of a tile (bw a multiple of 16 * mt)
// mt              m16 tiles (16 positions each) of a warp
// blocks_per_sm   blocks an SM should hold (their shared memory fits): registers are capped to match
// pitch           floats of a tile row in shared memory (a multiple of 4)
// channel_stride  floats between the channels of the tile (8 mod 32)
// split           1: 3xTF32, 0: TF32
// reduce          0: elementwise; 1: a reduction over the output channels first; 2: summed over the image
// pool            1: a 2x2 average pool (stride 2) before the element function (reduce 2), else 0
// identity        the reduction's identity (reduce 1)
// combine         the reduction's combination of a and b (reduce 1)
// reduced         the reduction's value from its accumulator acc (reduce 1)
// functions       device helper functions the element function calls, or nothing
// element_params  the element function's parameters after i and v, each starting with a comma
// body            statements computing the epilogue of element i (of channel c, 0 after a reduction) whose
//                 convolution (or reduction) value is v
// result          the epilogue's value as a float expression
// params          the epilogue's kernel parameters (pointers, broadcast sizes), each followed by a comma
// element_args    the element function's arguments after i and v, each starting with a comma
{{includes}}
typedef {{index_t}} index_t;
#define CIN {{cin}}
#define CINP ((CIN + 7) / 8 * 8)
#define COUT {{cout}}
#define KH {{kh}}
#define KW {{kw}}
#define PAD_H {{pad_h}}
#define PAD_W {{pad_w}}
#define ROWS {{rows}}
#define BW {{bw}}
#define MT {{mt}}
#define PITCH {{pitch}}
#define CS {{channel_stride}}
#define SPLIT {{split}}
#define REDUCE {{reduce}}
#define POOL {{pool}}
#define COUTP ((COUT + 15) / 16 * 16)  // n-tiles go in pairs; the extra channels have zero weights
#define NT (COUTP / 8)
#define WM (MT * 16)
#define THREADS (ROWS * BW / WM * 32)
#define ALPAD ((PAD_W + 3) / 4 * 4)  // the tile's first column, rounded down to a multiple of 4
#define SHIFT (ALPAD - PAD_W)
#define CHUNKS_PER_ROW (PITCH / 4)
#define TILE_ROWS (ROWS + KH - 1)
#define CHUNKS (CINP * TILE_ROWS * CHUNKS_PER_ROW)
#define PATCH (CINP * CS)
#define KSTEPS (KH * KW * CINP / 8)
#define WEIGHT_FLOATS (KSTEPS * NT * 64)
#define HIERA_INF __int_as_float(0x7f800000)  // NVRTC has no math.h INFINITY

#ifndef HIERA_EMULATED_TENSOR_CORES
// The PTX behind the kernel; the CPU emulation of the tests defines these itself.
__device__ __forceinline__ unsigned hiera_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void hiera_mma_tf32(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// 16 bytes global -> shared, or 16 zero bytes when !valid (src is then not read).
__device__ __forceinline__ void hiera_cp_async16(float* dst, const float* src, bool valid) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void hiera_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void hiera_cp_async_wait_one() { asm volatile("cp.async.wait_group 1;\n" ::); }
#define HIERA_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

{{functions}}
__device__ __forceinline__ float {{kernel_name}}_element(const index_t i, const float v, const int c{{element_params}}) {
  {{body}}
  return {{result}};
}

extern "C" __global__ void __launch_bounds__(THREADS, {{blocks_per_sm}})
{{kernel_name}}(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                {{params}}float* __restrict__ out, int batch, int height, int pitch, int out_height, int out_width) {
  HIERA_DYNAMIC_SHARED(float, shared);
#if REDUCE == 2
  __shared__ float tile_sums[THREADS / 32];
#endif
  float* s_weight = shared;                // B fragments: [kstep][pair of n-tiles][lane] x 4 floats
  float* s_input = shared + WEIGHT_FLOATS;  // two tiles of PATCH floats
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;

  // k = ((kh * KW + kw) * CINP + c): a k-step of 8 is 8 channels of one tap.
  for (int e = tid; e < KSTEPS * NT * 32; e += THREADS) {
    const int l = e & 31, j = (e >> 5) % NT, s = (e >> 5) / NT;
    const int tap = s / (CINP / 8), c0 = (s % (CINP / 8)) * 8;
    const int r = tap / KW, q = tap % KW, n = j * 8 + (l >> 2), c = c0 + (l & 3);
    const bool real = n < COUT;
    const float w0 = real && c < CIN ? weight[((n * CIN + c) * KH + r) * KW + q] : 0.0f;
    const float w1 = real && c + 4 < CIN ? weight[((n * CIN + c + 4) * KH + r) * KW + q] : 0.0f;
    float* dst = s_weight + ((s * (NT / 2) + j / 2) * 32 + l) * 4 + (j & 1) * 2;
#if SPLIT
    dst[0] = w0;
    dst[1] = w1;
#else
    dst[0] = __uint_as_float(hiera_tf32(w0));
    dst[1] = __uint_as_float(hiera_tf32(w1));
#endif
  }
  float bias_of[NT][2];
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    bias_of[j][0] = bias != nullptr && j * 8 + 2 * t < COUT ? bias[j * 8 + 2 * t] : 0.0f;
    bias_of[j][1] = bias != nullptr && j * 8 + 2 * t + 1 < COUT ? bias[j * 8 + 2 * t + 1] : 0.0f;
  }

  const int tiles_w = (out_width + BW - 1) / BW, tiles_h = (out_height + ROWS - 1) / ROWS;
  const int tiles = batch * tiles_w * tiles_h;
  const long long plane = (long long)height * pitch;
  const auto fetch = [&](int tile, float* buffer) {
    const int tw = tile % tiles_w, th = (tile / tiles_w) % tiles_h, n = tile / (tiles_w * tiles_h);
    const int ih0 = th * ROWS - PAD_H, iw0 = tw * BW - ALPAD;
    const float* image = x + (long long)n * CIN * plane;
    for (int e = tid; e < CHUNKS; e += THREADS) {
      const int c = e / (TILE_ROWS * CHUNKS_PER_ROW), rest = e % (TILE_ROWS * CHUNKS_PER_ROW);
      const int r = rest / CHUNKS_PER_ROW, q = rest % CHUNKS_PER_ROW;
      const int ih = ih0 + r, iw = iw0 + 4 * q;
      const bool valid = c < CIN && ih >= 0 && ih < height && iw >= 0 && iw < pitch;
      hiera_cp_async16(buffer + c * CS + r * PITCH + 4 * q, valid ? image + c * plane + (long long)ih * pitch + iw : x,
                       valid);
    }
  };

  int tile = blockIdx.x;
  if (tile < tiles) fetch(tile, s_input);
  hiera_cp_async_commit();
  int current = 0;
#if POOL
  // This warp's positions: 16 columns of two tile rows, m-tile i on row `row + i` (a 2x2 window's
  // rows in one thread).
  const int row = 2 * (warp / (BW / 16)), col0 = 16 * (warp % (BW / 16));
#define M_STEP PITCH
#else
  const int m0 = warp * WM, row = m0 / BW, col0 = m0 % BW;  // this warp's positions: one tile row
#define M_STEP 16
#endif
  for (; tile < tiles; tile += gridDim.x) {
    if (tile + (int)gridDim.x < tiles) fetch(tile + gridDim.x, s_input + (current ^ 1) * PATCH);
    hiera_cp_async_commit();
    hiera_cp_async_wait_one();  // this thread's chunks of `tile` have landed
    float* input = s_input + current * PATCH;
#if !SPLIT
    // Round this thread's own chunks to TF32 once, rather than at each of their KH * KW reads.
    for (int e = tid; e < CHUNKS; e += THREADS) {
      const int c = e / (TILE_ROWS * CHUNKS_PER_ROW), rest = e % (TILE_ROWS * CHUNKS_PER_ROW);
      float4* p = reinterpret_cast<float4*>(input + c * CS + (rest / CHUNKS_PER_ROW) * PITCH + 4 * (rest % CHUNKS_PER_ROW));
      float4 v = *p;
      v.x = __uint_as_float(hiera_tf32(v.x));
      v.y = __uint_as_float(hiera_tf32(v.y));
      v.z = __uint_as_float(hiera_tf32(v.z));
      v.w = __uint_as_float(hiera_tf32(v.w));
      *p = v;
    }
#endif
    __syncthreads();

    float frag[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j) frag[i][j][0] = frag[i][j][1] = frag[i][j][2] = frag[i][j][3] = 0.0f;
    const float* a_base = input + t * CS + row * PITCH + col0 + g + SHIFT;
    const float4* b_base = reinterpret_cast<const float4*>(s_weight) + lane;
#pragma unroll
    for (int r = 0; r < KH; ++r)
#pragma unroll
      for (int q = 0; q < KW; ++q)
#pragma unroll
        for (int c0 = 0; c0 < CINP; c0 += 8) {
          const int s = (r * KW + q) * (CINP / 8) + c0 / 8;
          // A fragment (16 positions x 8 channels): rows g and g + 8, channels t and t + 4.
          unsigned a[MT][4];
#if SPLIT
          unsigned a_low[MT][4];
#endif
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            const float* p = a_base + c0 * CS + r * PITCH + q + i * M_STEP;
            const float f[4] = {p[0], p[8], p[4 * CS], p[4 * CS + 8]};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
#if SPLIT
              a[i][k] = hiera_tf32(f[k]);
              a_low[i][k] = hiera_tf32(f[k] - __uint_as_float(a[i][k]));
#else
              a[i][k] = __float_as_uint(f[k]);
#endif
            }
          }
#pragma unroll
          for (int jp = 0; jp < NT / 2; ++jp) {
            const float4 b = b_base[(s * (NT / 2) + jp) * 32];
#if SPLIT
            const unsigned hi[4] = {hiera_tf32(b.x), hiera_tf32(b.y), hiera_tf32(b.z), hiera_tf32(b.w)};
            const unsigned lo[4] = {hiera_tf32(b.x - __uint_as_float(hi[0])), hiera_tf32(b.y - __uint_as_float(hi[1])),
                                    hiera_tf32(b.z - __uint_as_float(hi[2])), hiera_tf32(b.w - __uint_as_float(hi[3]))};
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              hiera_mma_tf32(frag[i][2 * jp], a_low[i], hi[0], hi[1]);
              hiera_mma_tf32(frag[i][2 * jp], a[i], lo[0], lo[1]);
              hiera_mma_tf32(frag[i][2 * jp], a[i], hi[0], hi[1]);
              hiera_mma_tf32(frag[i][2 * jp + 1], a_low[i], hi[2], hi[3]);
              hiera_mma_tf32(frag[i][2 * jp + 1], a[i], lo[2], lo[3]);
              hiera_mma_tf32(frag[i][2 * jp + 1], a[i], hi[2], hi[3]);
            }
#else
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              hiera_mma_tf32(frag[i][2 * jp], a[i], __float_as_uint(b.x), __float_as_uint(b.y));
              hiera_mma_tf32(frag[i][2 * jp + 1], a[i], __float_as_uint(b.z), __float_as_uint(b.w));
            }
#endif
          }
        }

    // Epilogue: frag[i][j][k] is channel 8 j + 2 t + k % 2 at column col0 + g + 8 (k / 2) of m-tile i:
    // columns 16 i further on (rows 1 lower with POOL).
    const int tw = tile % tiles_w, th = (tile / tiles_w) % tiles_h, n = tile / (tiles_w * tiles_h);
#if REDUCE == 2
    float total = 0.0f;  // this thread's share of the image's sum
#if POOL
    // A 2x2 window: the thread's two m-tiles (rows oh0, oh0 + 1) and the lane of g ^ 1 (the next column).
    const int oh0 = th * ROWS + row, pooled_h = out_height / 2, pooled_w = out_width / 2;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int k = 0; k < 2; ++k)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int c = j * 8 + 2 * t + k, ow = tw * BW + col0 + g + 8 * h;
          float window = (frag[0][j][2 * h + k] + bias_of[j][k]) + (frag[1][j][2 * h + k] + bias_of[j][k]);
          window += __shfl_xor_sync(0xffffffffu, window, 4);
          const int ph = oh0 / 2, pw = ow / 2;
          if (c < COUT && (g & 1) == 0 && ph < pooled_h && pw < pooled_w) {
            const index_t e = (((index_t)n * COUT + c) * pooled_h + ph) * pooled_w + pw;
            total += {{kernel_name}}_element(e, window * 0.25f, c{{element_args}});
          }
        }
#endif
#endif
#if REDUCE != 2 || !POOL
    const int oh = th * ROWS + row;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int ow = tw * BW + col0 + i * 16 + g + 8 * h;
        const bool inside = oh < out_height && ow < out_width;
#if REDUCE == 1
        float a = {{identity}};
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int k = 0; k < 2; ++k) {
            const float b = frag[i][j][2 * h + k] + bias_of[j][k];
#if COUTP != COUT
            if (j * 8 + 2 * t + k >= COUT) continue;
#endif
            a = {{combine}};
          }
        // The four lanes of a position hold its channels 2t, 2t + 1 of every n-tile.
#pragma unroll
        for (int offset = 1; offset < 4; offset <<= 1) {
          const float b = __shfl_xor_sync(0xffffffffu, a, offset);
          a = {{combine}};
        }
        if (inside && t == 0) {
          const float acc = a;
          const index_t e = ((index_t)n * out_height + oh) * out_width + ow;
          out[e] = {{kernel_name}}_element(e, {{reduced}}, 0{{element_args}});
        }
#else
        if (inside) {
#pragma unroll
          for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int k = 0; k < 2; ++k) {
#if COUTP != COUT
              if (j * 8 + 2 * t + k >= COUT) continue;
#endif
              const index_t e = (((index_t)n * COUT + j * 8 + 2 * t + k) * out_height + oh) * out_width + ow;
              const float v = {{kernel_name}}_element(e, frag[i][j][2 * h + k] + bias_of[j][k], j * 8 + 2 * t + k{{element_args}});
#if REDUCE == 2
              total += v;
#else
              out[e] = v;
#endif
            }
        }
#endif
      }
#endif
#if REDUCE == 2
    // The tile's sum, in a fixed order (lanes, then warps): out[tile], summed per image by _images.
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_xor_sync(0xffffffffu, total, offset);
    if (lane == 0) tile_sums[warp] = total;
#endif
    __syncthreads();  // every warp is done with `input` before the next fetch overwrites it
#if REDUCE == 2
    if (tid == 0) {
      float sum = 0.0f;
      for (int w = 0; w < THREADS / 32; ++w) sum += tile_sums[w];
      out[tile] = sum;
    }
#endif
    current ^= 1;
  }
}

#if REDUCE == 2
// out[n] = scale * the sum of image n's tile sums, in a fixed order: one block of 256 threads per image.
extern "C" __global__ void __launch_bounds__(256)
{{kernel_name}}_images(const float* __restrict__ tile_sum, float* __restrict__ out, int images, int tiles_per_image,
                       float scale) {
  __shared__ float warp_sums[8];
  if ((int)blockIdx.x >= images) return;  // an empty batch still launches one block
  const float* sums = tile_sum + (long long)blockIdx.x * tiles_per_image;
  float total = 0.0f;
  for (int k = threadIdx.x; k < tiles_per_image; k += 256) total += sums[k];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_xor_sync(0xffffffffu, total, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = total;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int w = 0; w < 8; ++w) sum += warp_sums[w];
    out[blockIdx.x] = sum * scale;
  }
}
#endif
