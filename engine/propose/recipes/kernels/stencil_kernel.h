#pragma once
// The kernel shared by the stencil rewrites: an output point reads the input
// at fixed offsets (taps) from it, in 2D (knowledge/templates/stencil2d_tiled.cu:
// a shared-memory tile with halo) or 3D (stencil3d_7pt.cu: a z march with
// each thread's input column in registers and the planes that need in-plane
// neighbours in a shared-memory ring). This file turns the taps into the
// template's geometry, names each tap's accessor for the update expression,
// and writes the kernel and its launch statement.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes::kernels {

// Input point = output point + (oz, oy, ox); 2D stencils leave oz at 0.
struct StencilTap {
  int oz = 0, oy = 0, ox = 0;
  bool operator==(const StencilTap&) const = default;
};

// 3D: one input row (oz, oy) the taps read, and the x offsets they read in it.
struct StencilRow {
  int oz = 0, oy = 0, lo_x = 0, hi_x = 0;
  bool operator==(const StencilRow&) const = default;
};

struct StencilGeometry {
  int dims = 3;
  int lo_z = 0, hi_z = 0, lo_y = 0, hi_y = 0, lo_x = 0, hi_x = 0;
  int column_y = 0, column_x = 0;  // 3D: the in-plane offset each thread holds in registers
  int plane_lo = 0, plane_hi = -1;  // 3D: z offsets whose planes go through shared memory (empty: hi < lo)
  int tile_x = 32, tile_y = 16;
  std::vector<StencilRow> rows;  // 3D: the rows, ordered by (oz, oy)
};

// The geometry for `taps`: the offsets' bounding box; in 3D, the in-plane
// offset most taps use as the register column (ties: the one nearest the
// centre of the box), and the z range of the taps that need another offset.
StencilGeometry stencil_geometry(int dims, const std::vector<StencilTap>& taps);

// The update's expression for one tap: COL(oz) or PLANE(oz, oy, ox) in 3D, IN(oy, ox) in 2D.
std::string tap_accessor(const StencilGeometry& geometry, const StencilTap& tap);
// The same for stencil3d_vec4.cu: TAP(row index, ox).
std::string vec4_tap_accessor(const StencilGeometry& geometry, const StencilTap& tap);

// Output planes a 3D block marches through: few enough chunks that halo
// planes stay cheap, enough blocks to fill `sm_count` SMs (the last wave as full as it can be).
int stencil_z_chunk(std::int64_t out_z, std::int64_t blocks_per_plane_set, int sm_count, int threads_per_block);
// The DirectVec4 kernel's chunk: short (on the H200 8 planes beat 16 and 57;
// the planes a chunk re-reads below its first come from L2).
int stencil_vec4_z_chunk(std::int64_t out_z);

// How a kernel reaches its neighbours: through shared memory (3D: a ring of
// planes, stencil3d_7pt.cu, one barrier per plane; 2D: a tile with halo,
// stencil2d_tiled.cu) or straight loads through L1/L2 (stencil3d_direct.cu,
// several planes per step; stencil2d_direct.cu), no barriers. Which is faster
// depends on the GPU and the grid: the proposer offers both. DirectVec4
// (stencil3d_vec4.cu, float32 3D only) is the direct kernel with four outputs
// per thread and 16-byte loads; its launch falls back to Direct's kernel
// when the input's rows are not 16-byte aligned.
enum class StencilVariant { SharedRing, Direct, DirectVec4 };

// A tensor laid out as the output, read at the output point (another field
// a time step combines with the stencil): `pointer`, an extra parameter, at
// the element the template's thread is storing. Not the DirectVec4 kernel's
// (four outputs a thread): std::invalid_argument.
std::string stencil_point_accessor(int dims, StencilVariant variant, const std::string& pointer);

// What a tap outside the input reads: 0 (a conv's zero padding) or, folded in
// from F.pad's mode, the input point replicate / reflect / circular maps it
// to. The Direct and DirectVec4 kernels have every mode (DirectVec4 maps a
// row's y once a thread and, in 3D, the plane of every load); SharedRing has zeros only.
enum class StencilBoundary { Zeros = 0, Replicate = 1, Reflect = 2, Circular = 3 };
// The boundary of a padding mode's name (F.pad's or nn.Conv*d's padding_mode): "replicate", "reflect",
// "circular"; "zeros" (and F.pad's "constant", whose value the caller checks) read 0; nullopt for others.
std::optional<StencilBoundary> stencil_boundary_of_mode(std::string_view mode);
// The templates' hiera_edge(g, n): coordinate g outside [0, n) as `boundary` reads it (offsets stay below n).
std::string stencil_edge_function(StencilBoundary boundary);

