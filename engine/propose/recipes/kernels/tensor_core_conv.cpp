#include "engine/propose/recipes/kernels/tensor_core_conv.h"

#include <algorithm>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/conv_bias.h"
#include "engine/propose/recipes/kernels/elementwise_expression.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/elementwise_groups.h"
#include "engine/propose/recipes/kernels/elementwise_program.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"
#include "engine/propose/recipes/kernels/launch_statements.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/row_reduction.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

constexpr const char* kRecipe = "s3_tf32_implicit_gemm_conv";
constexpr int kThreads = kConvTileRows * kConvTileColumns / (16 * kConvWarpTiles) * 32;

// Module-level: the input as the kernels read it, and the precision cuDNN may use now.
constexpr const char* kConvInput = R"(def _hiera_conv_input(x):
    """x as the implicit-GEMM convolution kernels read it: contiguous and 16-byte
    aligned, its rows a multiple of 4 floats long (zero columns added on the
    right, which the kernels read as the convolution's own zero padding)."""
    if x.shape[-1] % 4:
        return torch.nn.functional.pad(x, (0, -x.shape[-1] % 4))
    x = x.contiguous()
    return x if x.data_ptr() % 16 == 0 else x.clone())";

constexpr const char* kTf32Allowed = R"(def _hiera_cudnn_tf32():
    """Whether cuDNN may run float32 convolutions on TF32 tensor cores now
    (PyTorch's default): the reference's convolutions are then TF32 too."""
    precision = getattr(getattr(torch.backends.cudnn, "conv", None), "fp32_precision", None)
    if precision in ("tf32", "ieee"):  # torch >= 2.9 refuses the legacy flag once this was set
        return precision == "tf32"
    return bool(torch.backends.cudnn.allow_tf32))";

// What the kernel needs to know of the convolution.
struct Geometry {
  const graph::Node* input = nullptr;
  std::string weight;  // Python
  std::string bias;    // Python, "None" without one
  std::int64_t cin = 0, cout = 0, kh = 0, kw = 0, pad_h = 0, pad_w = 0;
};

Geometry geometry(const graph::OpGraph& graph, const graph::Node& conv) {
  Geometry g;
  g.input = argument_node(graph, conv, 0, "input");
  if (!g.input || !g.input->meta || !conv.meta || g.input->meta->shape.size() != 4 || conv.meta->shape.size() != 4)
    throw Unsupported(conv.name + ": not a batched 2D convolution of a 4D tensor");
  std::vector<std::int64_t> w_shape;
  std::string w_dtype, b_dtype;
  if (conv.op == "call_module") {
    const auto module = module_expression(conv);
    const auto weight = graph.parameters.find(conv.target + ".weight");
    if (!module || weight == graph.parameters.end()) throw Unsupported(conv.name + ": a module call with other arguments");
    g.weight = *module + ".weight";
    w_shape = weight->second.shape;
    w_dtype = weight->second.dtype;
    const auto bias = graph.parameters.find(conv.target + ".bias");
    g.bias = bias == graph.parameters.end() ? "None" : *module + ".bias";
    if (bias != graph.parameters.end()) b_dtype = bias->second.dtype;
    if (const auto mode = module_attr(graph, conv, "padding_mode"); mode && *mode != "zeros")
      throw Unsupported(conv.name + ": padding mode " + mode->dump());
    if (const auto groups = module_attr(graph, conv, "groups"); groups && *groups != 1)
      throw Unsupported(conv.name + ": " + groups->dump() + " groups");
  } else {
    const graph::Node* weight = argument_node(graph, conv, 1, "weight");
    if (!weight || !weight->meta) throw Unsupported(conv.name + ": the weight is not a tensor node");
    g.weight = weight->name;
    w_shape = weight->meta->shape;
    w_dtype = weight->meta->dtype;
    const graph::Arg* bias_arg = argument(conv, 2, "bias");
    const graph::Node* bias = argument_node(graph, conv, 2, "bias");
    if (bias_arg && bias_arg->kind != graph::Arg::Kind::None && (!bias || !bias->meta))
      throw Unsupported(conv.name + ": a bias that is not a tensor node");
    g.bias = bias ? bias->name : "None";
    if (bias) b_dtype = bias->meta->dtype;
    if (number_argument(conv, 6, "groups").value_or(1) != 1) throw Unsupported(conv.name + ": grouped");
  }
  if (w_shape.size() != 4) throw Unsupported(conv.name + ": a weight of " + std::to_string(w_shape.size()) + " dimensions");
  for (const auto& type : {g.input->meta->dtype, conv.meta->dtype, w_dtype})
    if (type != "float32") throw Unsupported(conv.name + ": a " + type + " convolution (TF32 is for float32)");
  if (!b_dtype.empty() && b_dtype != "float32") throw Unsupported(conv.name + ": a " + b_dtype + " bias");
  g.cout = w_shape[0], g.cin = w_shape[1], g.kh = w_shape[2], g.kw = w_shape[3];
  const std::vector<std::int64_t> kernel = {g.kh, g.kw};
  for (const auto s : conv_per_dim(graph, conv, 3, "stride", 1, kernel))
    if (s != 1) throw Unsupported(conv.name + ": stride " + std::to_string(s));
  for (const auto d : conv_per_dim(graph, conv, 5, "dilation", 1, kernel))
    if (d != 1) throw Unsupported(conv.name + ": dilation " + std::to_string(d));
  const auto padding = conv_per_dim(graph, conv, 4, "padding", 0, kernel);
  g.pad_h = padding[0], g.pad_w = padding[1];
  const auto& in = g.input->meta->shape;
  if (in[1] != g.cin || conv.meta->shape[1] != g.cout ||
      conv.meta->shape[2] != in[2] + 2 * g.pad_h - g.kh + 1 || conv.meta->shape[3] != in[3] + 2 * g.pad_w - g.kw + 1)
    throw Unsupported(conv.name + ": shapes that do not match a stride-1 convolution");
  if (g.cout > 64) throw Unsupported(conv.name + ": " + std::to_string(g.cout) + " output channels (up to 64)");
  if (g.kh > 7 || g.kw > 7 || g.pad_h < 0 || g.pad_w < 0 || g.pad_h >= g.kh || g.pad_w >= g.kw)
    throw Unsupported(conv.name + ": a " + std::to_string(g.kh) + "x" + std::to_string(g.kw) + " kernel with padding " +
                      std::to_string(g.pad_h) + ", " + std::to_string(g.pad_w));
  return g;
}

