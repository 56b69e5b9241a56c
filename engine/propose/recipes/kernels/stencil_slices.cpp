#include "engine/propose/recipes/kernels/stencil_slices.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
#include "engine/propose/recipes/kernels/stencil_operands.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

// A basic slice x[a:b, c:d, ...] of a tensor: per dimension its start and extent.
struct Slice {
  const graph::Node* node = nullptr;
  std::string base;
  std::vector<std::int64_t> start, extent;
};

// A literal slice bound; None stays nullopt.
struct Bound {
  bool literal = true;
  std::optional<std::int64_t> value;
};

Bound slice_bound(const graph::Arg& arg) {
  if (arg.kind == graph::Arg::Kind::None) return {};
  if (!arg.is_number() || !arg.is_integer) return {false, std::nullopt};  // computed at run time (x.shape[-1] // 2)
  return {true, static_cast<std::int64_t>(arg.number)};
}

// The slice a getitem node takes, or nullopt when it is not a getitem of
// basic slices with literal bounds and fixed starts.
std::optional<Slice> slice_of(const graph::OpGraph& graph, const graph::Node& node) {
  if (node.kind != "getitem" || node.args.size() != 2 || !node.args[0].is_node()) return std::nullopt;
  const graph::Node* base = graph.producer(node.args[0]);
  if (!base || !base->meta || !node.meta) return std::nullopt;
  const auto& shape = base->meta->shape;
  std::vector<graph::Arg> items;
  if (node.args[1].kind == graph::Arg::Kind::List) {
    items = node.args[1].items;
  } else {
    items = {node.args[1]};
  }
  // An ellipsis stands for as many full slices as the other items leave.
  std::vector<graph::Arg> expanded;
  for (const auto& item : items) {
    if (item.kind == graph::Arg::Kind::Ellipsis) {
      graph::Arg full;
      full.kind = graph::Arg::Kind::Slice;
      full.items = {graph::Arg{}, graph::Arg{}, graph::Arg{}};
      for (std::size_t k = 0; k + items.size() - 1 < shape.size(); ++k) expanded.push_back(full);
    } else {
      expanded.push_back(item);
    }
  }
  if (expanded.size() > shape.size()) return std::nullopt;
  Slice slice;
  slice.node = &node;
  slice.base = base->name;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::int64_t start = 0, stop = shape[d];
    if (d < expanded.size()) {
      const graph::Arg& item = expanded[d];
      if (item.kind != graph::Arg::Kind::Slice || item.items.size() != 3) return std::nullopt;  // an index, None: not a tap
      // A step, a bound computed at run time, or a start counted from the end (its offset
      // changes with the size) is no fixed tap.
      const Bound a = slice_bound(item.items[0]), b = slice_bound(item.items[1]), step = slice_bound(item.items[2]);
      if (!a.literal || !b.literal || !step.literal || (step.value && *step.value != 1)) return std::nullopt;
      if (a.value) {
        if (*a.value < 0) return std::nullopt;
        start = std::min(*a.value, shape[d]);
      }
      if (b.value) stop = *b.value < 0 ? std::max<std::int64_t>(0, shape[d] + *b.value) : std::min(*b.value, shape[d]);
    }
    slice.start.push_back(start);
    slice.extent.push_back(std::max<std::int64_t>(0, stop - start));
  }
  if (slice.extent != node.meta->shape) return std::nullopt;
  return slice;
}

