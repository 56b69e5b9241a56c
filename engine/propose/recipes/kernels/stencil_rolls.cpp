#include "engine/propose/recipes/kernels/stencil_rolls.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
#include "engine/propose/recipes/kernels/stencil_operands.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

// A group operand read through one or more rolls: the tensor rolled, and per
// dimension of it the total shift (rolls of rolls add up).
struct Rolled {
  const graph::Node* leaf = nullptr;  // the outermost roll, the group's operand
  const graph::Node* base = nullptr;
  std::vector<std::int64_t> shift;
  std::vector<const graph::Node*> rolls;  // the chain, outermost first
};

bool is_roll(const graph::Node& node) {
  return is_call(node, "roll", "torch.roll") || (node.op == "call_function" && node.target == "torch.ops.aten.roll.default");
}

// One roll's shifts per dimension of its input; nullopt for a roll of the
// flattened tensor (no dims) or shifts computed at run time.
std::optional<std::vector<std::int64_t>> roll_shifts(const graph::Node& roll, std::size_t rank) {
  if (!passes_only(roll, 3, {"shifts", "dims"})) return std::nullopt;
  const auto shifts = int_list(argument(roll, 1, "shifts"));
  const auto dims = int_list(argument(roll, 2, "dims"));
  if (!shifts || !dims || dims->empty() || shifts->size() != dims->size()) return std::nullopt;
  std::vector<std::int64_t> out(rank, 0);
  for (std::size_t k = 0; k < dims->size(); ++k) {
    const auto d = normalize_dim((*dims)[k], rank);
    if (!d) return std::nullopt;
    out[static_cast<std::size_t>(*d)] += (*shifts)[k];
  }
  return out;
}

// The rolls `node` reads its tensor through, or nullopt when it is no roll.
std::optional<Rolled> rolled_of(const graph::OpGraph& graph, const graph::Node& node) {
  if (!is_roll(node) || !node.meta) return std::nullopt;
  Rolled rolled;
  rolled.leaf = &node;
  rolled.shift.assign(node.meta->shape.size(), 0);
  const graph::Node* at = &node;
  while (is_roll(*at)) {
    const graph::Node* input = argument_node(graph, *at, 0, "input");
    if (!input || !input->meta || !at->meta || input->meta->shape != at->meta->shape) return std::nullopt;
    const auto shifts = roll_shifts(*at, input->meta->shape.size());
    if (!shifts) return std::nullopt;
    for (std::size_t d = 0; d < shifts->size(); ++d) rolled.shift[d] += (*shifts)[d];
    rolled.rolls.push_back(at);
    at = input;
  }
  rolled.base = at;
  return rolled;
}

// The group's operands sorted: rolls of one tensor (the taps), that tensor
// itself (the centre tap), and the rest (point fields).
struct RollOperands {
  std::vector<Rolled> rolled;
  bool centre = false;
  std::vector<std::string> others;
};

RollOperands roll_operands(const graph::OpGraph& graph, const ElementwiseGroup& group) {
  RollOperands operands;
  std::vector<std::string> rest;
  for (const auto& leaf : stencil_group_leaves(graph, group)) {
    const graph::Node* node = graph.find(leaf);
    auto rolled = node ? rolled_of(graph, *node) : std::nullopt;
    if (rolled) {
      operands.rolled.push_back(std::move(*rolled));
    } else {
      rest.push_back(leaf);
    }
  }
  for (auto& leaf : rest) {
    if (!operands.rolled.empty() && leaf == operands.rolled[0].base->name) {
      operands.centre = true;
    } else {
      operands.others.push_back(std::move(leaf));
    }
  }
  return operands;
}

// Every roll of the chains is read only by the group or by the next roll of a
// chain: the kernel computes them all, so none may be needed as a tensor.
void check_rolls_stay_inside(const ElementwiseGroup& group, const std::vector<Rolled>& rolled) {
  std::set<std::string> inside = group.members;
  for (const auto& r : rolled)
    for (const graph::Node* roll : r.rolls) inside.insert(roll->name);
  for (const auto& r : rolled) {
    if (r.base != rolled[0].base) throw Unsupported(group.root + ": rolls of different tensors");
    for (const graph::Node* roll : r.rolls)
      for (const auto& user : roll->users)
        if (!inside.count(user)) throw Unsupported(roll->name + " is also read outside the stencil");
  }
}