// The shared-memory layout of conv2d_implicit_gemm_tf32.cu for a geometry.
struct Layout {
  int pitch = 0, channel_stride = 0, shared_bytes = 0, blocks_per_sm = 1;
};

Layout layout(const Geometry& g) {
  Layout l;
  const std::int64_t alpad = (g.pad_w + 3) / 4 * 4;
  l.pitch = static_cast<int>((kConvTileColumns + g.kw - 1 + alpad - g.pad_w + 3) / 4 * 4);
  const int plain = static_cast<int>(kConvTileRows + g.kh - 1) * l.pitch;
  l.channel_stride = plain + ((8 - plain % 32) + 32) % 32;
  const std::int64_t channels = (g.cin + 7) / 8 * 8;  // the k-steps take 8 channels; the rest are zero
  const std::int64_t outputs = (g.cout + 15) / 16 * 16;  // n-tiles in pairs
  const std::int64_t bytes = 4 * (g.kh * g.kw * channels * outputs + 2 * channels * l.channel_stride);
  if (bytes > kConvSharedLimit)
    throw Unsupported("weights and two input tiles take " + std::to_string(bytes / 1024) + " KiB of shared memory, over " +
                      std::to_string(kConvSharedLimit / 1024));
  l.shared_bytes = static_cast<int>(bytes);
  // Two blocks share an SM where their shared memory allows (the kernel holds about 128 registers a thread).
  l.blocks_per_sm = 2 * (bytes + 1024) <= kConvSharedLimit ? 2 : 1;
  return l;
}

// The epilogue: what the kernel computes from each convolution value (or each reduction over channels).
struct Epilogue {
  const ElementwiseGroup* group = nullptr;     // the elementwise ops, if any
  const graph::Node* reduction = nullptr;      // the reduction over channels, or over all but the batch (image)
  const graph::Node* reduced = nullptr;        // the node holding its value (max/min: the values)
  std::optional<ReductionFormula> formula;
  bool image = false;                          // `reduction` sums (or averages) each image
  const graph::Node* pool = nullptr;           // a 2x2 average pool before the group (image sums only)
  std::string produces;
  std::set<std::string> covered;
};

// The node's value as the group after it reads it: the pool's output, else the convolution's.
const graph::Node& epilogue_input(const graph::Node& conv, const Epilogue& e) { return e.pool ? *e.pool : conv; }

