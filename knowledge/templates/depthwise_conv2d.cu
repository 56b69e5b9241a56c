// hiera template: a 2D depthwise convolution (one input and one output channel
// per group) whose coefficients are per channel and read on the device
// (learned weights), with register blocking: each thread computes OUT_Y rows
// of 4 outputs from a shared-memory copy of its block's input tile and halo,
// so every input row a thread reads serves up to K_Y of its output rows and
// every float up to K_X of its outputs; the channel's K_Y x K_X coefficients
// sit in registers. cuDNN runs one channel per group as a poor GEMM (a ConvNeXt
// 7x7 on 192 channels, float32 NCHW, took 638 us of the H100 where the tensors
// move in about 55 us); torch.compile calls the same cuDNN.
// Output (y, x) of plane p reads input (y * STRIDE_Y + ky - PAD_Y, x * STRIDE_X + kx - PAD_X)
// times weight[p % channels][ky][kx], plus bias[p % channels]; points outside
// the input read as 0, or as the point the boundary mode maps them to.
// Domain: in [planes, ny, nx], out [planes, oy_n, ox_n], contiguous; weight
// [channels, 1, K_Y, K_X] contiguous; bias [channels] or null.
// Launch: block (THREADS_X, THREADS_Y), grid (ceil(ox_n / (4 * THREADS_X)),
// ceil(oy_n / (OUT_Y * THREADS_Y)), min(planes, 65535)).
//
// Placeholders:
// kernel_name        extern "C" name
// includes           headers the element types need, or nothing
// in_t, out_t        element types of the input and the output
// w_t, b_t           element types of the weight and the bias
// k_y, k_x           kernel size
// pad_y, pad_x       padding before the first row / column
// stride_y, stride_x strides
// threads_x, threads_y  block shape
// out_y              output rows per thread (4 outputs in x each)
// boundary           0 zeros, 1 replicate, 2 reflect, 3 circular
// edge_function      the device function hiera_edge(g, n) of that mode (stencil_kernel.cpp)
// index_t            int, or long long for outputs of 2^31 elements or more
// functions          device helpers the epilogue calls, or nothing
// element_params     the epilogue's parameters after (i, v, c), each starting with ", ", or nothing
// body               statements computing the epilogue of output i (channel c) from the conv's value v, or nothing
// result             the stored value as a float expression over v and the body's names ("v" without an epilogue)
// params             the epilogue's kernel parameters (pointers, broadcast sizes), each followed by a comma, or nothing
// element_args       the kernel's arguments for element_params at output e0 + i, each starting with ", ", or nothing
{{includes}}
typedef {{in_t}} in_t;
typedef {{out_t}} out_t;
typedef {{w_t}} w_t;
typedef {{b_t}} b_t;
#define K_Y {{k_y}}
#define K_X {{k_x}}
#define PAD_Y {{pad_y}}
#define PAD_X {{pad_x}}
#define STRIDE_Y {{stride_y}}
#define STRIDE_X {{stride_x}}
#define THREADS_X {{threads_x}}
#define THREADS_Y {{threads_y}}
#define OUT_Y {{out_y}}
#define OUT_X 4
#define BOUNDARY ({{boundary}})
// hiera_edge(g, n): a coordinate outside [0, n) as the boundary mode reads it.
{{edge_function}}

#define TILE_OW (THREADS_X * OUT_X)
#define TILE_OH (THREADS_Y * OUT_Y)
#define IN_H ((TILE_OH - 1) * STRIDE_Y + K_Y)
#define IN_W ((TILE_OW - 1) * STRIDE_X + K_X)
#define ROWS ((OUT_Y - 1) * STRIDE_Y + K_Y)     // input rows one thread reads
#define ROW_W ((OUT_X - 1) * STRIDE_X + K_X)    // floats of a row one thread reads
#define ROW_V ((ROW_W + 3) / 4)                 // those as float4s (stride 1)
// A row's pitch: the tile's width, or the last thread's float4s past it, a multiple of 4 (16-byte rows).
#define PITCH_MIN ((THREADS_X - 1) * OUT_X + 4 * ROW_V > IN_W ? (THREADS_X - 1) * OUT_X + 4 * ROW_V : IN_W)
#define PITCH ((PITCH_MIN + 3) / 4 * 4)
typedef {{index_t}} index_t;
{{functions}}

template <typename T>
struct hiera_is_float { static const bool value = false; };
template <>
struct hiera_is_float<float> { static const bool value = true; };

// The elementwise ops after the conv (a batch norm, an activation), on output i of channel c.
__device__ __forceinline__ float {{kernel_name}}_element(const index_t i, const float v, const int c{{element_params}}) {
  {{body}}
  return {{result}};
}

