#include "engine/propose/recipes/kernels/stencil_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

constexpr int kTargetWaves = 8;  // blocks for this many waves: the last one's idle SMs matter little
constexpr int kMinZChunk = 32;   // a chunk re-reads its first planes: keep that a few percent
constexpr int kVec4ZChunk = 8;
constexpr int kVec4Threads = 128;      // at most, a vec4 block's row: 512 outputs
constexpr int kVec4BlockThreads = 512;  // a 3D block: its rows make up this many threads
constexpr int kVec4RowChunk = 16;  // a 2D row march's rows a block: its halo rows (from L2) a few percent

// A block's threads in x: whole warps, no wider than the output row's float4s (a 128-thread row over a
// 256-float grid left half of each block idle, holding registers).
int vec4_threads_x(const StencilKernel& kernel) {
  const std::int64_t float4s = (kernel.out_size[2] + 3) / 4;
  return static_cast<int>(std::clamp<std::int64_t>((float4s + 31) / 32 * 32, 32, kVec4Threads));
}
// A block's rows: one where the grid is one row high (a 2D row march, stencil_vec4_row_march), else as
// many as make a 512-thread block.
int vec4_tile_y(const StencilKernel& kernel) {
  return kernel.in_size[1] == 1 ? 1 : kVec4BlockThreads / vec4_threads_x(kernel);
}

int floor4(int v) { return v >= 0 ? v / 4 : -((3 - v) / 4); }

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
  for (const auto& t : taps) {
    auto row = std::find_if(g.rows.begin(), g.rows.end(), [&](const StencilRow& r) { return r.oz == t.oz && r.oy == t.oy; });
    if (row == g.rows.end()) {
      g.rows.push_back({t.oz, t.oy, t.ox, t.ox});
    } else {
      row->lo_x = std::min(row->lo_x, t.ox), row->hi_x = std::max(row->hi_x, t.ox);
    }
  }
  std::sort(g.rows.begin(), g.rows.end(),
            [](const StencilRow& a, const StencilRow& b) { return a.oz != b.oz ? a.oz < b.oz : a.oy < b.oy; });
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

std::string vec4_tap_accessor(const StencilGeometry& g, const StencilTap& t) {
  for (std::size_t r = 0; r < g.rows.size(); ++r)
    if (g.rows[r].oz == t.oz && g.rows[r].oy == t.oy) return "TAP(" + std::to_string(r) + ", " + std::to_string(t.ox) + ")";
  throw std::invalid_argument("a tap outside the stencil's rows");
}

std::string stencil_point_accessor(int dims, StencilVariant variant, const std::string& pointer) {
  if (variant == StencilVariant::DirectVec4) throw std::invalid_argument("the vec4 stencil kernel reads no point operands");
  // The templates' names for the stored element: batch, (z,) yo, xo. stencil3d_direct.cu's
  // step computes planes z0 + u, the ones past its chunk recomputing the last (kept in bounds).
  const std::string index = dims == 2 ? "(batch * oy_n + yo) * (long long)ox_n + xo"
                            : variant == StencilVariant::Direct
                                ? "((batch * oz_n + min(z0 + u, z_end - 1)) * (long long)oy_n + yo) * ox_n + xo"
                                : "((batch * oz_n + z) * (long long)oy_n + yo) * ox_n + xo";
  return "static_cast<float>(" + pointer + "[" + index + "])";
}

bool stencil_vec4_applies(int dims, const std::string& in_dtype, const std::string& out_dtype, std::int64_t nx) {
  return dims == 3 && in_dtype == "float32" && out_dtype == "float32" && nx > 0 && nx % 4 == 0;
}