// Taps and the dimensions they move in: 2D when only the last two move, 3D
// when the last three, the leading dimensions a batch.
struct RollGeometry {
  int dims = 2;
  std::vector<StencilTap> taps;  // per rolled operand, in order
  std::vector<std::int64_t> reach;  // per spatial dimension, outermost first: the largest |offset|
};

RollGeometry roll_geometry(const std::string& root, const std::vector<std::int64_t>& shape,
                           const std::vector<Rolled>& rolled) {
  const std::size_t rank = shape.size();
  std::size_t first = rank;
  for (const auto& r : rolled)
    for (std::size_t d = 0; d < rank; ++d)
      if (r.shift[d] != 0) first = std::min(first, d);
  if (first == rank) throw Unsupported(root + ": every roll is by zero");
  RollGeometry g;
  g.dims = rank >= 3 && first <= rank - 3 ? 3 : 2;
  if (rank < 2 || first + static_cast<std::size_t>(g.dims) < rank)
    throw Unsupported(root + ": the rolls shift a dimension before the last three");
  const std::size_t spatial = rank - static_cast<std::size_t>(g.dims);
  g.reach.assign(static_cast<std::size_t>(g.dims), 0);
  for (const auto& r : rolled) {
    for (std::size_t d = spatial; d < rank; ++d) {
      // The circular boundary maps an offset back into the grid once: it must not exceed the grid.
      if (std::abs(r.shift[d]) > shape[d])
        throw Unsupported(root + ": a roll by " + std::to_string(r.shift[d]) + " over " + std::to_string(shape[d]) +
                          " points wraps more than once");
      g.reach[d - spatial] = std::max(g.reach[d - spatial], std::abs(r.shift[d]));
    }
    StencilTap tap;
    if (g.dims == 3) tap.oz = static_cast<int>(-r.shift[rank - 3]);
    tap.oy = static_cast<int>(-r.shift[rank - 2]);
    tap.ox = static_cast<int>(-r.shift[rank - 1]);
    g.taps.push_back(tap);
  }
  return g;
}

// The launch: the input contiguous; its dtype, the fields', and each rolled
// dimension at least as long as the offsets into it (the circular boundary
// wraps once) checked; the output the input's shape.
std::vector<std::string> roll_statements(const graph::Node& base, const graph::Node& root, const StencilKernel& kernel,
                                         const RollGeometry& g, const StencilFields& fields, int sm_count) {
  const std::string prefix = "_" + root.name + "_", x = prefix + "x", shape = prefix + "shape";
  std::string check = x + ".dtype == " + kernel_dtype(base.meta->dtype)->torch_name;
  std::string expected = base.meta->dtype + " " + base.name;
  if (!fields.empty()) check += " and " + fields.checks(x + ".shape"), expected += ", " + fields.expected();
  std::int64_t reach = 0;
  for (std::size_t d = 0; d < g.reach.size(); ++d) {
    if (g.reach[d] < 2) continue;  // a grid has at least one point
    check += " and " + x + ".shape[-" + std::to_string(g.reach.size() - d) + "] >= " + std::to_string(g.reach[d]);
    reach = std::max(reach, g.reach[d]);
  }
  if (reach > 0) expected += " with at least " + std::to_string(reach) + " points along each rolled dimension";
  const auto& out = root.meta->shape;
  const std::size_t rank = out.size();
  std::int64_t batch = 1;
  for (std::size_t d = 0; d + static_cast<std::size_t>(g.dims) < rank; ++d) batch *= out[d];
  const StencilGeometry& geometry = kernel.geometry;
  const std::int64_t tiles = ((out[rank - 1] + geometry.tile_x - 1) / geometry.tile_x) *
                             ((out[rank - 2] + geometry.tile_y - 1) / geometry.tile_y) * batch;
  const int z_chunk = g.dims == 3 ? stencil_z_chunk(out[rank - 3], tiles, sm_count, geometry.tile_x * geometry.tile_y) : 0;
  const std::string out_dtype = root.meta->dtype == base.meta->dtype ? x + ".dtype" : kernel_dtype(root.meta->dtype)->torch_name;
  return {x + " = " + base.name + ".contiguous()",
          "assert " + check + ", \"kernel " + kernel.name + " expects " + expected + "\"",
          shape + " = " + x + ".shape",
          root.name + " = torch.empty(" + shape + ", dtype=" + out_dtype + ", device=" + x + ".device)",
          stencil_launch(kernel, x, root.name, shape, fields.arguments(), z_chunk)};
}