// A module int-or-pair attribute (or call argument) equal to `value` in both dimensions; `fallback` when absent or None.
bool pair_is(const graph::OpGraph& graph, const graph::Node& node, std::size_t position, const char* name,
             std::int64_t value, std::int64_t fallback) {
  std::optional<nlohmann::json> attr;
  if (node.op == "call_module") {
    attr = module_attr(graph, node, name);
  } else if (const graph::Arg* arg = argument(node, position, name); arg && arg->kind != graph::Arg::Kind::None) {
    const auto dims = dims_argument(node, position, name);
    if (!dims) return false;
    attr = nlohmann::json(*dims);
  }
  if (!attr || attr->is_null()) return fallback == value;
  if (attr->is_number_integer()) return attr->get<std::int64_t>() == value;
  if (!attr->is_array() || attr->empty() || attr->size() > 2) return false;
  for (const auto& v : *attr)
    if (!v.is_number_integer() || v.get<std::int64_t>() != value) return false;
  return true;
}

// AvgPool2d(2) / avg_pool2d(x, 2): a 2x2 window, stride 2, no padding, floor mode, no divisor override.
bool two_by_two_average(const graph::OpGraph& graph, const graph::Node& node) {
  if (node.kind != "avg_pool2d" || !node.meta) return false;
  try {
    const auto flag_set = [&](std::size_t position, const char* name) {
      if (node.op == "call_module") {
        const auto attr = module_attr(graph, node, name);
        return attr && !attr->is_null() && *attr != false;
      }
      const graph::Arg* arg = argument(node, position, name);
      return arg && arg->kind != graph::Arg::Kind::None && bool_argument(node, position, name).value_or(true);
    };
    const auto divisor = node.op == "call_module" ? module_attr(graph, node, "divisor_override") : std::nullopt;
    const graph::Arg* divisor_arg = node.op == "call_module" ? nullptr : argument(node, 6, "divisor_override");
    return pair_is(graph, node, 1, "kernel_size", 2, 0) && pair_is(graph, node, 2, "stride", 2, 2) &&
           pair_is(graph, node, 3, "padding", 0, 0) && !flag_set(4, "ceil_mode") &&
           (!divisor || divisor->is_null()) && (!divisor_arg || divisor_arg->kind == graph::Arg::Kind::None);
  } catch (const Unsupported&) {
    return false;
  }
}

// sum / mean over every dimension but the first of a 4D tensor, without a dtype.
bool sums_each_image(const graph::Node& node) {
  if ((node.kind != "sum" && node.kind != "mean") || !node.meta) return false;
  if (const auto* dtype = argument(node, 3, "dtype"); dtype && dtype->kind != graph::Arg::Kind::None) return false;
  std::optional<std::vector<std::int64_t>> dims;
  try {
    dims = dims_argument(node, 1, "dim");
  } catch (const Unsupported&) {
    return false;
  }
  if (!dims || dims->size() != 3) return false;
  std::set<std::int64_t> seen;
  for (const auto d : *dims)
    if (const auto n = normalize_dim(d, 4)) seen.insert(*n);
  return seen == std::set<std::int64_t>{1, 2, 3};
}

// A reduction over dim 1 of a 4D tensor (keepdim either way), with its values node; nothing otherwise.
std::optional<std::pair<const graph::Node*, const graph::Node*>> channel_reduction(const graph::OpGraph& graph,
                                                                                    const graph::Node& node) {
  const std::string& k = node.kind;
  if (k != "sum" && k != "mean" && k != "amax" && k != "amin" && k != "max" && k != "min") return std::nullopt;
  if (const auto* dtype = argument(node, 3, "dtype"); (k == "sum" || k == "mean") && dtype && dtype->kind != graph::Arg::Kind::None)
    return std::nullopt;
  std::optional<std::vector<std::int64_t>> dims;
  try {
    dims = dims_argument(node, 1, "dim");
  } catch (const Unsupported&) {
    return std::nullopt;  // max against a tensor
  }
  if (!dims || dims->size() != 1 || normalize_dim(dims->front(), 4) != 1) return std::nullopt;
  const graph::Node* values = (k == "max" || k == "min") ? reduction_values(graph, node) : &node;
  if (!values || !values->meta) return std::nullopt;
  return std::make_pair(&node, values);
}