std::vector<StencilChain> stencil_chains(const StencilGeometry& g) {
  std::vector<StencilChain> chains;
  // g.rows is ordered by (oz, oy): a row continues the chain of its oy whose last row sits one plane below.
  for (std::size_t r = 0; r < g.rows.size(); ++r) {
    const StencilRow& row = g.rows[r];
    auto chain = std::find_if(chains.begin(), chains.end(), [&](const StencilChain& c) {
      return g.rows[c.rows.back()].oy == row.oy && g.rows[c.rows.back()].oz == row.oz - 1;
    });
    if (chain == chains.end()) {
      chains.push_back({{r}, row.lo_x, row.hi_x});
    } else {
      chain->rows.push_back(r);
      chain->lo_x = std::min(chain->lo_x, row.lo_x), chain->hi_x = std::max(chain->hi_x, row.hi_x);
    }
  }
  return chains;
}

int stencil_vec4_z_chunk(std::int64_t out_z) {
  return static_cast<int>(std::clamp<std::int64_t>(out_z, 1, kVec4ZChunk));
}

int stencil_z_chunk(std::int64_t out_z, std::int64_t blocks_per_plane_set, int sm_count, int threads_per_block) {
  if (out_z <= kMinZChunk) return static_cast<int>(std::max<std::int64_t>(out_z, 1));
  const std::int64_t resident = static_cast<std::int64_t>(std::max(sm_count, 1)) * std::max(1, 2048 / threads_per_block);
  const std::int64_t wanted = kTargetWaves * resident;
  std::int64_t chunks = (wanted + std::max<std::int64_t>(blocks_per_plane_set, 1) - 1) / std::max<std::int64_t>(blocks_per_plane_set, 1);
  chunks = std::clamp<std::int64_t>(chunks, 1, std::max<std::int64_t>(1, out_z / kMinZChunk));
  return static_cast<int>((out_z + chunks - 1) / chunks);
}

