#include "engine/propose/recipes/kernels/kernel_dtypes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hiera::engine::propose::recipes::kernels {

namespace {

const std::vector<KernelDtype>& dtypes() {
  static const std::vector<KernelDtype> table = {
      {"float32", "float", "torch.float32", 4, ""},
      {"float16", "__half", "torch.float16", 2, "<cuda_fp16.h>"},
      {"bfloat16", "__nv_bfloat16", "torch.bfloat16", 2, "<cuda_bf16.h>"},
      {"bool", "bool", "torch.bool", 1, ""},
  };
  return table;
}

}  // namespace

const KernelDtype* kernel_dtype(std::string_view dtype) {
  for (const auto& entry : dtypes())
    if (entry.dtype == dtype) return &entry;
  return nullptr;
}

bool is_float_dtype(std::string_view dtype) {
  return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

std::string includes_for(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& entry : dtypes()) {
    if (entry.header.empty()) continue;
    if (std::find(names.begin(), names.end(), entry.dtype) != names.end()) out += "#include " + entry.header + "\n";
  }
  // torch compiles kernels (its NVRTC and extensions alike) with the half and
  // bfloat16 conversions turned off; the kernels convert to and from float.
  if (!out.empty())
    out = "#undef __CUDA_NO_HALF_CONVERSIONS__\n#undef __CUDA_NO_HALF_OPERATORS__\n"
          "#undef __CUDA_NO_BFLOAT16_CONVERSIONS__\n#undef __CUDA_NO_BFLOAT16_OPERATORS__\n" + out;
  return out;
}

std::string float_literal(double value) {
  const float f = static_cast<float>(value);
  if (std::isnan(f)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(f)) return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  // Nine significant digits identify a float uniquely, so the literal parses back to f.
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(f));
  std::string text = buffer;
  // The shortest spelling that still round-trips reads better: 0.1f, not 0.100000001f.
  for (int digits = 1; digits < 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(f));
    if (std::strtof(buffer, nullptr) == f) {
      text = buffer;
      break;
    }
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

}  // namespace hiera::engine::propose::recipes::kernels
