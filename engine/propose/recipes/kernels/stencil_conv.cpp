#include "engine/propose/recipes/kernels/stencil_conv.h"

#include <algorithm>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"

#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
#include "engine/propose/recipes/kernels/stencil_operands.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

// F.pad(x, pads, mode) whose only user is the conv: folded into the stencil
// (its amounts added to the conv's padding, its mode the kernel's boundary).
struct FoldedPad {
  const graph::Node* node = nullptr;
  const graph::Node* input = nullptr;
  std::vector<std::int64_t> amounts;  // per spatial dim, outermost first (z, y, x)
  StencilBoundary boundary = StencilBoundary::Zeros;
};

std::optional<FoldedPad> folded_pad(const graph::OpGraph& graph, const graph::Node& pad, const graph::Node& conv, int dims) {
  if (!is_call(pad, "pad", "torch.nn.functional.pad") || !only_user(pad, conv) || !passes_only(pad, 4, {"mode", "value"}))
    return std::nullopt;
  const graph::Node* input = argument_node(graph, pad, 0, "input");
  const auto pads = int_list(argument(pad, 1, "pad"));
  if (!input || !input->meta || !pads || pads->size() != 2 * static_cast<std::size_t>(dims)) return std::nullopt;
  FoldedPad out{&pad, input, {}, StencilBoundary::Zeros};
  // F.pad lists (before, after) pairs from the last dim inwards; a stencil pads each dim alike on both sides.
  for (int d = dims - 1; d >= 0; --d) {
    const auto before = (*pads)[2 * static_cast<std::size_t>(d)], after = (*pads)[2 * static_cast<std::size_t>(d) + 1];
    if (before != after || before < 0) return std::nullopt;
    out.amounts.push_back(before);
  }
  const graph::Arg* mode = argument(pad, 2, "mode");
  const std::string name = mode && mode->kind == graph::Arg::Kind::String ? mode->text : "constant";
  if (mode && mode->kind != graph::Arg::Kind::String && mode->kind != graph::Arg::Kind::None) return std::nullopt;
  const auto boundary = name == "zeros" ? std::nullopt : stencil_boundary_of_mode(name);  // F.pad has no "zeros"
  if (!boundary) return std::nullopt;
  if (name == "constant") {
    const graph::Arg* value = argument(pad, 3, "value");
    if (value && value->kind != graph::Arg::Kind::None && !is_constant(value, 0.0)) return std::nullopt;
  }
  out.boundary = *boundary;
  return out;
}

const char* boundary_name(StencilBoundary b) {
  switch (b) {
    case StencilBoundary::Replicate: return "replicate";
    case StencilBoundary::Reflect: return "reflect";
    case StencilBoundary::Circular: return "circular";
    case StencilBoundary::Zeros: break;
  }
  return "zeros";
}

// The pad the conv reads, when it folds into the stencil.
std::optional<FoldedPad> pad_of(const graph::OpGraph& graph, const graph::Node& node) {
  const int dims = node.kind == "conv3d" ? 3 : 2;
  const graph::Node* input = argument_node(graph, node, 0, "input");
  return input ? folded_pad(graph, *input, node, dims) : std::nullopt;
}

// The weight's values, when the capture read them (a buffer built in
// __init__): the kernel compiles in only the taps some channel uses, and, when
// every channel has the same coefficients, the coefficients as literals. A
// 7-point Laplacian written as a 3x3x3 conv then reads 7 points, not 27.
struct FixedCoefficients {
  std::vector<std::size_t> kept;       // indexes of the conv's taps with a nonzero coefficient in some channel
  // Per output of a group, per kept tap, when every group has the same ones; else empty.
  std::vector<std::vector<double>> shared;
  std::vector<double> all;             // every value of the weight, flattened, for the forward's check
};

// `channels` groups of `per_group` outputs, `taps` coefficients each (the weight's [channels * per_group, 1, k...]).
std::optional<FixedCoefficients> fixed_coefficients(const graph::Node& weight, std::int64_t channels,
                                                    std::int64_t per_group, std::size_t taps) {
  const auto& values = weight.facts.values;
  const auto rows = static_cast<std::size_t>(channels * per_group);
  if (!values || values->size() != rows * taps) return std::nullopt;
  FixedCoefficients out;
  out.all = *values;
  bool shared = true;
  for (std::size_t t = 0; t < taps; ++t) {
    bool used = false;
    for (std::size_t r = 0; r < rows; ++r) {
      const double v = (*values)[r * taps + t];
      used = used || v != 0.0;
      shared = shared && v == (*values)[(r % static_cast<std::size_t>(per_group)) * taps + t];
    }
    if (used) out.kept.push_back(t);
  }
  if (out.kept.empty()) return std::nullopt;  // all zeros: nothing a stencil gains
  if (shared) {
    out.shared.resize(static_cast<std::size_t>(per_group));
    for (std::size_t m = 0; m < out.shared.size(); ++m)
      for (const std::size_t t : out.kept) out.shared[m].push_back((*values)[m * taps + t]);
  }
  return out;
}