namespace {

// How a vec4 kernel walks its planes: the rows it keeps or the sums it adds up, as the template's placeholders.
struct Vec4March {
  int j_lo = 0, j_hi = 0;
  std::string setup, loads, shifts;
  std::vector<std::string> body;  // statements before the update's own (the sums' values for output i)
};

// What the vec4 kernel's loads need to know about bounds and borders.
struct Vec4Borders {
  bool remapped = false;         // a boundary mode maps a row outside the plane to one inside, once per thread
  bool planes_remapped = false;  // and, in 3D, each load its plane
  bool inside = false;           // every tap of every output inside the input: no bounds checks
};

Vec4Borders vec4_borders(const StencilKernel& kernel) {
  const StencilGeometry& g = kernel.geometry;
  const auto& in = kernel.in_size;
  const auto& out = kernel.out_size;
  Vec4Borders b;
  b.remapped = kernel.boundary != StencilBoundary::Zeros;
  b.planes_remapped = b.remapped && (g.lo_z != 0 || g.hi_z != 0);
  b.inside = b.remapped || (g.lo_z >= 0 && out[0] - 1 + g.hi_z < in[0] && g.lo_y >= 0 && out[1] - 1 + g.hi_y < in[1]);
  return b;
}

// Row `id`'s offset from the thread's point at y offset `oy` (and, without plane remapping, z offset `oz`),
// and its y check where some output's taps leave the input.
std::string vec4_row_setup(const Vec4Borders& b, const std::string& id, int oz, int oy) {
  const std::string z = std::to_string(oz), y = std::to_string(oy);
  const std::string row_y = b.remapped ? "(long long)(hiera_edge(yl + (" + y + "), ny) - yl)" : "(long long)(" + y + ")";
  std::string setup = b.planes_remapped
                          ? "  const long long row" + id + "_at = (long long)hiera_edge(yl + (" + y + "), ny) * nx + x4;\n"
                          : "  const long long off" + id + " = (long long)(" + z + ") * plane + " + row_y + " * nx;\n";
  if (!b.inside) setup += "  const bool y" + id + " = yl + (" + y + ") >= 0 && yl + (" + y + ") < ny;\n";
  return setup;
}

// Row `id` of plane `z` + `oz` into row<id>[J_N] (x offsets lo..hi read), from the pointer `at` of plane `z`.
std::string vec4_row_load(const Vec4Borders& b, const std::string& id, int oz, int lo, int hi, const std::string& z,
                          const std::string& at, const std::string& guard, const std::string& indent) {
  const std::string dz = std::to_string(oz);
  const std::string pointer = b.planes_remapped
                                  ? "volume + (long long)hiera_edge(" + z + " + (" + dz + "), nz) * plane + row" + id + "_at"
                                  : at + " + off" + id;
  const std::string ok = b.inside ? std::string("true") : "y" + id + " && (unsigned)(" + z + " + (" + dz + ")) < (unsigned)nz";
  return indent + "float4 row" + id + "[J_N]" + (guard.empty() ? ";" : " = {};") + "\n" + indent +
         (guard.empty() ? "" : "if (" + guard + ") ") + "hiera_load_row<" + std::to_string(lo) + ", " + std::to_string(hi) +
         ">(row" + id + ", " + pointer + ", " + ok + ", x4, nx, lane);\n";
}

// Chains (stencil_chains): a step loads each chain's top row and shifts its other rows down a plane.
Vec4March chain_march(const StencilKernel& kernel, const Vec4Borders& b) {
  const StencilGeometry& g = kernel.geometry;
  Vec4March m;
  for (std::size_t r = 0; r < g.rows.size(); ++r) m.setup += vec4_row_setup(b, std::to_string(r), g.rows[r].oz, g.rows[r].oy);
  for (const StencilChain& chain : stencil_chains(g)) {
    m.j_lo = std::min(m.j_lo, floor4(chain.lo_x));
    m.j_hi = std::max(m.j_hi, floor4(chain.hi_x + 3));
    // The chain is read when any of its rows is (a row guard is uniform across the block).
    std::string guard;
    for (const std::size_t r : chain.rows) {
      const std::string row_guard = r < kernel.row_guards.size() ? kernel.row_guards[r] : "";
      if (row_guard.empty()) {
        guard.clear();
        break;
      }
      guard += (guard.empty() ? "" : " || ") + row_guard;
    }
    auto load = [&](std::size_t r, const std::string& z, const std::string& indent) {
      return vec4_row_load(b, std::to_string(r), g.rows[r].oz, chain.lo_x, chain.hi_x, z, "at", guard, indent);
    };
    for (std::size_t k = 0; k + 1 < chain.rows.size(); ++k) m.setup += load(chain.rows[k], "z_begin", "  ");
    m.loads += load(chain.rows.back(), "z", "    ");
    for (std::size_t k = 0; k + 1 < chain.rows.size(); ++k)
      m.shifts += (m.shifts.empty() ? "" : ", ") + ("row" + std::to_string(chain.rows[k]) + "[j] = row" + std::to_string(chain.rows[k + 1]) + "[j]");
  }
  if (!m.shifts.empty()) m.shifts = "#pragma unroll\n    for (int j = 0; j < J_N; ++j) " + m.shifts + ";";
  return m;
}

// Plane sums (StencilKernel::sums): the step for output plane z loads the rows of plane z + hi_z (one per
// y offset), adds each term to the slot of the output it serves (slot s: output z + s), then output z's
// slot 0 is complete and the slots move down one. A prologue adds the planes below the chunk's first output.
Vec4March plane_sum_march(const StencilKernel& kernel, const Vec4Borders& b) {
  const StencilGeometry& g = kernel.geometry;
  Vec4March m;
  std::vector<StencilRow> rows;  // one a y offset: oz 0 (offsets from the loaded plane), the x range of every term
  for (const StencilSum& sum : kernel.sums)
    for (const auto& term : sum.terms) {
      auto row = std::find_if(rows.begin(), rows.end(), [&](const StencilRow& r) { return r.oy == term.tap.oy; });
      if (row == rows.end()) {
        rows.push_back({0, term.tap.oy, term.tap.ox, term.tap.ox});
      } else {
        row->lo_x = std::min(row->lo_x, term.tap.ox), row->hi_x = std::max(row->hi_x, term.tap.ox);
      }
    }
  std::sort(rows.begin(), rows.end(), [](const StencilRow& a, const StencilRow& c) { return a.oy < c.oy; });
  // Slots of each sum: 0 .. hi_z minus its lowest plane's offset.
  std::vector<int> top;
  for (const StencilSum& sum : kernel.sums) {
    int lowest = g.hi_z;
    for (const auto& term : sum.terms) lowest = std::min(lowest, term.tap.oz);
    top.push_back(g.hi_z - lowest);
  }
  auto slot = [&](std::size_t k, int s) { return kernel.sums[k].name + "_s" + std::to_string(s); };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    m.j_lo = std::min(m.j_lo, floor4(rows[r].lo_x));
    m.j_hi = std::max(m.j_hi, floor4(rows[r].hi_x + 3));
    m.setup += vec4_row_setup(b, std::to_string(r), g.hi_z, rows[r].oy);
  }
  for (std::size_t k = 0; k < kernel.sums.size(); ++k)
    for (int s = 0; s <= top[k]; ++s) m.setup += "  float " + slot(k, s) + "[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n";
  // Plane z + hi_z's rows, each added to the slots and let go before the next is loaded.
  auto plane = [&](const std::string& z, const std::string& at, const std::string& indent) {
    std::string code;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::string id = std::to_string(r);
      code += indent + "{\n" + vec4_row_load(b, id, g.hi_z, rows[r].lo_x, rows[r].hi_x, z, at, "", indent + "  ") +
              indent + "#pragma unroll\n" + indent + "  for (int i = 0; i < 4; ++i) {\n";
      for (std::size_t k = 0; k < kernel.sums.size(); ++k)
        for (const auto& term : kernel.sums[k].terms) {
          if (term.tap.oy != rows[r].oy) continue;
          const std::string tap = "TAP(" + id + ", " + std::to_string(term.tap.ox) + ")";
          code += indent + "    " + slot(k, g.hi_z - term.tap.oz) + "[i] += " +
                  (term.coefficient.empty() ? tap : term.coefficient + " * " + tap) + ";\n";
        }
      code += indent + "  }\n" + indent + "}\n";
    }
    return code;
  };
  auto shifts = [&](const std::string& indent) {
    std::string code = indent + "#pragma unroll\n" + indent + "for (int i = 0; i < 4; ++i) {\n";
    for (std::size_t k = 0; k < kernel.sums.size(); ++k) {
      for (int s = 0; s < top[k]; ++s) code += indent + "  " + slot(k, s) + "[i] = " + slot(k, s + 1) + "[i];\n";
      code += indent + "  " + slot(k, top[k]) + "[i] = 0.0f;\n";
    }
    return code + indent + "}\n";
  };
  const int below = g.hi_z - g.lo_z;  // planes before the first output's last
  if (below > 0)
    m.setup += "  for (int zp = z_begin - " + std::to_string(below) + "; zp < z_begin; ++zp) {\n" +
               plane("zp", "(at + (long long)(zp - z_begin) * plane)", "    ") + shifts("    ") + "  }\n";
  m.loads = plane("z", "at", "    ");
  m.shifts = shifts("    ");
  m.shifts.pop_back();  // the template's line ends it
  for (std::size_t k = 0; k < kernel.sums.size(); ++k)
    m.body.push_back("const float " + kernel.sums[k].name + " = " + slot(k, 0) + "[i];");
  return m;
}