Replacement build(const graph::OpGraph& graph, const ElementwiseGroup& group, const std::vector<Slice>& slices,
                  const std::vector<std::string>& others, const KernelRewriteOptions& options, StencilVariant variant) {
  const graph::Node& base = *graph.find(slices[0].base);
  const auto& shape = base.meta->shape;
  const std::size_t rank = shape.size();
  for (const auto& s : slices) {
    if (s.base != slices[0].base) throw Unsupported(group.root + ": slices of different tensors");
    if (s.extent != slices[0].extent) throw Unsupported(group.root + ": slices of different shapes");
    for (const auto& user : s.node->users)
      if (!group.members.count(user)) throw Unsupported(s.node->name + " is also read outside the stencil");
  }
  const graph::Node& root = *graph.find(group.root);
  if (!root.meta || root.meta->shape != slices[0].extent)
    throw Unsupported(group.root + ": the stencil's result is broadcast beyond its slices");
  if (!is_float_dtype(base.meta->dtype) || !kernel_dtype(root.meta->dtype) || !is_float_dtype(root.meta->dtype))
    throw Unsupported(group.root + ": a stencil over " + base.meta->dtype);
  const StencilFields fields(graph, root, others);
  // Which dimensions the taps move in decides 2D or 3D; dimensions before those are a batch of full planes.
  std::vector<bool> varies(rank, false);
  for (std::size_t d = 0; d < rank; ++d)
    for (const auto& s : slices) varies[d] = varies[d] || s.start[d] != slices[0].start[d];
  const auto first_varying = std::find(varies.begin(), varies.end(), true);
  if (first_varying == varies.end()) throw Unsupported(group.root + ": every slice is the same");
  const std::size_t first = static_cast<std::size_t>(first_varying - varies.begin());
  const int dims = rank >= 3 && first <= rank - 3 ? 3 : 2;
  if (rank < 2 || first + dims < rank) throw Unsupported(group.root + ": the slices shift a dimension before the last three");
  const std::size_t spatial = rank - static_cast<std::size_t>(dims);
  for (std::size_t d = 0; d < spatial; ++d)
    if (slices[0].start[d] != 0 || slices[0].extent[d] != shape[d])
      throw Unsupported(group.root + ": the slices cut a batch dimension");

  std::vector<StencilTap> taps;
  for (const auto& s : slices) {
    StencilTap tap;
    if (dims == 3) tap.oz = static_cast<int>(s.start[rank - 3]);
    tap.oy = static_cast<int>(s.start[rank - 2]);
    tap.ox = static_cast<int>(s.start[rank - 1]);
    taps.push_back(tap);
  }
  // The group's arithmetic with each slice read through its tap: the coefficients stay literals.
  auto make_kernel = [&](StencilVariant kind, const std::string& name) {
    StencilKernel kernel;
    kernel.name = name;
    kernel.variant = kind;
    kernel.in_dtype = base.meta->dtype;
    kernel.out_dtype = root.meta->dtype;
    // The vec4 kernel is 3D: over a 2D stencil's planes it marches down each plane's rows (its z).
    const bool planes = kind == StencilVariant::DirectVec4 && dims == 2;
    const std::vector<StencilTap> kernel_taps =
        planes ? stencil_vec4_row_march(kernel, taps, shape[rank - 2], shape[rank - 1], root.meta->shape[rank - 2],
                                        root.meta->shape[rank - 1])
               : taps;
    if (!planes) kernel.geometry = stencil_geometry(dims, taps);
    if (kind != StencilVariant::SharedRing) kernel.geometry.tile_y = 8;  // 256 threads: no shared tile to amortise
    if (dims == 3) {
      for (std::size_t d = 0; d < 3; ++d)
        kernel.in_size[d] = shape[shape.size() - 3 + d], kernel.out_size[d] = root.meta->shape[root.meta->shape.size() - 3 + d];
    }
    ProgramOptions program_options;
    program_options.shape = root.meta->shape;
    program_options.shape_python = "_" + group.root + "_shape";
    ElementwiseProgram program(graph, group.members, program_options);
    for (std::size_t k = 0; k < slices.size(); ++k)
      program.bind(slices[k].node->name, kind == StencilVariant::DirectVec4 ? vec4_tap_accessor(kernel.geometry, kernel_taps[k])
                                                                             : tap_accessor(kernel.geometry, taps[k]));
    fields.bind(kernel, program);
    kernel.update_result = program.value(group.root);
    if (!program.leaves().empty()) throw Unsupported(group.root + ": the stencil also reads " + program.leaves()[0].python);
    kernel.update_body = program.body();
    kernel.helpers = program.helpers();
    return kernel;
  };
  // 2D: DirectVec4 asks for the vec4 kernel over the planes, with the scalar direct kernel as its fallback.
  const bool planes = variant == StencilVariant::DirectVec4 && dims == 2;
  if (variant == StencilVariant::DirectVec4 && !planes)
    throw Unsupported(group.root + ": a 3D stencil has the vec4 kernel in its direct candidate");
  if (planes && !stencil_vec4_applies(3, base.meta->dtype, root.meta->dtype, shape.back()))
    throw Unsupported(group.root + ": the vec4 kernel needs float32 rows a multiple of 4 floats wide");
  // Its four outputs a thread have no point accessor for the other fields.
  if (planes && !fields.empty()) throw Unsupported(group.root + ": the vec4 kernel reads no other fields");
  const StencilKernel kernel = make_kernel(planes ? StencilVariant::Direct : variant, "stencil_" + group.root);
  const bool vec4 = planes || (variant == StencilVariant::Direct && fields.empty() &&
                               stencil_vec4_applies(dims, base.meta->dtype, root.meta->dtype, shape.back()));

  Replacement replacement;
  const bool direct = variant != StencilVariant::SharedRing;
  replacement.recipe = planes        ? "s3_stencil2d_vec4_direct"
                       : dims == 2   ? (direct ? "s3_stencil2d_direct_l1" : "s3_stencil2d_shared_tile")
                       : vec4              ? "s3_stencil3d_vec4_direct"
                       : direct            ? "s3_stencil3d_direct_l1"
                       : taps.size() <= 7  ? "s3_stencil3d_7pt_register_z"
                                           : "s3_stencil3d_27pt";
  replacement.space = knowledge::Space::S3;
  replacement.produces = group.root;
  replacement.covered = group.members;
  for (const auto& s : slices) replacement.covered.insert(s.node->name);
  replacement.description = std::to_string(taps.size()) + "-point " + std::to_string(dims) + "D stencil over " +
                            base.name + " (shifted slices) as one kernel with its coefficients compiled in" +
                            (vec4     ? ", four outputs per thread from 16-byte loads, neighbours through the caches"
                             : direct ? ", neighbours read through the caches"
                                      : "") +
                            fields.described();
  const StencilKernel vec4_kernel = vec4 ? make_kernel(StencilVariant::DirectVec4, kernel.name + "_vec4") : StencilKernel{};
  if (vec4) replacement.kernels.push_back(stencil_source(*options.knowledge, vec4_kernel));
  replacement.kernels.push_back(stencil_source(*options.knowledge, kernel));

  const std::string prefix = "_" + group.root + "_";
  const KernelDtype& in_type = *kernel_dtype(base.meta->dtype);
  std::int64_t batch = 1;
  for (std::size_t d = 0; d < spatial; ++d) batch *= shape[d];
  const auto& out = root.meta->shape;
  const std::int64_t tiles = ((out[rank - 1] + kernel.geometry.tile_x - 1) / kernel.geometry.tile_x) *
                             ((out[rank - 2] + kernel.geometry.tile_y - 1) / kernel.geometry.tile_y) * batch;
  const int z_chunk = dims == 3 ? stencil_z_chunk(out[rank - 3], tiles, options.sm_count,
                                                  kernel.geometry.tile_x * kernel.geometry.tile_y)
                                : 0;
  const std::string out_dtype = root.meta->dtype == base.meta->dtype ? prefix + "x.dtype" : kernel_dtype(root.meta->dtype)->torch_name;
  auto& s = replacement.statements;
  s.push_back(prefix + "x = " + base.name + ".contiguous()");
  s.push_back("assert " + prefix + "x.dtype == " + in_type.torch_name + ", \"kernel " + kernel.name + " expects " +
              base.meta->dtype + " " + base.name + "\"");
  // The output's shape is the slices' own (a view costs nothing).
  s.push_back(prefix + "shape = " + slices[0].node->code + ".shape");
  if (!fields.empty())
    s.push_back("assert " + fields.checks(prefix + "shape") + ", \"kernel " + kernel.name + " expects " + fields.expected() + "\"");
  s.push_back(group.root + " = torch.empty(" + prefix + "shape, dtype=" + out_dtype + ", device=" + prefix + "x.device)");
  s.push_back(planes ? stencil_launch_vec4_planes_or_direct(vec4_kernel, kernel, prefix + "x", group.root, prefix + "shape", "")
              : vec4  ? stencil_launch_vec4_or_direct(vec4_kernel, kernel, prefix + "x", group.root, prefix + "shape", "", z_chunk)
                      : stencil_launch(kernel, prefix + "x", group.root, prefix + "shape", fields.arguments(), z_chunk));
  return replacement;
}

}  // namespace

