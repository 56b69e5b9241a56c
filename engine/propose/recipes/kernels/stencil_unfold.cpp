#include "engine/propose/recipes/kernels/stencil_unfold.h"

#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

const graph::Node* sole_user(const graph::OpGraph& graph, const graph::Node& node) {
  return node.users.size() == 1 ? graph.find(node.users.front()) : nullptr;
}

bool is_view(const graph::Node& node) { return node.kind == "view" || node.kind == "reshape"; }

// The chain F.unfold -> view [B, C, K, L] -> * taps -> sum over the taps -> view [B, C, H', W'].
struct UnfoldStencil {
  const graph::Node* input = nullptr;
  const graph::Node* taps = nullptr;  // the coefficients' tensor
  const graph::Node* result = nullptr;
  std::set<std::string> chain;        // unfold .. result
  std::int64_t kh = 0, kw = 0, ph = 0, pw = 0;
  bool per_channel = false;           // taps [C, K, 1]: each channel its own coefficients
};

// The tensor `weighted` multiplies `windows` by, when that is all it does.
const graph::Node* other_factor(const graph::OpGraph& graph, const graph::Node& weighted, const graph::Node& windows) {
  if (weighted.kind != "mul" || weighted.args.size() != 2 || !weighted.kwargs.empty()) return nullptr;
  const graph::Node* a = graph.producer(weighted.args[0]);
  const graph::Node* b = graph.producer(weighted.args[1]);
  if (a == &windows) return b;
  if (b == &windows) return a;
  return nullptr;
}

// nullopt: not this pattern. Unsupported: the pattern, in a form the kernels do not take.
std::optional<UnfoldStencil> match(const graph::OpGraph& graph, const graph::Node& unfold) {
  if (!is_call(unfold, "unfold", "torch.nn.functional.unfold")) return std::nullopt;
  UnfoldStencil s;
  s.input = argument_node(graph, unfold, 0, "input");
  // Tensor.unfold(dim, size, step) is another op: F.unfold reads [B, C, H, W] and makes [B, C * K, L].
  if (!s.input || !s.input->meta || s.input->meta->shape.size() != 4 || !unfold.meta || unfold.meta->shape.size() != 3)
    return std::nullopt;
  const graph::Node* windows = sole_user(graph, unfold);
  const graph::Node* weighted = windows && is_view(*windows) ? sole_user(graph, *windows) : nullptr;
  s.taps = weighted ? other_factor(graph, *weighted, *windows) : nullptr;
  const graph::Node* sum = s.taps ? sole_user(graph, *weighted) : nullptr;
  s.result = sum && sum->kind == "sum" ? sole_user(graph, *sum) : nullptr;
  if (!s.result || !is_view(*s.result)) return std::nullopt;

  const auto kernel_size = per_dim_argument(unfold, 1, "kernel_size", 2, 0);
  for (auto d : per_dim_argument(unfold, 2, "dilation", 2, 1))
    if (d != 1) throw Unsupported(unfold.name + ": unfold with dilation " + std::to_string(d));
  const auto padding = per_dim_argument(unfold, 3, "padding", 2, 0);
  for (auto d : per_dim_argument(unfold, 4, "stride", 2, 1))
    if (d != 1) throw Unsupported(unfold.name + ": unfold with stride " + std::to_string(d));
  s.kh = kernel_size[0], s.kw = kernel_size[1], s.ph = padding[0], s.pw = padding[1];
  const auto& in = s.input->meta->shape;
  const std::int64_t taps = s.kh * s.kw, oh = in[2] + 2 * s.ph - s.kh + 1, ow = in[3] + 2 * s.pw - s.kw + 1;
  if (taps < 1 || taps > 343 || oh < 1 || ow < 1) throw Unsupported(unfold.name + ": a window the stencil kernels do not take");
  const std::vector<std::int64_t> windows_shape = {in[0], in[1], taps, oh * ow};
  if (!windows->meta || windows->meta->shape != windows_shape || !weighted->meta || weighted->meta->shape != windows_shape)
    throw Unsupported(windows->name + ": the windows are not viewed as [batch, channels, taps, positions]");
  // The coefficients: fixed (a buffer or constant), broadcast over batch and positions.
  if (s.taps->op != "get_attr" || graph.parameters.count(s.taps->target) || !s.taps->meta)
    throw Unsupported(weighted->name + ": the windows are weighted by something other than a buffer or constant");
  std::vector<std::int64_t> t = s.taps->meta->shape;
  if (t.size() > 4) throw Unsupported(s.taps->name + ": a weight of rank " + std::to_string(t.size()));
  t.insert(t.begin(), 4 - t.size(), 1);
  if (t[0] != 1 || t[2] != taps || t[3] != 1 || (t[1] != 1 && t[1] != in[1]))
    throw Unsupported(s.taps->name + ": a weight that is not one coefficient per tap (and channel)");
  s.per_channel = t[1] != 1;
  const auto dims = dims_argument(*sum, 1, "dim");
  if (!dims || dims->size() != 1 || normalize_dim((*dims)[0], 4) != 2 || flag(argument(*sum, 2, "keepdim")).value_or(false) ||
      !passes_only(*sum, 2, {"dim", "keepdim"}))
    throw Unsupported(sum->name + ": not a sum over the taps alone");
  if (!s.result->meta || s.result->meta->shape != std::vector<std::int64_t>{in[0], in[1], oh, ow})
    throw Unsupported(s.result->name + ": the sums are not viewed back as [batch, channels, height, width]");
  for (const graph::Node* n : {s.input, s.taps, s.result})
    if (!is_float_dtype(n->meta->dtype) || !kernel_dtype(n->meta->dtype)) throw Unsupported(n->name + " is " + n->meta->dtype);
  s.chain = {unfold.name, windows->name, weighted->name, sum->name, s.result->name};
  return s;
}