Epilogue epilogue_of(const graph::OpGraph& graph, const graph::Node& conv, const std::vector<ElementwiseGroup>& groups,
                     const std::set<std::string>& covered) {
  Epilogue e;
  e.covered.insert(conv.name);
  const graph::Node* only = conv.users.size() == 1 ? graph.find(conv.users.front()) : nullptr;
  if (only && !covered.count(only->name)) {
    if (const auto found = channel_reduction(graph, *only)) {
      e.reduction = found->first;
      e.reduced = found->second;
      e.formula = reduction_formula(e.reduction->kind, "(float)COUT");
      e.covered.insert({e.reduction->name, e.reduced->name});
      e.group = group_taking(groups, *e.reduced);
      if (e.group && graph.find(e.group->root)->meta->shape != e.reduced->meta->shape) e.group = nullptr;
      e.produces = e.group ? e.group->root : e.reduced->name;
      if (e.group) e.covered.insert(e.group->members.begin(), e.group->members.end());
      return e;
    }
  }
  // conv [-> 2x2 average pool] [-> elementwise group] -> sum or mean of each image.
  if (only && !covered.count(only->name) && two_by_two_average(graph, *only) && only->users.size() == 1) e.pool = only;
  const graph::Node& value = epilogue_input(conv, e);
  e.group = group_taking(groups, value);
  const graph::Node* root = e.group ? graph.find(e.group->root) : &value;
  if (!root || !root->meta || root->meta->shape != value.meta->shape)
    throw Unsupported(conv.name + ": the elementwise ops after it change its shape (a broadcast)");
  const graph::Node* last = root->users.size() == 1 ? graph.find(root->users.front()) : nullptr;
  if (last && !covered.count(last->name) && sums_each_image(*last)) {
    e.image = true;
    e.reduction = last;
    e.produces = last->name;
    e.covered.insert(last->name);
    if (e.pool) e.covered.insert(e.pool->name);
    if (e.group) e.covered.insert(e.group->members.begin(), e.group->members.end());
    return e;
  }
  e.pool = nullptr;
  e.group = group_taking(groups, conv);
  if (!e.group || e.group->computing_ops == 0)
    throw Unsupported(conv.name + ": its output does not go whole into an elementwise group, a reduction over channels "
                      "or a sum of each image");
  root = graph.find(e.group->root);
  if (!root || !root->meta || root->meta->shape != conv.meta->shape)
    throw Unsupported(conv.name + ": the elementwise ops after it change its shape (a broadcast)");
  // Ops before a norm, softmax or reduction are that kernel's prologue (row_fusion.h), which reads
  // the convolution's output once anyway: taking them here would leave the norm to torch.
  for (const auto& name : root->users)
    if (const graph::Node* user = graph.find(name); user && is_row_kernel(*user))
      throw Unsupported(conv.name + ": the ops after it are the prologue of '" + name + "' (" + user->kind + ")");
  e.produces = e.group->root;
  e.covered.insert(e.group->members.begin(), e.group->members.end());
  return e;
}

// "min over channels + tanh + tanh", "add + hardswish + clamp + mul".
std::string describe_epilogue(const graph::OpGraph& graph, const Epilogue& e) {
  std::string out = e.reduction && !e.image ? e.reduction->kind + " over channels" : e.pool ? "avg_pool2d" : "";
  for (const auto& node : graph.nodes) {
    if (!e.group || !e.group->members.count(node.name)) continue;
    out += (out.empty() ? "" : " + ") + (node.kind == "unknown" ? target_base(node) : node.kind);
  }
  if (e.image) out += (out.empty() ? "" : " + ") + e.reduction->kind + " of each image";
  return out;
}

std::string dims_text(std::int64_t a, std::int64_t b) { return std::to_string(a) + "x" + std::to_string(b); }

