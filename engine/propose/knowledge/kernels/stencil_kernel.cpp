#include "engine/propose/knowledge/kernels/stencil_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "engine/propose/knowledge/kernels/elementwise_expression.h"
#include "engine/propose/knowledge/kernels/kernel_dtypes.h"
#include "engine/propose/knowledge/kernels/kernel_template.h"

namespace hiera::engine::propose::knowledge_proposer::kernels {

namespace {

constexpr int kTargetWaves = 8;  // blocks for this many waves: the last one's idle SMs matter little
constexpr int kMinZChunk = 32;   // a chunk re-reads its first planes: keep that a few percent

}  // namespace

StencilGeometry stencil_geometry(int dims, const std::vector<StencilTap>& taps) {
  if (taps.empty()) throw std::invalid_argument("a stencil without taps");
  StencilGeometry g;
  g.dims = dims;
  g.tile_y = dims == 3 ? 16 : 8;
  g.lo_z = g.hi_z = taps[0].oz;
  g.lo_y = g.hi_y = taps[0].oy;
  g.lo_x = g.hi_x = taps[0].ox;
  for (const auto& t : taps) {
    g.lo_z = std::min(g.lo_z, t.oz), g.hi_z = std::max(g.hi_z, t.oz);
    g.lo_y = std::min(g.lo_y, t.oy), g.hi_y = std::max(g.hi_y, t.oy);
    g.lo_x = std::min(g.lo_x, t.ox), g.hi_x = std::max(g.hi_x, t.ox);
  }
  if (dims == 2) return g;
  // The register column: the in-plane offset the most taps use; ties go to the one nearest the box's centre.
  const int centre_y2 = g.lo_y + g.hi_y, centre_x2 = g.lo_x + g.hi_x;  // twice the centre
  int best_count = -1, best_distance = 0;
  for (const auto& t : taps) {
    const int count = static_cast<int>(std::count_if(taps.begin(), taps.end(), [&](const StencilTap& u) {
      return u.oy == t.oy && u.ox == t.ox;
    }));
    const int distance = std::abs(2 * t.oy - centre_y2) + std::abs(2 * t.ox - centre_x2);
    if (count > best_count || (count == best_count && distance < best_distance)) {
      best_count = count;
      best_distance = distance;
      g.column_y = t.oy;
      g.column_x = t.ox;
    }
  }
  bool any = false;
  for (const auto& t : taps) {
    if (t.oy == g.column_y && t.ox == g.column_x) continue;
    g.plane_lo = any ? std::min(g.plane_lo, t.oz) : t.oz;
    g.plane_hi = any ? std::max(g.plane_hi, t.oz) : t.oz;
    any = true;
  }
  if (!any) g.plane_lo = 0, g.plane_hi = -1;
  return g;
}

std::string tap_accessor(const StencilGeometry& g, const StencilTap& t) {
  if (g.dims == 2) return "IN(" + std::to_string(t.oy) + ", " + std::to_string(t.ox) + ")";
  if (t.oy == g.column_y && t.ox == g.column_x) return "COL(" + std::to_string(t.oz) + ")";
  return "PLANE(" + std::to_string(t.oz) + ", " + std::to_string(t.oy) + ", " + std::to_string(t.ox) + ")";
}

int stencil_z_chunk(std::int64_t out_z, std::int64_t blocks_per_plane_set, int sm_count, int threads_per_block) {
  if (out_z <= kMinZChunk) return static_cast<int>(std::max<std::int64_t>(out_z, 1));
  const std::int64_t resident = static_cast<std::int64_t>(std::max(sm_count, 1)) * std::max(1, 2048 / threads_per_block);
  const std::int64_t wanted = kTargetWaves * resident;
  std::int64_t chunks = (wanted + std::max<std::int64_t>(blocks_per_plane_set, 1) - 1) / std::max<std::int64_t>(blocks_per_plane_set, 1);
  chunks = std::clamp<std::int64_t>(chunks, 1, std::max<std::int64_t>(1, out_z / kMinZChunk));
  return static_cast<int>((out_z + chunks - 1) / chunks);
}

KernelSource stencil_source(const knowledge::KnowledgeBase& knowledge, const StencilKernel& kernel) {
  const StencilGeometry& g = kernel.geometry;
  std::vector<std::string> dtypes = {kernel.in_dtype, kernel.out_dtype};
  dtypes.insert(dtypes.end(), kernel.extra_dtypes.begin(), kernel.extra_dtypes.end());
  std::map<std::string, std::string, std::less<>> values = {
      {"kernel_name", kernel.name},
      {"includes", includes_for(dtypes)},
      {"functions", device_helpers(kernel.helpers)},
      {"in_t", kernel_dtype(kernel.in_dtype)->cuda_type},
      {"out_t", kernel_dtype(kernel.out_dtype)->cuda_type},
      {"tile_x", std::to_string(g.tile_x)},
      {"tile_y", std::to_string(g.tile_y)},
      {"lo_z", std::to_string(g.lo_z)},
      {"hi_z", std::to_string(g.hi_z)},
      {"lo_y", std::to_string(g.lo_y)},
      {"hi_y", std::to_string(g.hi_y)},
      {"lo_x", std::to_string(g.lo_x)},
      {"hi_x", std::to_string(g.hi_x)},
      {"column_y", std::to_string(g.column_y)},
      {"column_x", std::to_string(g.column_x)},
      {"plane_lo", std::to_string(g.plane_lo)},
      {"plane_hi", std::to_string(g.plane_hi)},
      {"extra_params", kernel.extra_params},
      {"setup", kernel.setup},
      {"update_body", join_lines(kernel.update_body, 6)},
      {"update_result", kernel.update_result},
  };
  const bool direct = kernel.variant == StencilVariant::Direct;
  const std::string name = g.dims == 3 ? (direct ? "stencil3d_direct.cu" : "stencil3d_7pt.cu")
                                       : (direct ? "stencil2d_direct.cu" : "stencil2d_tiled.cu");
  return {kernel.name, fill_kernel_template(knowledge, name, values), {}};
}

std::string stencil_launch(const StencilKernel& kernel, const std::string& input, const std::string& output,
                           const std::string& out_shape, const std::string& extra_args, int z_chunk) {
  const StencilGeometry& g = kernel.geometry;
  const std::string tx = std::to_string(g.tile_x), ty = std::to_string(g.tile_y);
  const std::string grid_xy = "(" + out_shape + "[-1] + " + std::to_string(g.tile_x - 1) + ") // " + tx + ", (" +
                              out_shape + "[-2] + " + std::to_string(g.tile_y - 1) + ") // " + ty;
  const std::string call = "_kernel(\"" + kernel.name + "\")(";
  if (g.dims == 3) {
    const std::string zc = std::to_string(z_chunk);
    return call + "(" + grid_xy + ", " + out_shape + "[:-3].numel() * ((" + out_shape + "[-3] + " +
           std::to_string(z_chunk - 1) + ") // " + zc + ")), (" + tx + ", " + ty + "), " + input + ", " + output +
           extra_args + ", " + input + ".shape[-1], " + input + ".shape[-2], " + input + ".shape[-3], " + out_shape +
           "[-1], " + out_shape + "[-2], " + out_shape + "[-3], " + zc + ")";
  }
  return call + "(" + grid_xy + ", max(1, min(" + out_shape + "[:-2].numel(), 65535))), (" + tx + ", " + ty + "), " +
         input + ", " + output + extra_args + ", " + input + ".shape[-1], " + input + ".shape[-2], " + out_shape +
         "[-1], " + out_shape + "[-2], nvrtc_runtime.int64(" + out_shape + "[:-2].numel()))";
}

}  // namespace hiera::engine::propose::knowledge_proposer::kernels