// stencil3d_vec4.cu's values on top of the shared ones: the march and the compiled-in sizes.
KernelSource vec4_source(const knowledge::KnowledgeBase& knowledge, const StencilKernel& kernel,
                                std::map<std::string, std::string, std::less<>> values) {
  const StencilGeometry& g = kernel.geometry;
  if (!stencil_vec4_applies(g.dims, kernel.in_dtype, kernel.out_dtype, kernel.in_size[2]))
    throw std::invalid_argument("stencil3d_vec4.cu is for float32 3D stencils over rows a multiple of 4 wide");
  const Vec4Borders borders = vec4_borders(kernel);
  Vec4March march = kernel.sums.empty() ? chain_march(kernel, borders) : plane_sum_march(kernel, borders);
  // The template's lines end the setup and the loads.
  if (!march.setup.empty()) march.setup.pop_back();
  if (!march.loads.empty()) march.loads.pop_back();
  values.erase("in_t");
  values.erase("out_t");
  for (const char* unused : {"tile_x", "lo_z", "hi_z", "lo_y", "hi_y", "lo_x", "hi_x", "column_y", "column_x", "plane_lo", "plane_hi"})
    values.erase(unused);
  if (!march.body.empty()) {
    std::vector<std::string> body = march.body;
    body.insert(body.end(), kernel.update_body.begin(), kernel.update_body.end());
    values["update_body"] = join_lines(body, 6);
  }
  values["threads_x"] = std::to_string(vec4_threads_x(kernel));
  values["tile_y"] = std::to_string(vec4_tile_y(kernel));
  values["j_lo"] = std::to_string(march.j_lo);
  values["j_n"] = std::to_string(march.j_hi - march.j_lo + 1);
  values["fixed_sizes"] = "nz = " + std::to_string(kernel.in_size[0]) + ", ny = " + std::to_string(kernel.in_size[1]) +
                          ", nx = " + std::to_string(kernel.in_size[2]) + ", oz_n = " + std::to_string(kernel.out_size[0]) +
                          ", oy_n = " + std::to_string(kernel.out_size[1]) + ", ox_n = " + std::to_string(kernel.out_size[2]) +
                          ";  // compiled in: the launch checks them";
  values["row_setup"] = march.setup;
  values["row_loads"] = march.loads;
  values["row_shifts"] = march.shifts;
  return {kernel.name, fill_kernel_template(knowledge, "stencil3d_vec4.cu", values), {}};
}

}  // namespace

