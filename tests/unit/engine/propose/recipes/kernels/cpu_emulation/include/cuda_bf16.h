// The CPU emulation's cuda_bf16.h: __nv_bfloat16 as 16 bits with the CUDA
// conversions, rounding to nearest even as the device does.
#pragma once
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  std::uint16_t bits;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 0x7fc0;  // a NaN stays a NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<std::uint16_t>(u >> 16);
    }
  }
  operator float() const {
    const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

inline float __bfloat162float(__nv_bfloat16 h) { return static_cast<float>(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