StencilKernel make_kernel(const UnfoldStencil& s, StencilVariant kind, const std::string& name) {
  const auto& in = s.input->meta->shape;
  const auto& out = s.result->meta->shape;
  const bool over_planes = kind == StencilVariant::DirectVec4;
  std::vector<StencilTap> taps;
  for (std::int64_t ky = 0; ky < s.kh; ++ky)
    for (std::int64_t kx = 0; kx < s.kw; ++kx) taps.push_back({0, static_cast<int>(ky - s.ph), static_cast<int>(kx - s.pw)});
  StencilKernel kernel;
  kernel.name = name;
  kernel.variant = kind;
  kernel.in_dtype = s.input->meta->dtype;
  kernel.out_dtype = s.result->meta->dtype;
  // The vec4 kernel is 3D: over the planes it marches down each plane's rows (its z).
  if (over_planes) {
    taps = stencil_vec4_row_march(kernel, taps, in[2], in[3], out[2], out[3]);
  } else {
    kernel.geometry = stencil_geometry(2, taps);
  }
  kernel.geometry.tile_y = 8;  // 256 threads: no shared tile to amortise
  kernel.extra_dtypes = {s.taps->meta->dtype};
  kernel.extra_params = ", const " + kernel_dtype(s.taps->meta->dtype)->cuda_type + "* __restrict__ weight, int channels";
  const std::string k = std::to_string(taps.size());
  // The coefficients into registers once a block (constant indices after unrolling keep them there).
  kernel.setup = std::string(s.per_channel ? "const long long first = (long long)(batch % channels) * " + k + ";\n  "
                                           : "const long long first = 0;\n  (void)channels;\n  ") +
                 "float wgt[" + k + "];\n#pragma unroll\n  for (int k = 0; k < " + k +
                 "; ++k) wgt[k] = static_cast<float>(weight[first + k]);";
  // A zero coefficient skips its read (uniform across the block: no divergence).
  kernel.update_body.push_back("float acc = 0.0f;");
  for (std::size_t j = 0; j < taps.size(); ++j) {
    const std::string w = "wgt[" + std::to_string(j) + "]";
    const std::string tap = over_planes ? vec4_tap_accessor(kernel.geometry, taps[j]) : tap_accessor(kernel.geometry, taps[j]);
    kernel.update_body.push_back("if (" + w + " != 0.0f) acc += " + w + " * " + tap + ";");
  }
  kernel.update_result = "acc";
  if (over_planes) {
    for (const auto& row : kernel.geometry.rows) {
      std::string guard;
      for (std::size_t j = 0; j < taps.size(); ++j)
        if (taps[j].oz == row.oz) guard += (guard.empty() ? "" : " || ") + ("wgt[" + std::to_string(j) + "] != 0.0f");
      kernel.row_guards.push_back(guard);
    }
  }
  return kernel;
}

