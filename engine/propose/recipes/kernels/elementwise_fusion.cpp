#include "engine/propose/recipes/kernels/elementwise_fusion.h"

#include <algorithm>
#include <memory>

#include "engine/propose/recipes/kernels/conv_bias.h"
#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"
#include "engine/propose/recipes/kernels/launch_statements.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

constexpr int kBlock = 256;
// Blocks per SM: eight, not _grid's default four. One pack in flight per thread left the vector
// kernel short of loads; bf16 swish + scale + clamp + bias (fusion/25) took 0.905 ms with eight
// against 0.980 with four on an H200 (bench/results/2026-11-30-samples-fusion-conv-channels-last-h200-2a157d8/profiles/final-2a157d8.txt).
constexpr int kBlocksPerSm = 8;

// "add + leaky_relu + mul", in graph order.
std::string op_list(const graph::OpGraph& graph, const std::set<std::string>& members) {
  std::string out;
  for (const auto& node : graph.nodes) {
    if (!members.count(node.name)) continue;
    if (!out.empty()) out += " + ";
    out += node.kind == "unknown" ? target_base(node) : node.kind;
  }
  return out;
}

}  // namespace

Replacement fuse_elementwise_group(const graph::OpGraph& graph, const ElementwiseGroup& group,
                                   const KernelRewriteOptions& options, const MemoryLayout& layout,
                                   const LeafBias* bias, bool float_intermediates) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  const graph::Node* root = graph.find(group.root);
  if (!root || !root->meta) throw Unsupported(group.root + " has no tensor result");
  const KernelDtype* out_type = kernel_dtype(root->meta->dtype);
  if (!out_type) throw Unsupported(group.root + " is " + root->meta->dtype);

  const std::string prefix = "_" + group.root + "_";
  const std::string kernel = "fused_" + group.root + layout.kernel_suffix + (float_intermediates ? "_f32" : "");
  const bool reordered = !layout.format.empty();
  if (reordered && layout.order.size() != root->meta->shape.size())
    throw Unsupported(group.root + " has " + std::to_string(root->meta->shape.size()) + " dimensions, " + layout.format +
                      " " + std::to_string(layout.order.size()));
  ProgramOptions program_options;
  program_options.shape = root->meta->shape;
  program_options.shape_python = prefix + (reordered ? "memory_shape" : "shape");
  program_options.memory_order = layout.order;
  program_options.prefix = "a";
  program_options.index64 = root->meta->elements() >= kIndex64From;
  program_options.full_size_by_value = true;
  program_options.rotations = true;
  program_options.round_intermediates = !float_intermediates;
  std::set<std::string> members = group.members;
  if (bias) members.insert(bias->node);
  // The scalar kernel's program, and (below) the vector kernel's with its lane packs.
  const auto build = [&](int lane_packs) {
    ProgramOptions o = program_options;
    o.lane_packs = lane_packs;
    auto p = std::make_unique<ElementwiseProgram>(graph, members, o);
    if (bias) p->set_custom(bias->node, plus_bias(*bias));
    std::string value = p->value(group.root);
    return std::make_pair(std::move(p), value);
  };
  auto [scalar_program, result] = build(0);
  ElementwiseProgram& program = *scalar_program;
  if (float_intermediates && program.unrounded() < 2)
    throw Unsupported(group.root + ": no half or bfloat16 intermediate to keep in float");

  // Pack width: 16 bytes of the widest element among the full-size operands and the output.
  int widest = out_type->bytes;
  std::vector<std::string> aligned;  // Python names of what the vector kernel loads as packs
  std::map<std::string, std::string> prepared;
  for (const auto& leaf : program.leaves()) {
    if (!leaf.full_size) continue;
    widest = std::max(widest, kernel_dtype(leaf.dtype)->bytes);
    prepared[leaf.pointer] = prefix + leaf.pointer;
    aligned.push_back(prefix + leaf.pointer);
  }
  const int vec = 16 / widest;
  auto [packed_program, packed_result] = build(vec);
  const auto same_parameters = [](const ElementwiseProgram& a, const ElementwiseProgram& b) {
    const auto pa = a.kernel_parameters(), pb = b.kernel_parameters();
    return std::equal(pa.begin(), pa.end(), pb.begin(), pb.end(), [](const KernelParameter& x, const KernelParameter& y) {
      return x.declaration == y.declaration && x.python == y.python;
    });
  };
  // Lane packs where the captured sizes are whole packs (a lane-packed leaf holds exactly `size` elements);
  // other sizes keep the vector kernel with per-element loads. At run time another size falls back to the
  // scalar kernel.
  bool lane_packs = !packed_program->lane_packed().empty() && same_parameters(program, *packed_program);
  for (const auto& [leaf, size] : packed_program->lane_packed()) {
    std::int64_t elements = 1;
    for (const auto d : leaf->shape) elements *= d;
    lane_packs = lane_packs && elements % vec == 0;
  }
  const ElementwiseProgram& vector_program = lane_packs ? *packed_program : program;
  std::vector<std::string> vector_conditions;
  for (const auto& [leaf, size] : vector_program.lane_packed()) {  // none without lane packs
    prepared[leaf->pointer] = prefix + leaf->pointer;
    aligned.push_back(prefix + leaf->pointer);
    vector_conditions.push_back(size + " % " + std::to_string(vec) + " == 0");
  }

  std::vector<std::string> dtypes = program.dtypes();
  dtypes.push_back(root->meta->dtype);
  std::string params;
  for (const auto& parameter : program.kernel_parameters()) params += parameter.declaration + ", ";
  std::map<std::string, std::string, std::less<>> values = {
      {"kernel_name", kernel},
      {"includes", includes_for(dtypes)},
      {"index_t", program.index_type()},
      {"out_t", out_type->cuda_type},
      {"vec", std::to_string(vec)},
      {"functions", device_helpers(program.helpers())},
      {"element_params", program.element_parameters()},
      {"body", join_lines(program.body(), 2)},
      {"result", result},
      {"params", params},
      {"vector_loads", program.vector_loads("v")},
      {"lane_args", program.lane_arguments("k")},
      {"element_args", program.element_arguments("i")},
  };

  Replacement replacement;
  replacement.recipe = "s3_elementwise_fusion";
  replacement.space = knowledge::Space::S3;
  replacement.covered = group.members;
  // A rotation the kernel reads in place (rotate_half's cat of slices) is not
  // computed by torch any more, unless something else reads it.
  std::set<std::string> with_absorbed = group.members;
  with_absorbed.insert(program.absorbed().begin(), program.absorbed().end());
  const bool absorbed_only_here = std::all_of(program.absorbed().begin(), program.absorbed().end(), [&](const auto& name) {
    const graph::Node* node = graph.find(name);
    return node && std::all_of(node->users.begin(), node->users.end(),
                               [&](const std::string& user) { return with_absorbed.count(user) > 0; });
  });
  if (absorbed_only_here) replacement.covered = with_absorbed;
  replacement.produces = group.root;
  replacement.description = op_list(graph, replacement.covered) + " fused into one elementwise kernel" +
                            (reordered ? " on " + layout.format.substr(6) + " memory" : "") + " (" +
                            std::to_string(vec * widest) + "-byte vector loads when aligned" +
                            (float_intermediates ? "; intermediates in float, rounded once when stored" : "") + ")";
  // Within the dtype's rounding of eager, not equal to it: the proposer also offers the rounding kernel.
  replacement.risky = float_intermediates;
  auto vector_values = values;
  vector_values["kernel_name"] = kernel + "_vec";
  vector_values["functions"] = device_helpers(vector_program.helpers());
  vector_values["element_params"] = vector_program.element_parameters();
  vector_values["body"] = join_lines(vector_program.body(), 2);
  vector_values["result"] = lane_packs ? packed_result : result;
  vector_values["vector_loads"] = vector_program.vector_loads("v");
  vector_values["lane_args"] = vector_program.lane_arguments("k");
  vector_values["element_args"] = vector_program.element_arguments("i");
  replacement.kernels.push_back(
      {kernel + "_vec", fill_kernel_template(*options.knowledge, "elementwise_vectorized.cu", vector_values), {}});
  replacement.kernels.push_back({kernel, fill_kernel_template(*options.knowledge, "elementwise_fusion.cu", values), {}});

  const std::vector<const ElementwiseProgram*> programs = {&program};
  auto& s = replacement.statements;
  s.push_back(prefix + "shape = " + broadcast_shape(program, root->meta->shape));
  if (reordered) {
    std::string order;
    for (const auto d : layout.order) order += (order.empty() ? "" : ", ") + std::to_string(d);
    s.push_back(prefix + "memory_shape = torch.Size([" + prefix + "shape[d] for d in (" + order + ")])");
  }
  if (auto check = dtype_check(programs, kernel); !check.empty()) s.push_back(check);
  for (const auto& check : program.checks()) s.push_back(check);
  s.push_back(group.root + " = torch.empty(" + prefix + "shape, dtype=" +
              output_dtype(programs, root->meta->dtype, options.allowed_precisions) +
              ", device=" + output_device(programs) + (reordered ? ", memory_format=" + layout.format : "") + ")");
  s.push_back(prefix + "n = " + group.root + ".numel()");
  if (!program_options.index64)
    s.push_back("assert " + prefix + "n < 2**31, \"kernel " + kernel + " indexes with 32 bits\"");
  for (const auto& leaf : program.leaves())
    if (leaf.full_size)
      s.push_back(prefix + leaf.pointer + " = " + leaf.python + ".contiguous(" +
                  (reordered ? "memory_format=" + layout.format : "") + ")");
    else if (prepared.count(leaf.pointer))
      s.push_back(prefix + leaf.pointer + " = " + leaf.python + ".contiguous()");
  std::string alignment = "(";
  for (const auto& name : aligned) alignment += name + ".data_ptr() | ";
  alignment += group.root + ".data_ptr()) % 16 == 0";
  for (const auto& condition : vector_conditions) alignment += " and " + condition;
  s.push_back(prefix + "vec = " + alignment);
  const std::string arguments =
      join_arguments({launch_arguments(program, prepared), group.root, "nvrtc_runtime.int64(" + prefix + "n)"});
  s.push_back("(_kernel(\"" + kernel + "_vec\") if " + prefix + "vec else _kernel(\"" + kernel + "\"))(_grid((" +
              prefix + "n + " + std::to_string(vec - 1) + ") // " + std::to_string(vec) + " if " + prefix + "vec else " +
              prefix + "n, " + std::to_string(kBlock) + ", " + std::to_string(kBlocksPerSm) + "), " +
              std::to_string(kBlock) + ", " + arguments + ")");
  return replacement;
}

std::vector<Replacement> find_elementwise_fusions(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                  const KernelRewriteOptions& options,
                                                  std::vector<SkippedRewrite>& skipped) {
  // Elementwise ops the builder cannot express exactly end groups; say which and why.
  for (const auto& node : graph.nodes) {
    if (covered.count(node.name)) continue;
    try {
      elementwise_formula(node, graph);
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  std::vector<Replacement> out;
  for (const auto& group : elementwise_groups(graph, covered)) {
    if (group.computing_ops < options.min_elementwise_ops) continue;
    try {
      Replacement exact = fuse_elementwise_group(graph, group, options);
      try {
        out.push_back(fuse_elementwise_group(graph, group, options, {}, nullptr, true));
      } catch (const Unsupported&) {
        // Nothing of half or bfloat16 precision in between: the one kernel is both variants.
      }
      out.push_back(std::move(exact));
    } catch (const Unsupported& e) {
      skipped.push_back({group.root, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