Replacement build(const graph::OpGraph& graph, const graph::Node& conv, const Geometry& g, const Layout& l,
                  const Epilogue& e, const KernelRewriteOptions& options) {
  const graph::Node* out_node = graph.find(e.produces);
  if (!out_node || !out_node->meta || out_node->meta->dtype != "float32")
    throw Unsupported(e.produces + ": the epilogue's result is not a float32 tensor");
  const std::string prefix = "_" + e.produces + "_";
  const std::string kernel = "conv_tc_" + e.produces;
  // The element function's index space: the group's (its root's shape), the pool's or the convolution's before an
  // image sum, the reduced one after a reduction over channels.
  const graph::Node& space = e.image ? (e.group ? *graph.find(e.group->root) : epilogue_input(conv, e)) : *out_node;
  ProgramOptions po;
  po.shape = space.meta->shape;
  po.shape_python = prefix + "shape";
  po.prefix = "a";
  po.index64 = std::max(space.meta->elements(), conv.meta->elements()) >= kIndex64From;
  // The kernel knows each value's channel: per-channel operands are read at it, without index math.
  if (!e.reduced) po.channel_index = "c";
  std::set<std::string> members;
  if (e.group) members = e.group->members;
  ElementwiseProgram program(graph, members, po);
  program.bind(e.reduced ? e.reduced->name : epilogue_input(conv, e).name, "v");
  const std::string result = program.value(e.group ? e.group->root : space.name);

  std::string params;
  for (const auto& parameter : program.kernel_parameters()) params += parameter.declaration + ", ";
  const std::map<std::string, std::string, std::less<>> common = {
      {"includes", includes_for(program.dtypes())},
      {"index_t", program.index_type()},
      {"cin", std::to_string(g.cin)},
      {"cout", std::to_string(g.cout)},
      {"kh", std::to_string(g.kh)},
      {"kw", std::to_string(g.kw)},
      {"pad_h", std::to_string(g.pad_h)},
      {"pad_w", std::to_string(g.pad_w)},
      {"rows", std::to_string(kConvTileRows)},
      {"bw", std::to_string(kConvTileColumns)},
      {"mt", std::to_string(kConvWarpTiles)},
      // Without it an image sum's epilogue took 164 registers, one block an SM: 1.0 ms for fusion/20 against
      // 0.73 with two (128 registers). With 1, ptxas gives fusion/09 176 registers instead of 154: 0.67 ms
      // against 0.78 (bench/results/2026-11-30-samples-fusion-tf32-conv-h200, tf32-conv-09-12-25-1af6bde
      // and tf32-conv-08-09-20-1e64e0f).
      {"blocks_per_sm", std::to_string(l.blocks_per_sm)},
      {"pitch", std::to_string(l.pitch)},
      {"channel_stride", std::to_string(l.channel_stride)},
      {"reduce", e.image ? "2" : e.reduction ? "1" : "0"},
      {"pool", e.pool ? "1" : "0"},
      {"identity", e.formula ? e.formula->identity : "0.0f"},
      {"combine", e.formula ? e.formula->combine : "a + b"},
      {"reduced", e.formula ? e.formula->value : "acc"},
      {"functions", device_helpers(program.helpers())},
      {"element_params", program.element_parameters()},
      {"body", join_lines(program.body(), 2)},
      {"result", result},
      {"params", params},
      {"element_args", program.element_arguments("e")},
  };
  Replacement r;
  r.recipe = kRecipe;
  r.space = knowledge::Space::S3;
  r.covered = e.covered;
  r.produces = e.produces;
  r.risky = true;
  for (const bool split : {false, true}) {
    auto values = common;
    values["kernel_name"] = kernel + (split ? "_3xtf32" : "");
    values["split"] = split ? "1" : "0";
    r.kernels.push_back({values["kernel_name"], fill_kernel_template(*options.knowledge, "conv2d_implicit_gemm_tf32.cu", values), {}});
  }
  // The per-image sums: the same source's second entry point.
  if (e.image) r.kernels.push_back({kernel + "_images", r.kernels.front().source, {}});
  r.definitions = {kConvInput, kTf32Allowed};
  r.description = "'" + conv.name + "' (" + std::to_string(g.cin) + " -> " + std::to_string(g.cout) + " channels, " +
                  dims_text(g.kh, g.kw) + ") on TF32 tensor cores with " + describe_epilogue(graph, e) +
                  " in its epilogue: the convolution's output never reaches memory (3xTF32 when cuDNN may not use TF32)";

  const std::string x = prefix + "x", hw = prefix + "hw";
  const std::string& in = g.input->name;
  const std::string count = std::to_string(g.cout);
  auto& s = r.statements;
  s.push_back(hw + " = (" + python_plus(in + ".shape[2]", 2 * g.pad_h - g.kh + 1) + ", " +
              python_plus(in + ".shape[3]", 2 * g.pad_w - g.kw + 1) + ")");
  // The element function's index space (the broadcast sizes of its operands come from it) and the output's shape.
  const std::string pooled = e.pool ? "(" + hw + "[0] // 2, " + hw + "[1] // 2)" : hw;
  const std::size_t out_rank = out_node->meta->shape.size();
  if (e.image) {
    s.push_back(prefix + "shape = torch.Size((" + in + ".shape[0], " + count + ") + " + pooled + ")");
  } else if (e.reduction) {
    s.push_back(prefix + "shape = torch.Size((" + in + ".shape[0]" + (out_rank == 4 ? ", 1)" : ",)") + " + " + hw + ")");
  } else {
    s.push_back(prefix + "shape = torch.Size((" + in + ".shape[0], " + count + ") + " + hw + ")");
  }
  s.push_back("assert " + in + ".dim() == 4 and " + in + ".shape[1] == " + std::to_string(g.cin) + " and " + in +
              ".dtype == torch.float32 and " + g.weight + ".shape == (" + count + ", " + std::to_string(g.cin) + ", " +
              std::to_string(g.kh) + ", " + std::to_string(g.kw) + "), \"kernel " + kernel +
              " computes a float32 conv2d of " + std::to_string(g.cin) + " channels into " + count + "\"");
  if (!po.index64)
    s.push_back("assert " + in + ".shape[0] * " + count + " * " + hw + "[0] * " + hw + "[1] < 2**31, \"kernel " + kernel +
                " indexes with 32 bits\"");
  const std::vector<const ElementwiseProgram*> programs = {&program};
  if (auto check = dtype_check(programs, kernel); !check.empty()) s.push_back(check);
  s.push_back(x + " = _hiera_conv_input(" + in + ")");
  const std::string tiles_per_image = "((" + hw + "[0] + " + std::to_string(kConvTileRows - 1) + ") // " +
                                      std::to_string(kConvTileRows) + ") * ((" + hw + "[1] + " +
                                      std::to_string(kConvTileColumns - 1) + ") // " + std::to_string(kConvTileColumns) + ")";
  std::string target = e.produces;
  if (e.image) {
    target = prefix + "sums";
    s.push_back(target + " = torch.empty(" + in + ".shape[0] * " + tiles_per_image + ", dtype=torch.float32, device=" +
                in + ".device)");
    s.push_back(e.produces + " = torch.empty((" + in + ".shape[0]," + (out_rank == 4 ? " 1, 1, 1" : "") +
                "), dtype=torch.float32, device=" + in + ".device)");
  } else {
    s.push_back(e.produces + " = torch.empty(" + prefix + "shape, dtype=torch.float32, device=" + in + ".device)");
  }
  const std::string arguments = join_arguments(
      {x, g.weight + ".contiguous()", g.bias == "None" ? "None" : g.bias + ".contiguous()", launch_arguments(program),
       target, in + ".shape[0]", in + ".shape[2]", x + ".shape[3]", hw + "[0]", hw + "[1]"});
  s.push_back("_kernel(\"" + kernel + "\" if _hiera_cudnn_tf32() else \"" + kernel + "_3xtf32\")(_grid(" + in +
              ".shape[0] * " + tiles_per_image + " * " + std::to_string(kThreads) + ", " + std::to_string(kThreads) +
              ", " + std::to_string(l.blocks_per_sm) + "), " + std::to_string(kThreads) + ", " + arguments +
              ", shared_mem=" + std::to_string(l.shared_bytes) + ")");
  if (e.image) {
    // mean: torch multiplies the sum by 1 / count.
    const std::string scale = e.reduction->kind == "mean"
                                  ? "1.0 / (" + count + " * " + prefix + "shape[2] * " + prefix + "shape[3])"
                                  : "1.0";
    s.push_back("_kernel(\"" + kernel + "_images\")(max(" + in + ".shape[0], 1), 256, " + target + ", " + e.produces +
                ", " + in + ".shape[0], " + tiles_per_image + ", " + scale + ")");
  }
  return r;
}

}  // namespace

std::vector<Replacement> find_tensor_core_convs(const graph::OpGraph& graph, const std::set<std::string>& covered,
                                                const KernelRewriteOptions& options,
                                                std::vector<SkippedRewrite>& skipped) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  std::vector<Replacement> out;
  const std::vector<ElementwiseGroup> groups = elementwise_groups(graph, covered);
  for (const auto& conv : graph.nodes) {
    if (conv.kind != "conv2d" || covered.count(conv.name) || conv.users.empty() || mutates(graph, conv)) continue;
    try {
      const Geometry g = geometry(graph, conv);
      const Layout l = layout(g);
      const Epilogue e = epilogue_of(graph, conv, groups, covered);
      for (const auto& name : e.covered)
        if (name != conv.name && covered.count(name)) throw Unsupported(name + " is already taken by another rewrite");
      out.push_back(build(graph, conv, g, l, e, options));
    } catch (const Unsupported& e) {
      skipped.push_back({conv.name, std::string("TF32 implicit-GEMM convolution: ") + e.what()});
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
