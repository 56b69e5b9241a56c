#include "engine/common/dtype_bytes.h"

namespace hiera::engine {

int dtype_bytes(std::string_view dtype) {
  if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
  if (dtype == "float64" || dtype == "int64" || dtype == "complex64") return 8;
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool" || dtype == "float8_e4m3fn" || dtype == "float8_e5m2") return 1;
  return 4;
}

}  // namespace hiera::engine
