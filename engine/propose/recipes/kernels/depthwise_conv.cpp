#include "engine/propose/recipes/kernels/depthwise_conv.h"

#include <algorithm>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/conv_bias.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/launch_statements.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/stencil_kernel.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

constexpr int kOutX = 4;          // outputs in x a thread computes (the template's OUT_X)
constexpr int kMaxTaps = 81;      // coefficients a thread holds in registers (9 x 9)
constexpr int kMaxThreads = 256;

// The weight and bias as the forward reads them, and what the kernel needs of them.
struct Operands {
  const graph::Node* input = nullptr;
  std::string weight, bias = "None";  // Python
  std::vector<std::int64_t> w_shape;
  std::string w_dtype, b_dtype;
  StencilBoundary boundary = StencilBoundary::Zeros;
};

// nn.Conv2d(C, C, k, groups=C) called on its input, or F.conv2d(x, w, b, ...) with any weight tensor.
Operands operands(const graph::OpGraph& graph, const graph::Node& conv) {
  Operands o;
  o.input = argument_node(graph, conv, 0, "input");
  if (!o.input || !o.input->meta) throw Unsupported(conv.name + ": the input is not a tensor");
  if (conv.op == "call_module") {
    const auto module = module_expression(conv);
    const auto weight = graph.parameters.find(conv.target + ".weight");
    if (!module || weight == graph.parameters.end()) throw Unsupported(conv.name + ": a module call with other arguments");
    o.weight = *module + ".weight";
    o.w_shape = weight->second.shape;
    o.w_dtype = weight->second.dtype;
    if (const auto bias = graph.parameters.find(conv.target + ".bias"); bias != graph.parameters.end()) {
      o.bias = *module + ".bias";
      o.b_dtype = bias->second.dtype;
    }
    const auto mode = module_attr(graph, conv, "padding_mode");
    const std::string name = mode && mode->is_string() ? mode->get<std::string>() : "zeros";
    const auto boundary = name == "constant" ? std::nullopt : stencil_boundary_of_mode(name);  // nn.Conv2d's names
    if (!boundary) throw Unsupported(conv.name + ": padding mode " + name);
    o.boundary = *boundary;
    return o;
  }
  const graph::Node* weight = argument_node(graph, conv, 1, "weight");
  if (!weight || !weight->meta) throw Unsupported(conv.name + ": the weight is not a tensor");
  o.weight = weight->name;
  o.w_shape = weight->meta->shape;
  o.w_dtype = weight->meta->dtype;
  const graph::Arg* bias_arg = argument(conv, 2, "bias");
  const graph::Node* bias = argument_node(graph, conv, 2, "bias");
  if (bias_arg && bias_arg->kind != graph::Arg::Kind::None && (!bias || !bias->meta))
    throw Unsupported(conv.name + ": a bias that is not a tensor");
  if (bias) {
    o.bias = bias->name;
    o.b_dtype = bias->meta->dtype;
  }
  return o;
}

int shared_bytes(const DepthwiseBlock& b, int k_y, int k_x, int stride_y, int stride_x) {
  const int in_h = (b.threads_y * b.out_y - 1) * stride_y + k_y;
  const int in_w = (b.threads_x * kOutX - 1) * stride_x + k_x;
  const int row_w = (kOutX - 1) * stride_x + k_x;
  const int row_v = (row_w + 3) / 4;
  const int pitch = (std::max((b.threads_x - 1) * kOutX + 4 * row_v, in_w) + 3) / 4 * 4;
  return in_h * pitch * 4;
}

// "batch_norm + hardtanh"
std::string describe_group(const graph::OpGraph& graph, const ElementwiseGroup& group) {
  std::string out;
  for (const auto& node : graph.nodes)
    if (group.members.count(node.name)) out += (out.empty() ? "" : " + ") + (node.kind == "unknown" ? target_base(node) : node.kind);
  return out;
}

// The conv's groups: the module's attribute or the call's argument.
std::int64_t groups_of(const graph::OpGraph& graph, const graph::Node& conv) {
  if (conv.op != "call_module") return static_cast<std::int64_t>(number_argument(conv, 6, "groups").value_or(1));
  const auto groups = module_attr(graph, conv, "groups");
  return groups && groups->is_number_integer() ? groups->get<std::int64_t>() : 1;
}

