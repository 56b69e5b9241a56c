// The CPU emulation's cuda_fp16.h: __half as the host compiler's _Float16,
// whose conversions round to nearest even as the device's do.
#pragma once

struct __half {
  _Float16 value;
  __half() = default;
  __half(float f) : value(static_cast<_Float16>(f)) {}
  operator float() const { return static_cast<float>(value); }
};

inline float __half2float(__half h) { return static_cast<float>(h); }
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