// A conv with several outputs per group (a Sobel x / y pair per field) read only as channel-strided
// slices conv[:, m::M], all by one elementwise group (sqrt(gx * gx + gy * gy)): the stencil kernel
// computes the group from its M accumulators, and only the group's result reaches memory.
struct CombinedOutputs {
  ElementwiseGroup group;
  std::vector<const graph::Node*> slices;  // slices[m] reads output m of every group
};

// The m of conv[:, m::M] (a getitem of a full first dim and a slice starting at m < M with step M), or -1.
int strided_channel(const graph::Node& item, std::int64_t per_group) {
  if (item.kind != "getitem" || item.args.size() != 2 || item.args[1].kind != graph::Arg::Kind::List) return -1;
  const auto& items = item.args[1].items;
  if (items.size() < 2) return -1;
  auto full = [](const graph::Arg& a) {
    return a.kind == graph::Arg::Kind::Slice && a.items.size() == 3 &&
           std::all_of(a.items.begin(), a.items.end(), [](const graph::Arg& b) { return b.kind == graph::Arg::Kind::None; });
  };
  for (std::size_t k = 0; k < items.size(); ++k)
    if (k != 1 && !full(items[k])) return -1;
  const graph::Arg& channel = items[1];
  if (channel.kind != graph::Arg::Kind::Slice || channel.items.size() != 3) return -1;
  const graph::Arg &start = channel.items[0], &stop = channel.items[1], &step = channel.items[2];
  if (stop.kind != graph::Arg::Kind::None || !step.is_number() || !step.is_integer || step.number != static_cast<double>(per_group))
    return -1;
  const double m = start.kind == graph::Arg::Kind::None ? 0.0 : (start.is_number() && start.is_integer ? start.number : -1.0);
  return m >= 0 && m < static_cast<double>(per_group) ? static_cast<int>(m) : -1;
}

std::optional<CombinedOutputs> combined_outputs(const graph::OpGraph& graph, const graph::Node& conv, std::int64_t per_group,
                                                const std::set<std::string>& covered) {
  CombinedOutputs out;
  out.slices.assign(static_cast<std::size_t>(per_group), nullptr);
  for (const auto& user : conv.users) {
    const graph::Node* item = graph.find(user);
    const int m = item ? strided_channel(*item, per_group) : -1;
    if (m < 0 || out.slices[static_cast<std::size_t>(m)] || covered.count(user)) return std::nullopt;
    out.slices[static_cast<std::size_t>(m)] = item;
  }
  if (std::any_of(out.slices.begin(), out.slices.end(), [](const graph::Node* n) { return n == nullptr; })) return std::nullopt;
  const auto groups = elementwise_groups(graph, covered);
  const graph::Node* first = out.slices[0];
  const ElementwiseGroup* group = first->users.empty() ? nullptr : group_with_member(groups, first->users.front());
  if (!group) return std::nullopt;
  for (const graph::Node* slice : out.slices)
    for (const auto& user : slice->users)
      if (!group->members.count(user)) return std::nullopt;
  const graph::Node* root = graph.find(group->root);
  if (!root || !root->meta || !first->meta || root->meta->shape != first->meta->shape) return std::nullopt;
  out.group = *group;
  return out;
}

// Whether a weight still holds the values its kernel compiled in: checked on
// the host once per in-place version of the tensor (a load_state_dict or a
// copy_ bumps it; a new tensor has no mark), so a call pays a getattr.
const char* const kHoldsValues = R"(def _hiera_holds(t, values):
    """Whether tensor t holds `values` (flattened), remembered per in-place version of t."""
    # An inference tensor keeps no version (reading it raises): checked every call.
    version = None if t.is_inference() else t._version
    seen = getattr(t, "_hiera_holds_seen", None)
    if version is not None and seen is not None and seen[0] == version and seen[1] is values:
        return seen[2]
    holds = t.numel() == len(values) and bool(torch.equal(t.detach().flatten().cpu(), torch.tensor(values, dtype=t.dtype)))
    if version is not None:
        t._hiera_holds_seen = (version, values, holds)
    return holds)";

// The elementwise group that takes the conv's whole output (u - conv(u), u + dt * conv(u) + f): computed in
// the stencil kernel's store, so only its result reaches memory. The conv's own input, when the output has its
// shape, is the centre tap; other tensors of the output's shape are point fields (the scalar kernels'; the
// vec4 kernel has four outputs a thread and no point accessor).
struct StencilEpilogue {
  ElementwiseGroup group;
  bool reads_centre = false;  // the group reads the conv's input at the output point
  StencilFields fields;
};

