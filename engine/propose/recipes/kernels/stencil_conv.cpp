#include "engine/propose/recipes/kernels/stencil_conv.h"

#include <optional>

#include "engine/propose/recipes/graph_queries.h"

#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
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
  if (name == "constant") {
    const graph::Arg* value = argument(pad, 3, "value");
    if (value && value->kind != graph::Arg::Kind::None && !is_constant(value, 0.0)) return std::nullopt;
  } else if (name == "replicate") {
    out.boundary = StencilBoundary::Replicate;
  } else if (name == "reflect") {
    out.boundary = StencilBoundary::Reflect;
  } else if (name == "circular") {
    out.boundary = StencilBoundary::Circular;
  } else {
    return std::nullopt;
  }
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
  std::vector<double> shared;          // per kept tap, when every channel has the same ones; else empty
  std::vector<double> all;             // every value of the weight, flattened, for the forward's check
};

std::optional<FixedCoefficients> fixed_coefficients(const graph::Node& weight, std::int64_t channels, std::size_t taps) {
  const auto& values = weight.facts.values;
  if (!values || values->size() != static_cast<std::size_t>(channels) * taps) return std::nullopt;
  FixedCoefficients out;
  out.all = *values;
  bool shared = true;
  for (std::size_t t = 0; t < taps; ++t) {
    bool used = false;
    for (std::int64_t c = 0; c < channels; ++c) {
      const double v = (*values)[static_cast<std::size_t>(c) * taps + t];
      used = used || v != 0.0;
      shared = shared && v == (*values)[t];
    }
    if (used) out.kept.push_back(t);
  }
  if (out.kept.empty()) return std::nullopt;  // all zeros: nothing a stencil gains
  if (shared)
    for (const std::size_t t : out.kept) out.shared.push_back((*values)[t]);
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

Replacement build(const graph::OpGraph& graph, const graph::Node& node, const KernelRewriteOptions& options,
                  StencilVariant variant) {
  const int dims = node.kind == "conv3d" ? 3 : 2;
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
  if (w_shape[1] != 1 || w_shape[0] != groups || groups != channels) return {};  // not one channel per group: a real conv
  // Fixed coefficients: a buffer (persistent or not) or a constant the
  // constructor or the trace made. The kernel reads them on the device, so
  // their values need not be known here; a learned parameter is cuDNN's job.
  if (weight->op != "get_attr" || graph.parameters.count(weight->target))
    throw Unsupported(node.name + ": the weight is not a buffer or constant (fixed coefficients)");
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
  if (boundary != StencilBoundary::Zeros && variant != StencilVariant::Direct)
    throw Unsupported(node.name + ": only the direct stencil kernels read " + boundary_name(boundary) + " boundaries");
  const graph::Arg* bias_arg = argument(node, 2, "bias");
  const graph::Node* bias = bias_arg ? graph.producer(*bias_arg) : nullptr;
  if (bias_arg && bias_arg->kind != graph::Arg::Kind::None && (!bias || !bias->meta))
    throw Unsupported(node.name + ": a bias that is not a tensor");
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
  if (out_shape != node.meta->shape) throw Unsupported(node.name + ": output shape differs from the convolution's");
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
  const std::optional<FixedCoefficients> fixed = fixed_coefficients(*weight, channels, taps.size());
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
    StencilKernel kernel;
    kernel.name = name;
    kernel.variant = kind;
    kernel.in_dtype = input->meta->dtype;
    kernel.out_dtype = node.meta->dtype;
    kernel.geometry = stencil_geometry(dims, kernel_taps);
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
    const std::string k = std::to_string(taps.size());
    const std::string n = std::to_string(index.size());
    kernel.setup = "const int channel = (int)(batch % channels);\n";
    if (literals) {
      // The coefficients are literals: nothing to load but the bias.
    } else if (!compiled_in) {
      // The channel's coefficients into registers once (fully unrolled: constant indices keep them there).
      kernel.setup += "  float wgt[" + k + "];\n"
                      "#pragma unroll\n"
                      "  for (int k = 0; k < " + k + "; ++k) wgt[k] = static_cast<float>(weight[(long long)channel * " + k + " + k]);\n";
    } else {
      kernel.setup += "  float wgt[" + n + "];\n";
      for (std::size_t j = 0; j < index.size(); ++j)
        kernel.setup += "  wgt[" + std::to_string(j) + "] = static_cast<float>(weight[(long long)channel * " + k + " + " +
                        std::to_string(index[j]) + "]);\n";
    }
    kernel.setup += "  const float bias_value = bias != nullptr ? static_cast<float>(bias[channel]) : 0.0f;";
    // A zero coefficient (20 of the 27 of a 7-point Laplacian written as a 3x3x3 conv) skips its
    // read: the test is uniform across the block, so it costs no divergence.
    kernel.update_body.push_back("float acc = 0.0f;");
    for (std::size_t j = 0; j < index.size(); ++j) {
      const std::string tap = kind == StencilVariant::DirectVec4 ? vec4_tap_accessor(kernel.geometry, kernel_taps[j])
                                                                 : tap_accessor(kernel.geometry, kernel_taps[j]);
      if (literals) {
        kernel.update_body.push_back("acc += " + float_literal(fixed->shared[j]) + " * " + tap + ";");
      } else {
        const std::string w = "wgt[" + std::to_string(j) + "]";
        kernel.update_body.push_back("if (" + w + " != 0.0f) acc += " + w + " * " + tap + ";");
      }
    }
    kernel.update_result = "acc + bias_value";
    if (kind == StencilVariant::DirectVec4 && !literals) {
      // A row whose coefficients are all zero (the corners of a Laplacian in 27) is not read.
      for (const auto& row : kernel.geometry.rows) {
        std::string guard;
        for (std::size_t j = 0; j < kernel_taps.size(); ++j)
          if (kernel_taps[j].oz == row.oz && kernel_taps[j].oy == row.oy)
            guard += (guard.empty() ? "" : " || ") + ("wgt[" + std::to_string(j) + "] != 0.0f");
        kernel.row_guards.push_back(guard);
      }
    }
    return kernel;
  };
  const bool vec4 = variant == StencilVariant::Direct && boundary == StencilBoundary::Zeros && stencil_vec4_applies(dims, input->meta->dtype, node.meta->dtype, in_shape.back());

  Replacement replacement;
  const bool direct = variant == StencilVariant::Direct;
  replacement.recipe = dims == 3 ? (vec4 ? "s3_stencil3d_vec4_direct" : direct ? "s3_stencil3d_direct_l1" : "s3_stencil3d_27pt")
                                 : (direct ? "s3_stencil2d_direct_l1" : "s3_stencil2d_shared_tile");
  replacement.space = knowledge::Space::S3;
  replacement.produces = node.name;
  replacement.covered = {node.name};
  if (pad) replacement.covered.insert(pad->node->name);
  const std::string reads = !fixed ? "coefficients read on the device"
                            : !fixed->shared.empty()
                                ? "the buffer's " + std::to_string(fixed->kept.size()) + " nonzero coefficients compiled in"
                                : "the " + std::to_string(fixed->kept.size()) + " taps the buffer uses, coefficients read on the device";
  replacement.description = node.kind + " with " + (channels == 1 ? "one channel" : "one channel per group") + " and " +
                            std::to_string(taps.size()) + " fixed coefficients as a " + std::to_string(dims) +
                            "D stencil kernel (" + reads +
                            (fixed ? ", checked against the buffer once per change of it" : "") +
                            (pad ? std::string(", the ") + boundary_name(boundary) + " pad folded in" : std::string()) +
                            (vec4     ? ", four outputs per thread from 16-byte loads, neighbours through the caches)"
                             : direct ? ", neighbours read through the caches)"
                                      : ")");
  // Kernels: the fixed coefficients' (when known) and the one that reads any weight (the launch's fallback when
  // the buffer no longer holds them); each as the vec4 kernel plus the scalar one for misaligned rows.
  struct Kernels {
    StencilKernel main, vec4;
  };
  auto kernels_for = [&](bool compiled_in, const std::string& name) {
    Kernels out{make_kernel(variant, name, compiled_in), {}};
    if (vec4) out.vec4 = make_kernel(StencilVariant::DirectVec4, name + "_vec4", compiled_in);
    return out;
  };
  const std::string base_name = "stencil_" + node.name;
  std::vector<Kernels> sets;
  if (fixed) sets.push_back(kernels_for(true, base_name));
  sets.push_back(kernels_for(false, fixed ? base_name + "_weights" : base_name));
  for (const auto& set : sets) {
    if (vec4) replacement.kernels.push_back(stencil_source(*options.knowledge, set.vec4));
    replacement.kernels.push_back(stencil_source(*options.knowledge, set.main));
  }
  const StencilKernel& kernel = sets.back().main;

  const std::string prefix = "_" + node.name + "_";
  auto& s = replacement.statements;
  s.push_back(prefix + "x = " + input->name + ".contiguous()");
  std::string check = "assert " + prefix + "x.dtype == " + kernel_dtype(input->meta->dtype)->torch_name + " and " +
                      weight->name + ".dtype == " + w_type.torch_name;
  if (bias) check += " and " + bias->name + ".dtype == " + b_type.torch_name;
  s.push_back(check + ", \"kernel " + kernel.name + " expects " + input->meta->dtype + " " + input->name + ", " +
              weight->meta->dtype + " " + weight->name + (bias ? ", " + bias->meta->dtype + " " + bias->name : "") + "\"");
  std::string shape = "torch.Size([" + prefix + "x.shape[0], " + prefix + "x.shape[1]";
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    shape += ", " + python_plus(prefix + "x.shape[" + std::to_string(2 + d) + "]", 2 * padding[i] - kernel_size[i] + 1);
  }
  s.push_back(prefix + "shape = " + shape + "])");
  s.push_back(node.name + " = torch.empty(" + prefix + "shape, dtype=" + prefix + "x.dtype, device=" + prefix + "x.device)");
  std::int64_t tiles = in_shape[0] * in_shape[1];
  tiles *= (out_shape.back() + kernel.geometry.tile_x - 1) / kernel.geometry.tile_x;
  tiles *= (out_shape[out_shape.size() - 2] + kernel.geometry.tile_y - 1) / kernel.geometry.tile_y;
  const int z_chunk = dims == 3 ? stencil_z_chunk(out_shape[2], tiles, options.sm_count,
                                                  kernel.geometry.tile_x * kernel.geometry.tile_y)
                                : 0;
  const std::string extra = ", " + weight->name + ".contiguous(), " + (bias ? bias->name + ".contiguous()" : "None") +
                            ", " + prefix + "x.shape[1]";
  auto launch = [&](const Kernels& set) {
    return vec4 ? stencil_launch_vec4_or_direct(set.vec4, set.main, prefix + "x", node.name, prefix + "shape", extra, z_chunk)
                : stencil_launch(set.main, prefix + "x", node.name, prefix + "shape", extra, z_chunk);
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
      // nn.Conv*d holds its weight as a learned parameter: cuDNN's job, not a stencil's.
      continue;
    }
    try {
      if (const auto pad = pad_of(graph, node); pad && pad->boundary != StencilBoundary::Zeros) {
        // Only the direct kernels map taps outside the input through a boundary mode.
        Replacement direct = build(graph, node, options, StencilVariant::Direct);
        if (direct.produces.empty()) continue;
        covered.insert(direct.covered.begin(), direct.covered.end());
        out.push_back(std::move(direct));
        continue;
      }
      Replacement replacement = build(graph, node, options, StencilVariant::SharedRing);
      if (replacement.produces.empty()) continue;  // an ordinary convolution
      covered.insert(replacement.covered.begin(), replacement.covered.end());
      // The direct-read variant goes first: on the H200 the shared-memory variants waited on their barriers.
      out.push_back(build(graph, node, options, StencilVariant::Direct));
      out.push_back(std::move(replacement));
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
