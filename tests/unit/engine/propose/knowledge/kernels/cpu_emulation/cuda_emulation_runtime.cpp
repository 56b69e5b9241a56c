// The grid, barriers and warp exchange behind cuda_emulation.h: compiled once
// into a shared library that the kernels' libraries resolve against.
#include <barrier>
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
}  // namespace

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