extern "C" __global__ void __launch_bounds__(THREADS_X * THREADS_Y)
{{kernel_name}}(const in_t* __restrict__ in, out_t* __restrict__ out, const w_t* __restrict__ weight,
                const b_t* __restrict__ bias, {{params}}int channels, int nx, int ny, int ox_n, int oy_n, long long planes) {
  __shared__ __align__(16) float tile[IN_H * PITCH];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * THREADS_X + tx;
  const int ox0 = blockIdx.x * TILE_OW, oy0 = blockIdx.y * TILE_OH;
  const int gx0 = ox0 * STRIDE_X - PAD_X, gy0 = oy0 * STRIDE_Y - PAD_Y;  // the tile's first input point
  const int lx = tx * OUT_X * STRIDE_X, ly = ty * OUT_Y * STRIDE_Y;     // this thread's, in the tile
  for (long long p = blockIdx.z; p < planes; p += gridDim.z) {
    const in_t* plane = in + p * (long long)ny * nx;
    const int channel = (int)(p % channels);
    float wgt[K_Y * K_X];
#pragma unroll
    for (int k = 0; k < K_Y * K_X; ++k) wgt[k] = static_cast<float>(weight[(long long)channel * (K_Y * K_X) + k]);
    const float bias_value = bias != nullptr ? static_cast<float>(bias[channel]) : 0.0f;
    __syncthreads();  // the previous plane's tile is no longer read
    // The tile and its halo, coalesced along rows; the columns past IN_W (pitch padding) hold zeros.
    for (int idx = tid; idx < IN_H * PITCH; idx += THREADS_X * THREADS_Y) {
      const int j = idx / PITCH, i = idx % PITCH;
      const int gy = gy0 + j, gx = gx0 + i;
      float v = 0.0f;
#if BOUNDARY == 0
      if (i < IN_W && gx >= 0 && gx < nx && gy >= 0 && gy < ny) v = static_cast<float>(plane[(long long)gy * nx + gx]);
#else
      // A mode maps [-PAD, n + PAD) into the plane; a partial tile's rows and columns past that feed no output.
      if (i < IN_W && gy < ny + PAD_Y && gx < nx + PAD_X)
        v = static_cast<float>(plane[(long long)hiera_edge(gy, ny) * nx + hiera_edge(gx, nx)]);
#endif
      tile[idx] = v;
    }
    __syncthreads();
    float acc[OUT_Y][OUT_X];
#pragma unroll
    for (int j = 0; j < OUT_Y; ++j)
#pragma unroll
      for (int i = 0; i < OUT_X; ++i) acc[j][i] = 0.0f;
    // Input row r of this thread serves its output rows j with ky = r - j * STRIDE_Y in [0, K_Y).
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const float* src = tile + (ly + r) * PITCH + lx;
      float row[4 * ROW_V > ROW_W ? 4 * ROW_V : ROW_W];
#if STRIDE_X == 1
#pragma unroll
      for (int v = 0; v < ROW_V; ++v) {
        const float4 q = reinterpret_cast<const float4*>(src)[v];
        row[4 * v] = q.x, row[4 * v + 1] = q.y, row[4 * v + 2] = q.z, row[4 * v + 3] = q.w;
      }
#else
#pragma unroll
      for (int c = 0; c < ROW_W; ++c) row[c] = src[c];
#endif
#pragma unroll
      for (int j = 0; j < OUT_Y; ++j) {
        const int ky = r - j * STRIDE_Y;
        if (ky < 0 || ky >= K_Y) continue;  // a constant once unrolled
#pragma unroll
        for (int kx = 0; kx < K_X; ++kx)
#pragma unroll
          for (int i = 0; i < OUT_X; ++i) acc[j][i] += wgt[ky * K_X + kx] * row[i * STRIDE_X + kx];
      }
    }
    const int x = ox0 + tx * OUT_X;
    // float32 rows a multiple of 4 long: a thread's 4 outputs are one aligned 16-byte store.
    const bool packed = hiera_is_float<out_t>::value && (ox_n & 3) == 0;
#pragma unroll
    for (int j = 0; j < OUT_Y; ++j) {
      const int y = oy0 + ty * OUT_Y + j;
      if (y >= oy_n) break;
      const index_t e0 = ((index_t)p * oy_n + y) * ox_n + x;
      float value[OUT_X];
#pragma unroll
      for (int i = 0; i < OUT_X; ++i)  // past the row's end nothing is read (a full-size operand ends there)
        value[i] = x + i < ox_n ? {{kernel_name}}_element(e0 + i, acc[j][i] + bias_value, channel{{element_args}}) : 0.0f;
      if (packed && x + 3 < ox_n) {
        *reinterpret_cast<float4*>(out + e0) = make_float4(value[0], value[1], value[2], value[3]);
      } else {
#pragma unroll
        for (int i = 0; i < OUT_X; ++i)
          if (x + i < ox_n) out[e0 + i] = static_cast<out_t>(value[i]);
      }
    }
  }
}