std::optional<StencilBoundary> stencil_boundary_of_mode(std::string_view mode) {
  if (mode == "zeros" || mode == "constant") return StencilBoundary::Zeros;
  if (mode == "replicate") return StencilBoundary::Replicate;
  if (mode == "reflect") return StencilBoundary::Reflect;
  if (mode == "circular") return StencilBoundary::Circular;
  return std::nullopt;
}

std::string stencil_edge_function(StencilBoundary boundary) {
  const char* rule = "g";  // zeros never remap: its loads read 0 outside
  switch (boundary) {
    case StencilBoundary::Replicate: rule = "g < 0 ? 0 : (g >= n ? n - 1 : g)"; break;  // the nearest edge
    case StencilBoundary::Reflect: rule = "g < 0 ? -g : (g >= n ? 2 * n - 2 - g : g)"; break;  // mirrored, edge not repeated
    case StencilBoundary::Circular: rule = "g < 0 ? g + n : (g >= n ? g - n : g)"; break;  // wrapped
    case StencilBoundary::Zeros: break;
  }
  return std::string("__device__ __forceinline__ int hiera_edge(int g, int n) { return ") + rule + "; }";
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
      {"boundary", std::to_string(static_cast<int>(kernel.boundary))},
      {"edge_function", stencil_edge_function(kernel.boundary)},
  };
  if (kernel.variant == StencilVariant::DirectVec4) return vec4_source(knowledge, kernel, std::move(values));
  const bool direct = kernel.variant == StencilVariant::Direct;
  if (!direct && kernel.boundary != StencilBoundary::Zeros)
    throw std::invalid_argument("stencil_source: only the direct kernels have boundary modes");
  const std::string name = g.dims == 3 ? (direct ? "stencil3d_direct.cu" : "stencil3d_7pt.cu")
                                       : (direct ? "stencil2d_direct.cu" : "stencil2d_tiled.cu");
  return {kernel.name, fill_kernel_template(knowledge, name, values), {}};
}