Replacement build(const graph::OpGraph& graph, const graph::Node& conv, const ElementwiseGroup* epilogue,
                  const KernelRewriteOptions& options) {
  // conv1d runs as a conv2d of planes one row high.
  const int dims = conv.kind == "conv1d" ? 1 : 2;
  const std::size_t rank = static_cast<std::size_t>(dims) + 2;
  const graph::Node* input = argument_node(graph, conv, 0, "input");
  // One input and one output channel per group; anything else is a real (or multiplier) convolution.
  if (!conv.meta || conv.meta->shape.size() != rank || !input || !input->meta || input->meta->shape.size() != rank) return {};
  const std::int64_t channels = input->meta->shape[1];
  if (groups_of(graph, conv) != channels || conv.meta->shape[1] != channels || channels < 1) return {};
  const Operands o = operands(graph, conv);
  if (o.w_shape.size() != rank || o.w_shape[0] != channels || o.w_shape[1] != 1)
    throw Unsupported(conv.name + ": a weight that is not [channels, 1, k" + (dims == 2 ? ", k]" : "]"));
  const std::vector<std::int64_t> kernel(o.w_shape.begin() + 2, o.w_shape.end());
  const auto stride_d = conv_per_dim(graph, conv, 3, "stride", 1, kernel);
  const auto padding_d = conv_per_dim(graph, conv, 4, "padding", 0, kernel);
  for (const auto d : conv_per_dim(graph, conv, 5, "dilation", 1, kernel))
    if (d != 1) throw Unsupported(conv.name + ": dilation " + std::to_string(d));
  // The 2D view: (y, x) sizes of the kernel, strides, padding, input and output.
  auto two_d = [dims](const std::vector<std::int64_t>& v, std::int64_t one) {
    return dims == 2 ? v : std::vector<std::int64_t>{one, v[0]};
  };
  const auto kernel2 = two_d(kernel, 1), stride = two_d(stride_d, 1), padding = two_d(padding_d, 0);
  const auto in = two_d(std::vector<std::int64_t>(o.input->meta->shape.begin() + 2, o.input->meta->shape.end()), 1);
  const auto out = two_d(std::vector<std::int64_t>(conv.meta->shape.begin() + 2, conv.meta->shape.end()), 1);
  const int k_y = static_cast<int>(kernel2[0]), k_x = static_cast<int>(kernel2[1]);
  const std::string taps_text = dims == 2 ? std::to_string(k_y) + "x" + std::to_string(k_x) : std::to_string(k_x) + "-tap";
  if (k_y * k_x > kMaxTaps)
    throw Unsupported(conv.name + ": a " + taps_text + " kernel (up to " + std::to_string(kMaxTaps) +
                      " coefficients in registers)");
  for (const auto st : stride)
    if (st < 1 || st > 4) throw Unsupported(conv.name + ": stride " + std::to_string(st));
  for (std::size_t d = 0; d < 2; ++d) {
    if (padding[d] < 0 || padding[d] >= kernel2[d]) throw Unsupported(conv.name + ": padding " + std::to_string(padding[d]));
    if (o.boundary != StencilBoundary::Zeros && padding[d] >= in[d])
      throw Unsupported(conv.name + ": a padding as large as the input");
  }
  for (const auto& type : {o.input->meta->dtype, conv.meta->dtype, o.w_dtype, o.b_dtype.empty() ? o.w_dtype : o.b_dtype})
    if (!is_float_dtype(type)) throw Unsupported(conv.name + ": a " + type + " operand");
  const std::int64_t oy_n = out[0], ox_n = out[1];
  if (oy_n != (in[0] + 2 * padding[0] - k_y) / stride[0] + 1 || ox_n != (in[1] + 2 * padding[1] - k_x) / stride[1] + 1)
    throw Unsupported(conv.name + ": an output shape that is not the convolution's");
  const int sy = static_cast<int>(stride[0]), sx = static_cast<int>(stride[1]);
  const DepthwiseBlock block = depthwise_block(oy_n, ox_n, k_y, k_x, sy, sx);
  if (shared_bytes(block, k_y, k_x, sy, sx) > kDepthwiseMaxSharedBytes) throw Unsupported(conv.name + ": the input tile does not fit shared memory");

  // What the kernel stores: the conv's value, or the epilogue group's computed from it.
  const graph::Node& result = epilogue ? *graph.find(epilogue->root) : conv;
  const std::string name = "depthwise_" + result.name;
  const std::string p = "_" + result.name + "_";
  ProgramOptions po;
  po.shape = conv.meta->shape;
  po.shape_python = p + "shape";
  po.prefix = "a";
  po.index64 = conv.meta->elements() >= kIndex64From;
  po.channel_index = "c";  // per-channel operands (a batch norm's statistics) read at the block's channel
  ElementwiseProgram program(graph, epilogue ? epilogue->members : std::set<std::string>{}, po);
  program.bind(conv.name, "v");
  const std::string value = epilogue ? program.value(result.name) : "v";
  std::string params;
  for (const auto& parameter : program.kernel_parameters()) params += parameter.declaration + ", ";
  std::vector<std::string> dtypes = program.dtypes();
  for (const auto& t : {o.input->meta->dtype, result.meta->dtype, o.w_dtype, o.b_dtype.empty() ? o.w_dtype : o.b_dtype})
    dtypes.push_back(t);
  const std::map<std::string, std::string, std::less<>> values = {
      {"kernel_name", name},
      {"includes", includes_for(dtypes)},
      {"in_t", kernel_dtype(o.input->meta->dtype)->cuda_type},
      {"out_t", kernel_dtype(result.meta->dtype)->cuda_type},
      {"index_t", program.index_type()},
      {"functions", device_helpers(program.helpers())},
      {"element_params", program.element_parameters()},
      {"body", join_lines(program.body(), 2)},
      {"result", value},
      {"params", params},
      {"element_args", program.element_arguments("e0 + i")},
      {"w_t", kernel_dtype(o.w_dtype)->cuda_type},
      {"b_t", kernel_dtype(o.b_dtype.empty() ? o.w_dtype : o.b_dtype)->cuda_type},
      {"k_y", std::to_string(k_y)},
      {"k_x", std::to_string(k_x)},
      {"pad_y", std::to_string(padding[0])},
      {"pad_x", std::to_string(padding[1])},
      {"stride_y", std::to_string(sy)},
      {"stride_x", std::to_string(sx)},
      {"threads_x", std::to_string(block.threads_x)},
      {"threads_y", std::to_string(block.threads_y)},
      {"out_y", std::to_string(block.out_y)},
      {"boundary", std::to_string(static_cast<int>(o.boundary))},
      {"edge_function", stencil_edge_function(o.boundary)},
  };
  Replacement r;
  r.recipe = "s3_depthwise_conv2d";
  r.space = knowledge::Space::S3;
  r.produces = result.name;
  r.covered = {conv.name};
  if (epilogue) r.covered.insert(epilogue->members.begin(), epilogue->members.end());
  r.library_gap = true;
  // A convolution rounds like cuDNN's, which contracts its products into FMAs: the
  // proposer's --fmad=false (for stencils' cancellation) would double the arithmetic here.
  r.kernels.push_back({name, fill_kernel_template(*options.knowledge, "depthwise_conv2d.cu", values), {"--fmad=true"}});
  const std::string boundary_text = o.boundary == StencilBoundary::Zeros ? "" : ", its padding mode mapped at the tile's edges";
  const std::string stride_text = dims == 2 ? std::to_string(sy) + "x" + std::to_string(sx) : std::to_string(sx);
  r.description = conv.kind + " with one channel per group and learned " + taps_text + " coefficients" +
                  (sy * sx > 1 ? ", stride " + stride_text : "") +
                  " as one depthwise kernel (the input tile and halo in shared memory, the channel's coefficients in " +
                  "registers, " + std::to_string(kOutX) + "x" + std::to_string(block.out_y) + " outputs a thread" +
                  boundary_text + ")" + (epilogue ? ", with " + describe_group(graph, *epilogue) + " in its store" : "");

  const KernelDtype& x_type = *kernel_dtype(o.input->meta->dtype);
  auto& s = r.statements;
  s.push_back(p + "x = " + o.input->name + ".contiguous()");
  std::string check = "assert " + p + "x.dtype == " + x_type.torch_name + " and " + o.weight + ".dtype == " +
                      kernel_dtype(o.w_dtype)->torch_name + " and " + o.weight + ".shape == (" + p + "x.shape[1], 1, " +
                      (dims == 2 ? std::to_string(k_y) + ", " : "") + std::to_string(k_x) + ")";
  if (o.bias != "None") check += " and " + o.bias + ".dtype == " + kernel_dtype(o.b_dtype)->torch_name;
  s.push_back(check + ", \"kernel " + name + " expects " + o.input->meta->dtype + " " + o.input->name + " and a " +
              o.w_dtype + " weight of one channel a group\"");
  // Output size of the tensor's spatial dim d (0 .. dims - 1); the 2D view's dim is d + 2 - dims.
  auto out_size = [&](int d) {
    const std::string size = p + "x.shape[" + std::to_string(2 + d) + "]";
    const auto v = static_cast<std::size_t>(d + 2 - dims);
    const std::int64_t grow = 2 * padding[v] - kernel2[v];
    const std::int64_t st = stride[v];
    return st == 1 ? python_plus(size, grow + 1) : "(" + python_plus(size, grow) + ") // " + std::to_string(st) + " + 1";
  };
  std::string shape = p + "shape = torch.Size([" + p + "x.shape[0], " + p + "x.shape[1]";
  for (int d = 0; d < dims; ++d) shape += ", " + out_size(d);
  s.push_back(shape + "])");
  const std::vector<const ElementwiseProgram*> programs = {&program};
  if (auto leaves = dtype_check(programs, name); !leaves.empty()) s.push_back(leaves);
  if (!po.index64)
    s.push_back("assert " + p + "shape.numel() < 2**31, \"kernel " + name + " indexes with 32 bits\"");
  const std::string out_dtype = result.meta->dtype == o.input->meta->dtype ? p + "x.dtype"
                                                                           : kernel_dtype(result.meta->dtype)->torch_name;
  s.push_back(result.name + " = torch.empty(" + p + "shape, dtype=" + out_dtype + ", device=" + p + "x.device)");
  const int tile_w = block.threads_x * kOutX, tile_h = block.threads_y * block.out_y;
  // A conv1d's planes are one row high.
  const std::string ny = dims == 2 ? p + "x.shape[-2]" : "1", oy = dims == 2 ? p + "shape[-2]" : "1";
  const std::string planes = p + "shape[:-" + std::to_string(dims) + "].numel()";
  const std::string grid_y = dims == 2 ? "(" + oy + " + " + std::to_string(tile_h - 1) + ") // " + std::to_string(tile_h) : "1";
  s.push_back("_kernel(\"" + name + "\")(((" + p + "shape[-1] + " + std::to_string(tile_w - 1) + ") // " + std::to_string(tile_w) +
              ", " + grid_y + ", max(1, min(" + planes + ", 65535))), (" + std::to_string(block.threads_x) + ", " +
              std::to_string(block.threads_y) + "), " +
              join_arguments({p + "x", result.name, o.weight + ".contiguous()",
                              o.bias == "None" ? std::string("None") : o.bias + ".contiguous()", launch_arguments(program)}) +
              ", " + p + "x.shape[1], " + p + "x.shape[-1], " + ny + ", " + p + "shape[-1], " + oy +
              ", nvrtc_runtime.int64(" + planes + "))");
  return r;
}

}  // namespace