std::optional<StencilEpilogue> stencil_epilogue(const graph::OpGraph& graph, const graph::Node& conv,
                                                const graph::Node& input, const std::set<std::string>& covered) {
  const auto groups = elementwise_groups(graph, covered);
  const ElementwiseGroup* group = epilogue_group(graph, conv, groups);
  if (!group) return std::nullopt;
  const graph::Node* root = graph.find(group->root);
  StencilEpilogue out;
  out.group = *group;
  std::vector<std::string> others;
  for (const auto& leaf : stencil_group_leaves(graph, *group)) {
    if (leaf == conv.name) continue;
    if (leaf == input.name && input.meta && input.meta->shape == conv.meta->shape) {
      out.reads_centre = true;
      continue;
    }
    others.push_back(leaf);
  }
  try {
    out.fields = StencilFields(graph, *root, others);
  } catch (const Unsupported&) {
    return std::nullopt;  // it reads something not at the output point: a kernel of its own
  }
  return out;
}

// `variant` DirectVec4 asks for a 2D conv's vec4 kernel over its planes (the direct kernel its fallback);
// a 3D conv's Direct candidate has the vec4 kernel in it where it applies, unless `scalar_only`.
Replacement build(const graph::OpGraph& graph, const graph::Node& node, const KernelRewriteOptions& options,
                  StencilVariant variant, const std::set<std::string>& covered, bool scalar_only = false) {
  const int dims = node.kind == "conv3d" ? 3 : 2;
  const bool planes = variant == StencilVariant::DirectVec4;
  if (planes && dims != 2) throw Unsupported(node.name + ": a 3D conv has the vec4 kernel in its direct candidate");
  const graph::Arg* input_arg = argument(node, 0, "input");
  const graph::Arg* weight_arg = argument(node, 1, "weight");
  const graph::Node* input = input_arg ? graph.producer(*input_arg) : nullptr;
  const std::optional<FoldedPad> pad = pad_of(graph, node);
  if (pad) input = pad->input;
  const graph::Node* weight = weight_arg ? graph.producer(*weight_arg) : nullptr;
  if (!input || !input->meta || !weight || !weight->meta || !node.meta) throw Unsupported(node.name + ": operands are not tensors");
  const auto& in_shape = input->meta->shape;
  const auto& w_shape = weight->meta->shape;
  if (in_shape.size() != static_cast<std::size_t>(dims) + 2 || w_shape.size() != static_cast<std::size_t>(dims) + 2)
    throw Unsupported(node.name + ": an unbatched or malformed convolution");
  const std::int64_t groups = static_cast<std::int64_t>(number_argument(node, 6, "groups").value_or(1));
  const std::int64_t channels = in_shape[1];
  // One input channel per group, each with `per_group` outputs (a depthwise conv, or a multiplier of it).
  const std::int64_t per_group = groups > 0 ? w_shape[0] / groups : 0;
  if (w_shape[1] != 1 || groups != channels || per_group < 1 || per_group * groups != w_shape[0]) return {};  // a real conv
  std::optional<CombinedOutputs> combined;
  if (per_group > 1) {
    combined = combined_outputs(graph, node, per_group, covered);
    if (!combined)
      throw Unsupported(node.name + ": " + std::to_string(per_group) +
                        " outputs per group, not read as channel slices by one elementwise group");
  }
  // Fixed coefficients: a buffer (persistent or not) or a constant the
  // constructor or the trace made. The kernel reads them on the device, so
  // their values need not be known here; learned weights are the depthwise kernel's (depthwise_conv.h).
  if (weight->op != "get_attr" || graph.parameters.count(weight->target)) {
    if (dims == 2) return {};
    throw Unsupported(node.name + ": learned weights (not a buffer or constant): only a 2D depthwise conv has a kernel for them");
  }
  for (auto s : per_dim_argument(node, 3, "stride", dims, 1))
    if (s != 1) throw Unsupported(node.name + ": stride " + std::to_string(s));
  for (auto d : per_dim_argument(node, 5, "dilation", dims, 1))
    if (d != 1) throw Unsupported(node.name + ": dilation " + std::to_string(d));
  std::vector<std::int64_t> padding;
  if (const auto mode = argument(node, 4, "padding"); mode && mode->kind == graph::Arg::Kind::String) {
    padding = padding_of_mode(node, mode->text, std::vector<std::int64_t>(w_shape.begin() + 2, w_shape.end()));
  } else {
    padding = per_dim_argument(node, 4, "padding", dims, 0);
  }
  if (const auto mode = argument(node, 7, "padding_mode"); mode && mode->kind == graph::Arg::Kind::String && mode->text != "zeros")
    throw Unsupported(node.name + ": padding mode " + mode->text);
  const StencilBoundary boundary = pad ? pad->boundary : StencilBoundary::Zeros;
  if (pad) {
    for (std::size_t d = 0; d < padding.size(); ++d) {
      if (boundary != StencilBoundary::Zeros && padding[d] != 0)
        throw Unsupported(node.name + ": a " + boundary_name(boundary) + " pad and the conv's own zero padding");
      padding[d] += pad->amounts[d];
    }
  }
  if (boundary != StencilBoundary::Zeros && variant == StencilVariant::SharedRing)
    throw Unsupported(node.name + ": only the direct stencil kernels read " + boundary_name(boundary) + " boundaries");
  const graph::Arg* bias_arg = argument(node, 2, "bias");
  const graph::Node* bias = bias_arg ? graph.producer(*bias_arg) : nullptr;
  if (bias_arg && bias_arg->kind != graph::Arg::Kind::None && (!bias || !bias->meta))
    throw Unsupported(node.name + ": a bias that is not a tensor");
  if (combined && bias) throw Unsupported(node.name + ": a bias on a conv of several outputs per group");
  const std::optional<StencilEpilogue> epilogue = combined ? std::nullopt : stencil_epilogue(graph, node, *input, covered);
  if (planes && epilogue && !epilogue->fields.empty())
    throw Unsupported(epilogue->group.root + ": the vec4 kernel reads no other fields");
  // What the kernel writes: the conv's output, or the combining group's, or the epilogue's.
  const graph::Node& result = combined ? *graph.find(combined->group.root) : epilogue ? *graph.find(epilogue->group.root) : node;
  if (!result.meta || !kernel_dtype(result.meta->dtype) || !is_float_dtype(result.meta->dtype))
    throw Unsupported(result.name + ": a combination of the conv's outputs that is not a float tensor");
  for (const graph::Node* t : {input, weight, bias})
    if (t && !is_float_dtype(t->meta->dtype)) throw Unsupported(node.name + ": a " + t->meta->dtype + " operand");
  if (!is_float_dtype(node.meta->dtype)) throw Unsupported(node.name + " is " + node.meta->dtype);

  // Tap k = (kz, ky, kx) reads input (z + kz - pad_z, ...), weight[channel][k].
  const std::vector<std::int64_t> kernel_size(w_shape.begin() + 2, w_shape.end());
  std::vector<StencilTap> taps;
  std::vector<std::int64_t> out_shape = {in_shape[0], in_shape[1]};
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    out_shape.push_back(in_shape[2 + i] + 2 * padding[i] - kernel_size[i] + 1);
  }
  std::vector<std::int64_t> conv_shape = out_shape;
  conv_shape[1] = w_shape[0];
  if (conv_shape != node.meta->shape) throw Unsupported(node.name + ": output shape differs from the convolution's");
  if (out_shape != result.meta->shape) throw Unsupported(result.name + ": the combination is broadcast beyond a group's outputs");
  const std::int64_t kz_n = dims == 3 ? kernel_size[0] : 1;
  const std::int64_t ky_n = kernel_size[static_cast<std::size_t>(dims) - 2], kx_n = kernel_size[static_cast<std::size_t>(dims) - 1];
  const std::int64_t pz = dims == 3 ? padding[0] : 0;
  const std::int64_t py = padding[static_cast<std::size_t>(dims) - 2], px = padding[static_cast<std::size_t>(dims) - 1];
  for (std::int64_t kz = 0; kz < kz_n; ++kz)
    for (std::int64_t ky = 0; ky < ky_n; ++ky)
      for (std::int64_t kx = 0; kx < kx_n; ++kx)
        taps.push_back({static_cast<int>(kz - pz), static_cast<int>(ky - py), static_cast<int>(kx - px)});
  if (taps.size() > 343) throw Unsupported(node.name + ": " + std::to_string(taps.size()) + " taps are too many registers");

  const KernelDtype& w_type = *kernel_dtype(weight->meta->dtype);
  const KernelDtype& b_type = *kernel_dtype(bias ? bias->meta->dtype : weight->meta->dtype);
  const std::optional<FixedCoefficients> fixed = fixed_coefficients(*weight, channels, per_group, taps.size());
  // Over planes the vec4 kernel's batch is the plane, so it knows each plane's channel (its weights and bias).
  if (planes && !stencil_vec4_applies(3, input->meta->dtype, result.meta->dtype, in_shape.back()))
    throw Unsupported(node.name + ": the vec4 kernel needs float32 rows a multiple of 4 floats wide");
  // `compiled_in`: the kernel of the fixed coefficients (only their taps; literals when shared), else the one
  // that reads all of them on the device.
  auto make_kernel = [&](StencilVariant kind, const std::string& name, bool compiled_in) {
    std::vector<std::size_t> index;  // the conv's tap each kernel tap is
    if (compiled_in) {
      index = fixed->kept;
    } else {
      for (std::size_t t = 0; t < taps.size(); ++t) index.push_back(t);
    }
    const bool literals = compiled_in && !fixed->shared.empty();
    std::vector<StencilTap> kernel_taps;
    for (const std::size_t t : index) kernel_taps.push_back(taps[t]);
    // The epilogue's read of the input at the output point: a tap with no coefficient, after the conv's.
    const bool centre_added = epilogue && epilogue->reads_centre &&
                              std::find(kernel_taps.begin(), kernel_taps.end(), StencilTap{}) == kernel_taps.end();
    if (centre_added) kernel_taps.push_back(StencilTap{});
    StencilKernel kernel;
    kernel.name = name;
    kernel.variant = kind;
    kernel.in_dtype = input->meta->dtype;
    kernel.out_dtype = result.meta->dtype;
    // The vec4 kernel is 3D: over a 2D conv's planes it marches down each plane's rows (its z).
    const bool over_planes = kind == StencilVariant::DirectVec4 && dims == 2;
    if (over_planes) {
      kernel_taps = stencil_vec4_row_march(kernel, kernel_taps, in_shape[2], in_shape[3], out_shape[2], out_shape[3]);
    } else {
      kernel.geometry = stencil_geometry(dims, kernel_taps);
    }
    kernel.boundary = boundary;
    if (kind != StencilVariant::SharedRing) kernel.geometry.tile_y = 8;  // 256 threads: no shared tile to amortise
    if (dims == 3) {
      for (std::size_t d = 0; d < 3; ++d)
        kernel.in_size[d] = in_shape[in_shape.size() - 3 + d], kernel.out_size[d] = out_shape[out_shape.size() - 3 + d];
    }
    kernel.extra_dtypes = {weight->meta->dtype};
    if (bias) kernel.extra_dtypes.push_back(bias->meta->dtype);
    kernel.extra_params = ", const " + w_type.cuda_type + "* __restrict__ weight, const " + b_type.cuda_type +
                          "* __restrict__ bias, int channels";
    // A group's outputs have the weight's rows channel * per_group .. + per_group - 1, contiguous.
    const std::string k = std::to_string(static_cast<std::int64_t>(taps.size()) * per_group);
    const std::string k_row = std::to_string(taps.size());
    const std::size_t n = index.size();
    const auto outputs = static_cast<std::size_t>(per_group);
    kernel.setup = "const int channel = (int)(batch % channels);\n";
    if (literals) {
      // The coefficients are literals: nothing to load but the bias.
    } else if (!compiled_in) {
      // The channel's coefficients into registers once (fully unrolled: constant indices keep them there).
      kernel.setup += "  float wgt[" + k + "];\n"
                      "#pragma unroll\n"
                      "  for (int k = 0; k < " + k + "; ++k) wgt[k] = static_cast<float>(weight[(long long)channel * " + k + " + k]);\n";
    } else {
      kernel.setup += "  float wgt[" + std::to_string(n * outputs) + "];\n";
      for (std::size_t m = 0; m < outputs; ++m)
        for (std::size_t j = 0; j < n; ++j)
          kernel.setup += "  wgt[" + std::to_string(m * n + j) + "] = static_cast<float>(weight[(long long)channel * " + k +
                          " + " + std::to_string(m * taps.size() + index[j]) + "]);\n";
    }
    if (combined) {
      // No bias (refused above); literals read no channel either.
      if (literals) kernel.setup.clear();
      if (!kernel.setup.empty() && kernel.setup.back() == '\n') kernel.setup.pop_back();
    } else {
      kernel.setup += "  const float bias_value = bias != nullptr ? static_cast<float>(bias[channel]) : 0.0f;";
    }
    // One accumulator per output of the group: acc, or acc0, acc1, ...
    auto acc = [&](std::size_t m) { return outputs == 1 ? std::string("acc") : "acc" + std::to_string(m); };
    auto wgt = [&](std::size_t m, std::size_t j) { return "wgt[" + std::to_string(m * n + j) + "]"; };
    // The vec4 kernel with literal coefficients adds each loaded plane into per-output sums (plane sums).
    const bool plane_sums = kind == StencilVariant::DirectVec4 && literals;
    if (plane_sums) {
      for (std::size_t m = 0; m < outputs; ++m) {
        StencilSum sum{acc(m), {}};
        for (std::size_t j = 0; j < n; ++j)
          if (fixed->shared[m][j] != 0.0) sum.terms.push_back({kernel_taps[j], float_literal(fixed->shared[m][j])});
        kernel.sums.push_back(std::move(sum));
      }
      if (epilogue && epilogue->reads_centre) kernel.sums.push_back({"centre", {{StencilTap{}, ""}}});
    }
    for (std::size_t m = 0; m < outputs && !plane_sums; ++m) kernel.update_body.push_back("float " + acc(m) + " = 0.0f;");
    // A zero coefficient (20 of the 27 of a 7-point Laplacian written as a 3x3x3 conv) skips its
    // read: the test is uniform across the block, so it costs no divergence.
    for (std::size_t j = 0; j < n && !plane_sums; ++j) {
      const std::string tap = kind == StencilVariant::DirectVec4 ? vec4_tap_accessor(kernel.geometry, kernel_taps[j])
                                                                 : tap_accessor(kernel.geometry, kernel_taps[j]);
      for (std::size_t m = 0; m < outputs; ++m) {
        if (literals) {
          if (fixed->shared[m][j] != 0.0)
            kernel.update_body.push_back(acc(m) + " += " + float_literal(fixed->shared[m][j]) + " * " + tap + ";");
        } else {
          kernel.update_body.push_back("if (" + wgt(m, j) + " != 0.0f) " + acc(m) + " += " + wgt(m, j) + " * " + tap + ";");
        }
      }
    }
    if (combined) {
      // The combining group over the accumulators: conv[:, m::M] is acc<m>.
      ProgramOptions program_options;
      program_options.shape = result.meta->shape;
      program_options.shape_python = "_" + node.name + "_shape";
      ElementwiseProgram program(graph, combined->group.members, program_options);
      for (std::size_t m = 0; m < outputs; ++m) program.bind(combined->slices[m]->name, acc(m));
      kernel.update_result = program.value(result.name);
      if (!program.leaves().empty())
        throw Unsupported(result.name + ": the combination also reads " + program.leaves()[0].python);
      for (const auto& line : program.body()) kernel.update_body.push_back(line);
      kernel.helpers = program.helpers();
    } else if (epilogue) {
      // The epilogue group over the conv's value and, at the output point, its input and other fields.
      ProgramOptions program_options;
      program_options.shape = result.meta->shape;
      program_options.shape_python = "_" + node.name + "_shape";
      ElementwiseProgram program(graph, epilogue->group.members, program_options);
      kernel.update_body.push_back("const float conv_value = acc + bias_value;");
      program.bind(node.name, "conv_value");
      if (epilogue->reads_centre)
        program.bind(input->name, plane_sums                          ? std::string("centre")
                                  : kind == StencilVariant::DirectVec4 ? vec4_tap_accessor(kernel.geometry, StencilTap{})
                                                                       : tap_accessor(kernel.geometry, StencilTap{}));
      epilogue->fields.bind(kernel, program);
      kernel.update_result = program.value(result.name);
      if (!program.leaves().empty())
        throw Unsupported(result.name + ": the epilogue also reads " + program.leaves()[0].python);
      for (const auto& line : program.body()) kernel.update_body.push_back(line);
      kernel.helpers = program.helpers();
    } else {
      kernel.update_result = "acc + bias_value";
    }
    if (kind == StencilVariant::DirectVec4 && !literals) {
      // A row whose coefficients are all zero (the corners of a Laplacian in 27) is not read.
      for (const auto& row : kernel.geometry.rows) {
        std::string guard;
        for (std::size_t j = 0; j < n; ++j)
          if (kernel_taps[j].oz == row.oz && kernel_taps[j].oy == row.oy)
            for (std::size_t m = 0; m < outputs; ++m) guard += (guard.empty() ? "" : " || ") + (wgt(m, j) + " != 0.0f");
        // The epilogue reads the centre whatever the coefficients: that row is always read.
        if (epilogue && epilogue->reads_centre && row.oz == 0 && row.oy == 0) guard.clear();
        kernel.row_guards.push_back(guard);
      }
    }
    return kernel;
  };
  // 3D: the vec4 kernel maps every border mode too (each plane a load reads, each row once a thread).
  const bool vec4 = planes || (variant == StencilVariant::Direct && !scalar_only && (!epilogue || epilogue->fields.empty()) &&
                                stencil_vec4_applies(dims, input->meta->dtype, result.meta->dtype, in_shape.back()));

  Replacement replacement;
  const bool direct = variant != StencilVariant::SharedRing;
  replacement.recipe = dims == 3 ? (vec4 ? "s3_stencil3d_vec4_direct" : direct ? "s3_stencil3d_direct_l1" : "s3_stencil3d_27pt")
                       : planes  ? "s3_stencil2d_vec4_direct"
                                 : (direct ? "s3_stencil2d_direct_l1" : "s3_stencil2d_shared_tile");
  replacement.space = knowledge::Space::S3;
  replacement.produces = result.name;
  replacement.covered = {node.name};
  if (pad) replacement.covered.insert(pad->node->name);
  if (epilogue) replacement.covered.insert(epilogue->group.members.begin(), epilogue->group.members.end());
  std::string combination;
  if (combined) {
    for (const graph::Node* slice : combined->slices) replacement.covered.insert(slice->name);
    replacement.covered.insert(combined->group.members.begin(), combined->group.members.end());
    combination = ", its " + std::to_string(per_group) + " outputs per group combined into " + result.name +
                  " in the kernel (only that is written)";
  }
  std::size_t nonzero = 0;  // the literals compiled in
  if (fixed)
    for (const auto& output : fixed->shared) nonzero += static_cast<std::size_t>(std::count_if(output.begin(), output.end(), [](double v) { return v != 0.0; }));
  const std::string reads = !fixed ? "coefficients read on the device"
                            : !fixed->shared.empty()
                                ? "the buffer's " + std::to_string(nonzero) + " nonzero coefficients compiled in"
                                : "the " + std::to_string(fixed->kept.size()) + " taps the buffer uses, coefficients read on the device";
  const std::string shape_of_groups = per_group > 1 ? "one input channel and " + std::to_string(per_group) + " outputs per group"
                                      : channels == 1 ? "one channel"
                                                      : "one channel per group";
  replacement.description = node.kind + " with " + shape_of_groups + " and " + std::to_string(taps.size()) +
                            (per_group > 1 ? " fixed coefficients an output" : " fixed coefficients") + " as a " + std::to_string(dims) +
                            "D stencil kernel (" + reads +
                            (fixed ? ", checked against the buffer once per change of it" : "") +
                            (pad ? std::string(", the ") + boundary_name(boundary) + " pad folded in" : std::string()) +
                            combination +
                            (epilogue ? ", with " + std::to_string(epilogue->group.computing_ops) + " elementwise op" +
                                            (epilogue->group.computing_ops == 1 ? "" : "s") + " after it in its store" +
                                            epilogue->fields.described()
                                      : std::string()) +
                            (vec4     ? ", four outputs per thread from 16-byte loads, neighbours through the caches)"
                             : direct ? ", neighbours read through the caches)"
                                      : ")");
  // Kernels: the fixed coefficients' (when known) and the one that reads any weight (the launch's fallback when
  // the buffer no longer holds them); each as the vec4 kernel plus the scalar one for misaligned rows.
  struct Kernels {
    StencilKernel main, vec4;
  };
  auto kernels_for = [&](bool compiled_in, const std::string& name) {
    Kernels out{make_kernel(planes ? StencilVariant::Direct : variant, name, compiled_in), {}};
    if (vec4) out.vec4 = make_kernel(StencilVariant::DirectVec4, name + "_vec4", compiled_in);
    return out;
  };
  const std::string base_name = "stencil_" + node.name;
  std::vector<Kernels> sets;
  if (fixed) sets.push_back(kernels_for(true, base_name));
  sets.push_back(kernels_for(false, fixed ? base_name + "_weights" : base_name));
  for (const auto& set : sets) {
    if (!set.vec4.name.empty()) replacement.kernels.push_back(stencil_source(*options.knowledge, set.vec4));
    replacement.kernels.push_back(stencil_source(*options.knowledge, set.main));
  }
  // The reference is a convolution, which cuDNN computes with contracted products (FMAs) in an order of its own:
  // the proposer's --fmad=false (eager's rounding op by op, for stencils spelled as slices) would only double the
  // kernel's arithmetic, and a 5x5 or 27-point stencil's four outputs a thread are that arithmetic's.
  for (auto& k : replacement.kernels) k.options.push_back("--fmad=true");
  const StencilKernel& kernel = sets.back().main;

  const std::string prefix = "_" + node.name + "_";
  auto& s = replacement.statements;
  s.push_back(prefix + "x = " + input->name + ".contiguous()");
  std::string check = "assert " + prefix + "x.dtype == " + kernel_dtype(input->meta->dtype)->torch_name + " and " +
                      weight->name + ".dtype == " + w_type.torch_name;
  if (bias) check += " and " + bias->name + ".dtype == " + b_type.torch_name;
  const StencilFields no_fields;
  const StencilFields& fields = epilogue ? epilogue->fields : no_fields;
  s.push_back(check + ", \"kernel " + kernel.name + " expects " + input->meta->dtype + " " + input->name + ", " +
              weight->meta->dtype + " " + weight->name + (bias ? ", " + bias->meta->dtype + " " + bias->name : "") + "\"");
  std::string shape = "torch.Size([" + prefix + "x.shape[0], " + prefix + "x.shape[1]";
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    shape += ", " + python_plus(prefix + "x.shape[" + std::to_string(2 + d) + "]", 2 * padding[i] - kernel_size[i] + 1);
  }
  s.push_back(prefix + "shape = " + shape + "])");
  if (!fields.empty())
    s.push_back("assert " + fields.checks(prefix + "shape") + ", \"kernel " + kernel.name + " expects " + fields.expected() + "\"");
  const std::string out_dtype = result.meta->dtype == input->meta->dtype ? prefix + "x.dtype"
                                                                         : kernel_dtype(result.meta->dtype)->torch_name;
  s.push_back(result.name + " = torch.empty(" + prefix + "shape, dtype=" + out_dtype + ", device=" + prefix + "x.device)");
  std::int64_t tiles = in_shape[0] * in_shape[1];
  tiles *= (out_shape.back() + kernel.geometry.tile_x - 1) / kernel.geometry.tile_x;
  tiles *= (out_shape[out_shape.size() - 2] + kernel.geometry.tile_y - 1) / kernel.geometry.tile_y;
  const int z_chunk = dims == 3 ? stencil_z_chunk(out_shape[2], tiles, options.sm_count,
                                                  kernel.geometry.tile_x * kernel.geometry.tile_y)
                                : 0;
  const std::string extra = ", " + weight->name + ".contiguous(), " + (bias ? bias->name + ".contiguous()" : "None") +
                            ", " + prefix + "x.shape[1]" + fields.arguments();
  auto launch = [&](const Kernels& set) {
    const std::string& out = result.name;
    if (set.vec4.name.empty()) return stencil_launch(set.main, prefix + "x", out, prefix + "shape", extra, z_chunk);
    return planes ? stencil_launch_vec4_planes_or_direct(set.vec4, set.main, prefix + "x", out, prefix + "shape", extra)
                  : stencil_launch_vec4_or_direct(set.vec4, set.main, prefix + "x", out, prefix + "shape", extra, z_chunk);
  };
  if (fixed) {
    std::string values;
    for (const double v : fixed->all) values += (values.empty() ? "" : ", ") + python_float(v);
    const std::string name = "_" + node.name + "_coefficients";
    replacement.definitions.push_back(kHoldsValues);
    replacement.definitions.push_back(name + " = (" + values + ",)");
    s.push_back("(" + launch(sets.front()) + ") if _hiera_holds(" + weight->name + ", " + name + ") else (" +
                launch(sets.back()) + ")");
  } else {
    s.push_back(launch(sets.back()));
  }
  return replacement;
}

}  // namespace