std::string stencil_launch(const StencilKernel& kernel, const std::string& input, const std::string& output,
                           const std::string& out_shape, const std::string& extra_args, int z_chunk) {
  const StencilGeometry& g = kernel.geometry;
  if (kernel.variant == StencilVariant::DirectVec4) {
    const int threads_x = vec4_threads_x(kernel), tile_y = vec4_tile_y(kernel);
    const std::string zc = std::to_string(z_chunk), outputs = std::to_string(4 * threads_x);
    return "_kernel(\"" + kernel.name + "\")(((" + out_shape + "[-1] + " + std::to_string(4 * threads_x - 1) + ") // " +
           outputs + ", (" + out_shape + "[-2] + " + std::to_string(tile_y - 1) + ") // " + std::to_string(tile_y) +
           ", " + out_shape + "[:-3].numel() * ((" + out_shape + "[-3] + " + std::to_string(z_chunk - 1) + ") // " + zc +
           ")), (" + std::to_string(threads_x) + ", " + std::to_string(tile_y) + "), " + input + ", " + output +
           extra_args + ", " + input + ".shape[-1], " + input + ".shape[-2], " + input + ".shape[-3], " + out_shape +
           "[-1], " + out_shape + "[-2], " + out_shape + "[-3], " + zc + ")";
  }
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

std::string stencil_launch_vec4_or_direct(const StencilKernel& vec4, const StencilKernel& direct, const std::string& input,
                                          const std::string& output, const std::string& out_shape,
                                          const std::string& extra_args, int z_chunk) {
  const auto& n = vec4.in_size;
  return stencil_launch(vec4, input, output, out_shape, extra_args, stencil_vec4_z_chunk(vec4.out_size[0])) + " if " +
         input + ".shape[-3:] == (" + std::to_string(n[0]) + ", " + std::to_string(n[1]) + ", " + std::to_string(n[2]) +
         ") and " + input + ".data_ptr() % 16 == 0 else " + stencil_launch(direct, input, output, out_shape, extra_args, z_chunk);
}

std::vector<StencilTap> stencil_vec4_row_march(StencilKernel& kernel, const std::vector<StencilTap>& taps, std::int64_t ny,
                                               std::int64_t nx, std::int64_t oy_n, std::int64_t ox_n) {
  std::vector<StencilTap> marched;
  for (const StencilTap& t : taps) marched.push_back({t.oy, 0, t.ox});
  kernel.geometry = stencil_geometry(3, marched);
  kernel.in_size = {ny, 1, nx};
  kernel.out_size = {oy_n, 1, ox_n};
  return marched;
}

std::string stencil_launch_vec4_planes_or_direct(const StencilKernel& vec4, const StencilKernel& direct,
                                                 const std::string& input, const std::string& output,
                                                 const std::string& out_shape, const std::string& extra_args) {
  const auto& n = vec4.in_size;
  const auto& o = vec4.out_size;
  if (n[1] != 1 || o[1] != 1) throw std::invalid_argument("a 2D stencil's vec4 kernel marches down the rows of one plane");
  const std::int64_t row_chunk = std::clamp<std::int64_t>(o[0], 1, kVec4RowChunk);
  const std::int64_t chunks = (o[0] + row_chunk - 1) / row_chunk;
  auto text = [](std::int64_t v) { return std::to_string(v); };
  // The planes come from the input; the grid's z (planes x chunks) stays within CUDA's 65535.
  const std::string planes = "(" + input + ".numel() // " + text(n[0] * n[2]) + ")";
  const int threads_x = vec4_threads_x(vec4);
  const std::string grid = "(" + text((o[2] + 4 * threads_x - 1) / (4 * threads_x)) + ", 1, " + planes + " * " +
                           text(chunks) + ")";
  return "_kernel(\"" + vec4.name + "\")(" + grid + ", (" + text(threads_x) + ", 1), " + input + ", " + output +
         extra_args + ", " + text(n[2]) + ", 1, " + text(n[0]) + ", " + text(o[2]) + ", 1, " + text(o[0]) + ", " +
         text(row_chunk) + ") if " + input + ".shape[-2:] == (" + text(n[0]) + ", " + text(n[2]) + ") and " + planes +
         " * " + text(chunks) + " <= 65535 and " + input + ".data_ptr() % 16 == 0 else " +
         stencil_launch(direct, input, output, out_shape, extra_args, 0);
}

}  // namespace hiera::engine::propose::recipes::kernels