DepthwiseBlock depthwise_block(std::int64_t oy_n, std::int64_t ox_n, int k_y, int k_x, int stride_y, int stride_x,
                               int max_shared_bytes) {
  DepthwiseBlock b;
  // Rows of one plane (a conv1d's) take the whole block in x.
  b.threads_x = static_cast<int>(std::clamp<std::int64_t>((ox_n + kOutX - 1) / kOutX, 1, oy_n == 1 ? 128 : 16));
  b.out_y = static_cast<int>(std::clamp<std::int64_t>(oy_n, 1, 4));
  b.threads_y = static_cast<int>(std::clamp<std::int64_t>((oy_n + b.out_y - 1) / b.out_y, 1, kMaxThreads / b.threads_x));
  while (shared_bytes(b, k_y, k_x, stride_y, stride_x) > max_shared_bytes) {
    if (b.threads_y > 1) {
      b.threads_y = (b.threads_y + 1) / 2;
    } else if (b.threads_x > 1) {
      b.threads_x = (b.threads_x + 1) / 2;
    } else {
      break;  // the caller refuses what still does not fit
    }
  }
  return b;
}

std::vector<Replacement> find_depthwise_convs(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                              const KernelRewriteOptions& options, std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_depthwise_convs needs options.knowledge for its template");
  std::vector<Replacement> out;
  const std::vector<ElementwiseGroup> groups = elementwise_groups(graph, covered);
  for (const auto& node : graph.nodes) {
    if ((node.kind != "conv2d" && node.kind != "conv1d") || covered.count(node.name)) continue;
    try {
      // With the elementwise ops after it in its store where they can be (one pass instead of two), else alone.
      const ElementwiseGroup* epilogue = epilogue_group(graph, node, groups);
      std::optional<Replacement> r;
      if (epilogue) {
        try {
          r = build(graph, node, epilogue, options);
        } catch (const Unsupported& e) {
          skipped.push_back({node.name, std::string("its epilogue stays a kernel of its own: ") + e.what()});
        }
      }
      if (!r) r = build(graph, node, nullptr, options);
      if (!r->produces.empty()) out.push_back(std::move(*r));
    } catch (const Unsupported& e) {
      skipped.push_back({node.name, e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