// `vec4`: the vec4 kernel over the planes (the scalar direct kernel its fallback); else the scalar direct kernel.
Replacement build(const UnfoldStencil& s, const KernelRewriteOptions& options, bool vec4) {
  const auto& in = s.input->meta->shape;
  if (vec4 && !stencil_vec4_applies(3, s.input->meta->dtype, s.result->meta->dtype, in[3]))
    throw Unsupported(s.result->name + ": the vec4 kernel needs float32 rows a multiple of 4 floats wide");
  const std::string name = "stencil_" + s.result->name;
  const StencilKernel direct = make_kernel(s, StencilVariant::Direct, name);
  Replacement r;
  r.recipe = vec4 ? "s3_stencil2d_vec4_direct" : "s3_stencil2d_direct_l1";
  r.space = knowledge::Space::S3;
  r.produces = s.result->name;
  r.covered = s.chain;
  const std::int64_t taps = s.kh * s.kw;
  r.description = "F.unfold's " + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " windows weighted by " +
                  s.taps->name + " and summed (im2col spelled out) as a 2D stencil kernel (" + std::to_string(taps) +
                  (s.per_channel ? " coefficients per channel" : " coefficients") +
                  " read on the device, the windows never written" +
                  (vec4 ? ", four outputs per thread from 16-byte loads, neighbours through the caches)"
                        : ", neighbours read through the caches)");
  StencilKernel vec4_kernel;
  if (vec4) {
    vec4_kernel = make_kernel(s, StencilVariant::DirectVec4, name + "_vec4");
    r.kernels.push_back(stencil_source(*options.knowledge, vec4_kernel));
  }
  r.kernels.push_back(stencil_source(*options.knowledge, direct));
  // The reference multiplies and then sums in a reduction order of its own: contracting the products (FMAs)
  // is another rounding of the same sum, and half the arithmetic of --fmad=false.
  for (auto& k : r.kernels) k.options.push_back("--fmad=true");

  const std::string prefix = "_" + s.result->name + "_";
  const std::string x = prefix + "x", shape = prefix + "shape";
  const KernelDtype& in_type = *kernel_dtype(s.input->meta->dtype);
  const KernelDtype& w_type = *kernel_dtype(s.taps->meta->dtype);
  auto& st = r.statements;
  st.push_back(x + " = " + s.input->name + ".contiguous()");
  // The coefficients' count is checked too: a buffer of another size would be read past its end.
  const std::string count = s.per_channel ? std::to_string(taps) + " * " + x + ".shape[1]" : std::to_string(taps);
  st.push_back("assert " + x + ".dtype == " + in_type.torch_name + " and " + s.taps->name + ".dtype == " + w_type.torch_name +
               " and " + s.taps->name + ".numel() == " + count + ", \"kernel " + name + " expects " + s.input->meta->dtype +
               " " + s.input->name + " and " + count + " " + s.taps->meta->dtype + " coefficients in " + s.taps->name + "\"");
  st.push_back(shape + " = torch.Size([" + x + ".shape[0], " + x + ".shape[1], " +
               python_plus(x + ".shape[2]", 2 * s.ph - s.kh + 1) + ", " + python_plus(x + ".shape[3]", 2 * s.pw - s.kw + 1) +
               "])");
  const std::string out_dtype = s.result->meta->dtype == s.input->meta->dtype ? x + ".dtype"
                                                                               : kernel_dtype(s.result->meta->dtype)->torch_name;
  st.push_back(s.result->name + " = torch.empty(" + shape + ", dtype=" + out_dtype + ", device=" + x + ".device)");
  const std::string extra = ", " + s.taps->name + ".contiguous(), " + x + ".shape[1]";
  st.push_back(vec4 ? stencil_launch_vec4_planes_or_direct(vec4_kernel, direct, x, s.result->name, shape, extra)
                    : stencil_launch(direct, x, s.result->name, shape, extra, 0));
  return r;
}

}  // namespace

std::vector<Replacement> find_unfold_stencils(const graph::OpGraph& graph, std::set<std::string>& covered,
                                              const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if (covered.count(node.name)) continue;
    try {
      const std::optional<UnfoldStencil> s = match(graph, node);
      if (!s) continue;
      bool taken = false;
      for (const auto& name : s->chain) taken = taken || covered.count(name) > 0;
      if (taken) continue;
      // The vec4 kernel over the planes first, where it applies; the scalar direct kernel always.
      try {
        out.push_back(build(*s, options, true));
      } catch (const Unsupported&) {
        // per-channel coefficients, or not float32 rows of 4 floats: the direct kernel below
      }
      out.push_back(build(*s, options, false));
      covered.insert(s->chain.begin(), s->chain.end());
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