std::vector<Replacement> find_conv_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                            const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if ((node.kind != "conv2d" && node.kind != "conv3d") || covered.count(node.name)) continue;
    if (node.op == "call_module") {
      // nn.Conv*d holds its weight as a learned parameter: depthwise_conv.h's, not a stencil's.
      continue;
    }
    try {
      // 2D: the vec4 kernel over the planes first, where it applies (stencil2d_01's slices reached 90% of
      // the DRAM bound with it on the H100, the scalar direct kernel of a replicate-padded conv 33%).
      auto vec4_planes = [&]() -> std::optional<Replacement> {
        if (node.kind != "conv2d") return std::nullopt;
        try {
          return build(graph, node, options, StencilVariant::DirectVec4, covered);
        } catch (const Unsupported&) {
          return std::nullopt;  // not float32 rows of 4 floats, or channels the planes kernel cannot tell apart
        }
      };
      // Every variant is built before `covered` takes the nodes (a combining group must still be free).
      if (const auto pad = pad_of(graph, node); pad && pad->boundary != StencilBoundary::Zeros) {
        // Only the direct kernels map taps outside the input through a boundary mode.
        Replacement direct = build(graph, node, options, StencilVariant::Direct, covered);
        if (direct.produces.empty()) continue;
        auto planes = vec4_planes();
        // A 3D border in the vec4 kernel is not yet timed on a GPU: the scalar direct kernel stays a candidate.
        std::optional<Replacement> scalar;
        if (direct.recipe == "s3_stencil3d_vec4_direct")
          scalar = build(graph, node, options, StencilVariant::Direct, covered, true);
        covered.insert(direct.covered.begin(), direct.covered.end());
        if (planes) out.push_back(std::move(*planes));
        out.push_back(std::move(direct));
        if (scalar) out.push_back(std::move(*scalar));
        continue;
      }
      Replacement replacement = build(graph, node, options, StencilVariant::SharedRing, covered);
      if (replacement.produces.empty()) continue;  // an ordinary convolution
      auto planes = vec4_planes();
      Replacement direct = build(graph, node, options, StencilVariant::Direct, covered);
      covered.insert(replacement.covered.begin(), replacement.covered.end());
      if (planes) out.push_back(std::move(*planes));
      // The direct-read variant goes first: on the H200 the shared-memory variants waited on their barriers.
      out.push_back(std::move(direct));
      out.push_back(std::move(replacement));
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
