// The grid, barriers and warp exchange behind cuda_emulation.h: compiled once
// into a shared library that the kernels' libraries resolve against.
#include <barrier>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

namespace {
std::unique_ptr<std::barrier<>> block_barrier;
std::unique_ptr<std::barrier<>> warp_barriers[32];
float exchange[32][32];
unsigned fragments[32][32][6];  // per warp and lane: a0..a3, b0, b1 of an mma

unsigned warp_and_lane(unsigned& lane) {
  const unsigned thread = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  lane = thread % 32;
  return thread / 32;
}

float as_float(unsigned bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
}  // namespace

// D = A (16 x 8, row) * B (8 x 8, col) + C with PTX's fragment layout: lane = 4 g + t holds
// A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]; B[t][g], B[t + 4][g]; C[g][2t], C[g][2t + 1],
// C[g + 8][2t], C[g + 8][2t + 1].
extern "C" void hiera_mma_tf32(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  unsigned lane = 0;
  const unsigned warp = warp_and_lane(lane);
  unsigned* mine = fragments[warp][lane];
  for (int k = 0; k < 4; ++k) mine[k] = a[k];
  mine[4] = b0;
  mine[5] = b1;
  warp_barriers[warp]->arrive_and_wait();
  const unsigned g = lane / 4, t = lane % 4;
  float d[4];
  for (unsigned q = 0; q < 4; ++q) {
    const unsigned row = g + 8 * (q / 2), col = 2 * t + q % 2;
    float sum = c[q];
    for (unsigned k = 0; k < 8; ++k) {
      const float x = as_float(fragments[warp][(row % 8) * 4 + k % 4][(row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)]);
      const float y = as_float(fragments[warp][col * 4 + k % 4][4 + (k >= 4 ? 1 : 0)]);
      sum += x * y;
    }
    d[q] = sum;
  }
  warp_barriers[warp]->arrive_and_wait();
  for (unsigned q = 0; q < 4; ++q) c[q] = d[q];
}

extern "C" void __syncthreads() { block_barrier->arrive_and_wait(); }

extern "C" float __shfl_xor_sync(unsigned, float value, int offset) {
  const unsigned thread = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned warp = thread / 32, lane = thread % 32;
  exchange[warp][lane] = value;
  warp_barriers[warp]->arrive_and_wait();
  const float result = exchange[warp][lane ^ static_cast<unsigned>(offset)];
  warp_barriers[warp]->arrive_and_wait();
  return result;
}

extern "C" float __shfl_sync(unsigned, float value, int source_lane) {
  const unsigned thread = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned warp = thread / 32, lane = thread % 32;
  exchange[warp][lane] = value;
  warp_barriers[warp]->arrive_and_wait();
  const float result = exchange[warp][static_cast<unsigned>(source_lane) % 32];
  warp_barriers[warp]->arrive_and_wait();
  return result;
}

// One std::thread per thread of a block, reused for every block: the blocks
// run one after another (a grid barrier between them), as __shared__ needs.
extern "C" void hiera_emulate_grid(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                   void (*body)(void*), void* context) {
  const dim3 grid{gx, gy, gz}, block{bx, by, bz};
  const unsigned threads = bx * by * bz;
  block_barrier = std::make_unique<std::barrier<>>(threads);
  for (unsigned w = 0; w < (threads + 31) / 32; ++w) warp_barriers[w] = std::make_unique<std::barrier<>>(32);
  std::barrier<> next_block(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned tz = 0; tz < bz; ++tz)
    for (unsigned ty = 0; ty < by; ++ty)
      for (unsigned tx = 0; tx < bx; ++tx)
        pool.emplace_back([=, &next_block] {
          threadIdx = {tx, ty, tz};
          blockDim = block;
          gridDim = grid;
          for (unsigned z = 0; z < gz; ++z)
            for (unsigned y = 0; y < gy; ++y)
              for (unsigned x = 0; x < gx; ++x) {
                blockIdx = {x, y, z};
                body(context);
                next_block.arrive_and_wait();
              }
        });
  for (auto& t : pool) t.join();
}