Replacement build(const graph::OpGraph& graph, const ElementwiseGroup& group, const RollOperands& operands,
                  const KernelRewriteOptions& options) {
  const graph::Node& base = *operands.rolled[0].base;
  const graph::Node& root = *graph.find(group.root);
  check_rolls_stay_inside(group, operands.rolled);
  if (!base.meta || !root.meta || root.meta->shape != base.meta->shape)
    throw Unsupported(group.root + ": the stencil's result is broadcast beyond its rolls");
  if (!is_float_dtype(base.meta->dtype) || !kernel_dtype(root.meta->dtype) || !is_float_dtype(root.meta->dtype))
    throw Unsupported(group.root + ": a stencil over " + base.meta->dtype);
  const StencilFields fields(graph, root, operands.others);
  const auto& shape = base.meta->shape;
  const RollGeometry g = roll_geometry(group.root, shape, operands.rolled);
  std::vector<StencilTap> taps = g.taps;
  if (operands.centre) taps.push_back({});

  // The kernel: the group's arithmetic over the taps, the wrap-around the direct kernel's circular boundary.
  StencilKernel kernel;
  kernel.name = "stencil_" + group.root;
  kernel.variant = StencilVariant::Direct;
  kernel.in_dtype = base.meta->dtype;
  kernel.out_dtype = root.meta->dtype;
  kernel.geometry = stencil_geometry(g.dims, taps);
  kernel.geometry.tile_y = 8;  // 256 threads: no shared tile to amortise
  kernel.boundary = StencilBoundary::Circular;
  ProgramOptions program_options;
  program_options.shape = root.meta->shape;
  program_options.shape_python = "_" + group.root + "_shape";
  ElementwiseProgram program(graph, group.members, program_options);
  for (std::size_t k = 0; k < operands.rolled.size(); ++k)
    program.bind(operands.rolled[k].leaf->name, tap_accessor(kernel.geometry, g.taps[k]));
  if (operands.centre) program.bind(base.name, tap_accessor(kernel.geometry, StencilTap{}));
  fields.bind(kernel, program);
  kernel.update_result = program.value(group.root);
  if (!program.leaves().empty()) throw Unsupported(group.root + ": the stencil also reads " + program.leaves()[0].python);
  kernel.update_body = program.body();
  kernel.helpers = program.helpers();

  Replacement replacement;
  replacement.recipe = g.dims == 2 ? "s3_stencil2d_direct_l1" : "s3_stencil3d_direct_l1";
  replacement.space = knowledge::Space::S3;
  replacement.produces = group.root;
  replacement.covered = group.members;
  for (const auto& r : operands.rolled)
    for (const graph::Node* roll : r.rolls) replacement.covered.insert(roll->name);
  std::vector<StencilTap> distinct;
  for (const auto& tap : taps)
    if (std::find(distinct.begin(), distinct.end(), tap) == distinct.end()) distinct.push_back(tap);
  replacement.description = std::to_string(distinct.size()) + "-point " + std::to_string(g.dims) + "D periodic stencil over " +
                            base.name + " (torch.roll) as one kernel with its coefficients compiled in, the wrap-around "
                            "read through a circular boundary, neighbours read through the caches" + fields.described();
  replacement.kernels.push_back(stencil_source(*options.knowledge, kernel));
  replacement.statements = roll_statements(base, root, kernel, g, fields, options.sm_count);
  return replacement;
}

}  // namespace

std::vector<Replacement> find_roll_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                            const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  std::vector<Replacement> out;
  for (const auto& group : elementwise_groups(graph, covered)) {
    try {
      const RollOperands operands = roll_operands(graph, group);
      if (operands.rolled.empty()) continue;  // no rolls: no periodic stencil
      const bool taken = std::any_of(operands.rolled.begin(), operands.rolled.end(), [&](const Rolled& r) {
        return std::any_of(r.rolls.begin(), r.rolls.end(), [&](const graph::Node* roll) { return covered.count(roll->name) > 0; });
      });
      if (taken) continue;
      Replacement replacement = build(graph, group, operands, options);
      covered.insert(replacement.covered.begin(), replacement.covered.end());
      out.push_back(std::move(replacement));
    } catch (const Unsupported& e) {
      skipped.push_back({group.root, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