// Whether a 3D stencil from `in_dtype` to `out_dtype` over rows `nx` wide has the DirectVec4 kernel.
bool stencil_vec4_applies(int dims, const std::string& in_dtype, const std::string& out_dtype, std::int64_t nx);

// DirectVec4: rows with one oy and consecutive oz (indexes into geometry.rows,
// lowest oz first) march together: a step loads the top row and shifts the
// others down a plane. lo_x / hi_x cover every row of the chain.
struct StencilChain {
  std::vector<std::size_t> rows;
  int lo_x = 0, hi_x = 0;
  bool operator==(const StencilChain&) const = default;
};
std::vector<StencilChain> stencil_chains(const StencilGeometry& geometry);


// DirectVec4: a sum of coefficient x tap, one of the values the update combines (a conv's accumulator,
// or the input at the output point, a single term).
struct StencilSum {
  std::string name;  // the update's name for it
  struct Term {
    StencilTap tap;
    std::string coefficient;  // a float literal; empty: the tap itself
  };
  std::vector<Term> terms;  // in the order they are added (the reference's tap order, oz outermost)
};

struct StencilKernel {
  std::string name;
  StencilVariant variant = StencilVariant::SharedRing;
  std::string in_dtype, out_dtype;
  StencilGeometry geometry;
  StencilBoundary boundary = StencilBoundary::Zeros;
  std::vector<std::string> update_body;  // statements over the accessors
  std::string update_result;
  std::vector<std::string> helpers;      // device helpers the update calls
  std::vector<std::string> extra_dtypes;  // dtypes of extra pointer parameters
  std::string extra_params;              // ", const float* __restrict__ weight, ..." or empty
  std::string setup;                     // statements with `batch` known, or empty
  // DirectVec4: per geometry row, a condition (uniform across the block) under
  // which the row is read, or empty for always; a row left unread is zeros.
  std::vector<std::string> row_guards;
  // DirectVec4: the sizes compiled in, input (nz, ny, nx) and output (oz_n, oy_n, ox_n).
  std::array<std::int64_t, 3> in_size{}, out_size{};
  // DirectVec4 with plane sums: when set, update_body and update_result combine these sums (by name) and
  // read no TAP. Each plane loaded adds its terms to the outputs it serves, held in registers one slot
  // an output plane (a 27-point box: 3 x 4 floats), where a chain holds every row a tap reads (9 rows of
  // 12 floats, which spilled at 64 registers). Row guards are not read.
  std::vector<StencilSum> sums;
};

// The filled template (stencil3d_7pt.cu, stencil3d_direct.cu, stencil3d_vec4.cu, stencil2d_tiled.cu or stencil2d_direct.cu).
KernelSource stencil_source(const knowledge::KnowledgeBase& knowledge, const StencilKernel& kernel);

// The launch: `input` a contiguous tensor variable [batch..., (nz,) ny, nx],
// `output` the allocated output variable, `out_shape` its shape variable;
// `extra_args` the launch arguments of extra_params (with a leading ", " or empty).
std::string stencil_launch(const StencilKernel& kernel, const std::string& input, const std::string& output,
                           const std::string& out_shape, const std::string& extra_args, int z_chunk);
// One statement: the DirectVec4 kernel's launch (its own 8-plane chunks) when
// `input` has the sizes it was compiled for and a 16-byte aligned start, else
// the scalar `direct` kernel's (with `z_chunk`).
std::string stencil_launch_vec4_or_direct(const StencilKernel& vec4, const StencilKernel& direct, const std::string& input,
                                          const std::string& output, const std::string& out_shape,
                                          const std::string& extra_args, int z_chunk);
// A 2D stencil over planes on the vec4 kernel: each thread marches down its
// column, the plane's rows the kernel's z (a chain: one new row loaded a step,
// the others shifted in registers, where reading each row a tap needs cost
// L1 5 loads a step for a 5x5), its y one row, the planes its batch. Sets
// `kernel`'s geometry from the 2D `taps` and its sizes to one plane's
// (input ny x nx, output oy_n x ox_n); returns the taps as the kernel reads
// them (oz = the 2D oy), for vec4_tap_accessor.
std::vector<StencilTap> stencil_vec4_row_march(StencilKernel& kernel, const std::vector<StencilTap>& taps, std::int64_t ny,
                                               std::int64_t nx, std::int64_t oy_n, std::int64_t ox_n);
// The launch of a row-march kernel: blocks one row high, each marching through
// 16 rows of a plane, as many planes as `input` holds; its rows' sizes are
// checked, with 16-byte alignment and the grid's limit, else `direct` (the 2D direct kernel).
std::string stencil_launch_vec4_planes_or_direct(const StencilKernel& vec4, const StencilKernel& direct,
                                                 const std::string& input, const std::string& output,
                                                 const std::string& out_shape, const std::string& extra_args);

}  // namespace hiera::engine::propose::recipes::kernels