std::vector<Replacement> find_slice_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                             const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  std::vector<Replacement> out;
  for (const auto& group : elementwise_groups(graph, covered)) {
    std::vector<Slice> slices;
    std::vector<std::string> others;  // the other fields the update reads at the output point
    try {
      for (const auto& leaf : stencil_group_leaves(graph, group)) {
        const graph::Node* node = graph.find(leaf);
        const auto slice = node ? slice_of(graph, *node) : std::nullopt;
        if (slice) {
          slices.push_back(*slice);
        } else {
          others.push_back(leaf);
        }
      }
      if (slices.size() < 2) continue;  // no stencil here
      if (std::any_of(slices.begin(), slices.end(), [&](const Slice& s) { return covered.count(s.node->name) > 0; }))
        continue;
      Replacement replacement = build(graph, group, slices, others, options, StencilVariant::SharedRing);
      covered.insert(replacement.covered.begin(), replacement.covered.end());
      // 2D float32 over rows of 4 floats: the vec4 kernel over the planes first (not yet timed on a GPU in
      // 2D, so the scalar direct variant stays a candidate of its own).
      try {
        out.push_back(build(graph, group, slices, others, options, StencilVariant::DirectVec4));
      } catch (const Unsupported&) {
        // 3D, not float32 rows of 4 floats, or other fields: Direct below covers it
      }
      // The direct-read variant goes first: on the H200 the shared-memory variants waited on their barriers.
      out.push_back(build(graph, group, slices, others, options, StencilVariant::Direct));
      out.push_back(std::move(replacement));
    } catch (const Unsupported& e) {
      skipped.push_back({group.root, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
