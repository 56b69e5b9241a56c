#include "engine/propose/recipes/kernels/row_fusion.h"

#include <algorithm>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/kernels/channels_last_epilogue.h"
#include "engine/propose/recipes/kernels/conv_bias.h"
#include "engine/propose/recipes/kernels/elementwise_fusion.h"
#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/kernel_template.h"
#include "engine/propose/recipes/kernels/launch_statements.h"
#include "engine/propose/recipes/kernels/node_args.h"
#include "engine/propose/recipes/kernels/unsupported.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes::kernels {

namespace {

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
}

// Every user of every covered node but `produces` is covered too.
bool closed(const graph::OpGraph& graph, const std::set<std::string>& covered, const std::string& produces) {
  for (const auto& name : covered) {
    if (name == produces) continue;
    const graph::Node* node = graph.find(name);
    if (!node) return false;
    for (const auto& user : node->users)
      if (!covered.count(user)) return false;
  }
  return true;
}

std::string op_list(const graph::OpGraph& graph, const std::set<std::string>& members) {
  std::string out;
  for (const auto& node : graph.nodes) {
    if (!members.count(node.name)) continue;
    if (!out.empty()) out += " + ";
    out += node.kind == "unknown" ? target_base(node) : node.kind;
  }
  return out;
}

// The templates' input and output functions (their parameters, bodies, results and call arguments).
void set_function_values(std::map<std::string, std::string, std::less<>>& values, const ElementwiseProgram& in,
                         const std::string& in_result, const ElementwiseProgram& out, const std::string& out_result) {
  values["input_params"] = in.element_parameters();
  values["input_body"] = join_lines(in.body(), 2);
  values["input_result"] = in_result;
  values["input_args"] = in.element_arguments("i");
  values["output_params"] = out.element_parameters();
  values["output_body"] = join_lines(out.body(), 2);
  values["output_result"] = out_result;
  values["output_args"] = out.element_arguments("i");
}

// Blocks per SM of the split-statistics kernels and the elements each block takes at least.
constexpr int kSplitBlocksPerSm = 16;

// Threads per row of a reduction over a convolution's channels in
// channels_last: rows of C contiguous values, eight values a thread, so that
// a warp reads several rows at once.
SegmentConfig short_row_config(std::int64_t cols) {
  int threads = 4;
  while (threads < 32 && static_cast<std::int64_t>(threads) * 8 < cols) threads *= 2;
  return {threads, 256 / threads};
}

// `broadcast`: the epilogue reads the op's per-row value over the whole row
// (x * rsqrt(mean(x^2) + eps)): only the row-in-registers kernel can do that,
// with its any-length entry point for rows of another length.
// `nhwc`: the op's input is a convolution's output, which the replacement
// computes in channels_last from this converted input; `op` is then given
// over that memory order (channels_last_form).
std::vector<Replacement> build(const graph::OpGraph& graph, const SegmentedOp& op, const ElementwiseGroup* prologue,
                               const ElementwiseGroup* epilogue, const KernelRewriteOptions& options,
                               bool broadcast = false, const ChannelsLastInput* nhwc = nullptr) {
  const bool per_element = op.per_element || broadcast;
  const graph::Node& node = *op.node;
  const graph::Node* input = graph.find(op.input);
  if (!input || !input->meta) throw Unsupported(node.name + ": its input is not a tensor");
  const graph::Node* value_node = graph.find(op.result.empty() ? node.name : op.result);
  if (!value_node || !value_node->meta) throw Unsupported(node.name + " has no tensor result");
  if (nhwc && (prologue || broadcast)) throw Unsupported(node.name + ": channels_last only for the op on the convolution");

  std::set<std::string> covered = {node.name, value_node->name};
  if (prologue) covered.insert(prologue->members.begin(), prologue->members.end());
  if (epilogue) covered.insert(epilogue->members.begin(), epilogue->members.end());
  // The op reads a convolution module's output alone: the conv runs without
  // its bias, which the kernel adds as it reads each element.
  std::optional<UnbiasedConvolution> unbiased;
  std::string conv_statement;
  if (nhwc) {
    unbiased = without_bias(graph, *input, nhwc->python);
    const graph::Node* conv_input = argument_node(graph, *input, 0, "input");
    if (!conv_input) throw Unsupported(input->name + ": its input is not a node");
    conv_statement = input->name + " = " +
                     (unbiased ? unbiased->call : substitute_names(input->code, {{conv_input->name, nhwc->python}}));
    covered.insert(input->name);
  } else if (!prologue && input->users.size() == 1 && !input->args.empty() && input->args[0].is_node()) {
    unbiased = without_bias(graph, *input, input->args[0].node);
  }
  if (unbiased) covered.insert(input->name);
  const std::string produces = epilogue ? epilogue->root : value_node->name;
  if (!closed(graph, covered, produces)) throw Unsupported(node.name + ": a fused value is also read elsewhere");
  const graph::Node* result = graph.find(produces);
  const KernelDtype* out_type = kernel_dtype(result->meta->dtype);
  if (!out_type) throw Unsupported(produces + " is " + result->meta->dtype);

  const std::string prefix = "_" + produces + "_";
  const std::string kernel = "fused_" + produces + (nhwc ? nhwc->layout.kernel_suffix : "");
  const bool index64 = input->meta->elements() >= kIndex64From;
  // In channels_last the kernels index the input (and a norm's output) in memory order.
  const std::string in_shape = prefix + (nhwc ? "memory_shape" : "in_shape");

  ProgramOptions in_options;
  in_options.shape = input->meta->shape;
  in_options.shape_python = in_shape;
  in_options.prefix = "a";
  in_options.index64 = index64;
  if (nhwc) in_options.memory_order = nhwc->layout.order;
  std::set<std::string> in_members = prologue ? prologue->members : std::set<std::string>{};
  if (unbiased) in_members.insert(input->name);
  ElementwiseProgram in_program(graph, in_members, in_options);
  if (unbiased) in_program.set_custom(input->name, plus_bias(unbiased->bias));
  const std::string input_result = in_program.value(op.input);

  ProgramOptions out_options;
  out_options.shape = per_element ? input->meta->shape : value_node->meta->shape;
  out_options.shape_python = per_element ? in_shape : prefix + "out_shape";
  out_options.prefix = "b";
  out_options.index64 = index64;
  if (nhwc && per_element) out_options.memory_order = nhwc->layout.order;
  std::set<std::string> out_members = {value_node->name};
  if (epilogue) out_members.insert(epilogue->members.begin(), epilogue->members.end());
  if (per_element && prologue) out_members.insert(prologue->members.begin(), prologue->members.end());
  ElementwiseProgram out_program(graph, out_members, out_options);
  if (per_element) out_program.bind(op.input, "x");
  out_program.set_custom(value_node->name, op.value);
  const std::string output_result = out_program.value(produces);
  // A per-row epilogue cannot read what only the prologue computes, per element.
  for (const auto& leaf : out_program.leaves())
    if (covered.count(leaf.python)) throw Unsupported(produces + " reads " + leaf.python + ", which the kernel does not keep");
  // Other tensors of the input's shape would have to be converted to channels_last too.
  if (nhwc && per_element)
    for (const auto* program : {&in_program, &out_program})
      for (const auto& leaf : program->leaves())
        if (leaf.full_size && leaf.python != input->name)
          throw Unsupported(produces + " reads " + leaf.python + " of the convolution's shape, which is not channels_last");

  // A norm's segments split across blocks: its statistics kernels and pass; in channels_last always.
  const bool split = op.register_stats == RegisterStats::Norm && op.inner == 1 && per_element && !broadcast &&
                     (nhwc || op.cols >= kSplitSegmentFrom);
  if (nhwc && per_element && !split) throw Unsupported(node.name + ": no channels_last kernel for " + op.description);
  const SegmentConfig config = nhwc                                    ? short_row_config(op.cols)
                               : op.template_name == "row_logsumexp.cu" ? online_softmax_config(op.cols)
                                                                       : segment_config(op.cols);
  // A dimension that is not the last: the template's strided entry point, one thread per column.
  const bool strided = op.inner > 1;
  const std::string entry = strided ? kernel + "_strided" : kernel;
  std::vector<std::string> dtypes = in_program.dtypes();
  for (const auto& dtype : out_program.dtypes()) dtypes.push_back(dtype);
  dtypes.push_back(result->meta->dtype);
  std::vector<std::string> helpers = in_program.helpers();
  for (const auto& helper : out_program.helpers()) helpers.push_back(helper);
  std::string params;
  for (const auto& parameter : in_program.kernel_parameters()) params += parameter.declaration + ", ";
  for (const auto& parameter : out_program.kernel_parameters()) params += parameter.declaration + ", ";

  auto values = op.template_values;
  values["kernel_name"] = kernel;
  values["includes"] = includes_for(dtypes);
  values["index_t"] = in_program.index_type();
  values["out_t"] = out_type->cuda_type;
  values["segment_threads"] = std::to_string(config.segment_threads);
  values["rows_per_block"] = std::to_string(config.rows_per_block);
  values["functions"] = device_helpers(helpers);
  values["params"] = params;
  set_function_values(values, in_program, input_result, out_program, output_result);

  Replacement replacement;
  replacement.recipe = nhwc ? "s3_channels_last_conv_reduction" : op.recipe;
  replacement.space = knowledge::Space::S3;
  replacement.covered = covered;
  replacement.produces = produces;
  const std::string layout = strided                            ? "one thread per strided column"
                             : config.segment_threads < 32      ? std::to_string(config.rows_per_block / (32 / config.segment_threads)) +
                                                                  " warps of " + std::to_string(32 / config.segment_threads) + " rows each per block"
                             : config.segment_threads == 32     ? "one warp per segment"
                             : config.rows_per_block > 1        ? std::to_string(config.segment_threads) + " threads per segment, " +
                                                                  std::to_string(config.rows_per_block) + " segments per block"
                                                                : "one block of " + std::to_string(config.segment_threads) + " threads per segment";
  // "; 'conv' without its bias, added in the kernel"
  const std::string bias_note = unbiased ? "; '" + input->name + "' without its bias, added in the kernel" : "";
  // "'conv' in channels_last, then "
  const std::string conv_note = nhwc ? "'" + input->name + "' in " + nhwc->layout.format.substr(6) + ", then " : "";
  const std::string over_channels = nhwc && !per_element ? ", each row the channels of one position" : "";
  replacement.description = conv_note + op_list(graph, covered) + ": " + op.description + " fused into one kernel (" +
                            layout + over_channels + ")" + bias_note;
  // A reduction used over its row has no streaming template: only its row-in-registers kernel, below.
  if (nhwc) {
    replacement.kernels.push_back(nhwc->transpose);
    replacement.definitions.push_back(nhwc->definition);
  }

  const std::vector<const ElementwiseProgram*> programs = {&in_program, &out_program};
  auto& s = replacement.statements;
  if (nhwc) s.push_back(conv_statement);
  if (unbiased && !nhwc) s.push_back(input->name + " = " + unbiased->call);
  s.push_back(prefix + "in_shape = " + broadcast_shape(in_program, input->meta->shape));
  if (nhwc) {
    std::string order;
    for (const auto d : nhwc->layout.order) order += (order.empty() ? "" : ", ") + std::to_string(d);
    s.push_back(prefix + "memory_shape = torch.Size([" + prefix + "in_shape[d] for d in (" + order + ")])");
  }
  if (auto check = dtype_check(programs, kernel); !check.empty()) s.push_back(check);
  s.push_back(prefix + "rows = " + op.rows_python(prefix + "in_shape"));
  s.push_back(prefix + "cols = " + op.cols_python(prefix + "in_shape"));
  if (strided) s.push_back(prefix + "inner = " + op.inner_python(prefix + "in_shape"));
  if (!per_element) s.push_back(prefix + "out_shape = " + op.output_shape_python(prefix + "in_shape"));
  const bool channels_last_out = nhwc && per_element;
  s.push_back(produces + " = torch.empty(" + prefix + (per_element ? "in_shape" : "out_shape") + ", dtype=" +
              output_dtype(programs, result->meta->dtype, options.allowed_precisions) +
              ", device=" + output_device(programs) +
              (channels_last_out ? ", memory_format=" + nhwc->layout.format : "") + ")");
  if (!index64)
    s.push_back("assert " + prefix + "in_shape.numel() < 2**31, \"kernel " + kernel + " indexes with 32 bits\"");
  // In channels_last the kernels read the input's memory as it is (cuDNN's output for a channels_last input).
  std::map<std::string, std::string> prepared;
  if (nhwc)
    for (const auto* program : {&in_program, &out_program})
      for (const auto& leaf : program->leaves())
        if (leaf.full_size && (program == &in_program || per_element))
          prepared[leaf.pointer] = leaf.python + ".contiguous(memory_format=" + nhwc->layout.format + ")";
  const std::string in_arguments =
      join_arguments({launch_arguments(in_program, prepared), launch_arguments(out_program, prepared)});
  const std::string arguments =
      join_arguments({in_arguments, produces, "nvrtc_runtime.int64(" + prefix + "rows)",
                      "nvrtc_runtime.int64(" + prefix + "cols)", strided ? "nvrtc_runtime.int64(" + prefix + "inner)" : ""});
  std::string streaming_launch;
  if (strided) {
    streaming_launch =
        "_kernel(\"" + entry + "\")(_grid(" + prefix + "rows * " + prefix + "inner, 256), 256, " + arguments + ")";
  } else {
    const std::string block =
        "(" + std::to_string(config.segment_threads) + ", " + std::to_string(config.rows_per_block) + ")";
    // Short rows: more blocks, as each thread has few loads in flight.
    streaming_launch = "_kernel(\"" + entry + "\")(_grid(" + prefix + "rows, " +
                       std::to_string(config.rows_per_block) + (nhwc ? ", 8" : "") + "), " + block + ", " + arguments + ")";
  }
  std::vector<Replacement> variants;
  if (split) {
    // Samples of rows x channels (contiguous segments: one channel); in channels_last the
    // samples are the batch, the rows the positions, the statistics per group of channels.
    Replacement split_replacement = replacement;
    split_replacement.recipe = nhwc ? "s3_channels_last_conv_reduction" : "s3_split_welford_norm";
    split_replacement.description = conv_note + op_list(graph, covered) + ": " + op.description +
                                    " with its statistics split across blocks (partial Welford statistics, their merge, "
                                    "then one elementwise pass)" + bias_note;
    // The pass loads the full-size operands as 16-byte packs: programs that take them by value.
    ProgramOptions in_packed = in_options, out_packed = out_options;
    in_packed.full_size_by_value = out_packed.full_size_by_value = true;
    ElementwiseProgram in_values(graph, in_members, in_packed);
    if (unbiased) in_values.set_custom(input->name, plus_bias(unbiased->bias));
    const std::string in_result = in_values.value(op.input);
    ElementwiseProgram out_values(graph, out_members, out_packed);
    out_values.bind(op.input, "x");
    out_values.set_custom(value_node->name, op.value);
    const std::string out_result = out_values.value(produces);
    int widest = out_type->bytes;
    for (const auto* program : {&in_values, &out_values})
      for (const auto& leaf : program->leaves())
        if (leaf.full_size) widest = std::max(widest, kernel_dtype(leaf.dtype)->bytes);
    const int vec = 16 / widest;
    auto split_values = values;
    split_values["vec"] = std::to_string(vec);
    set_function_values(split_values, in_values, in_result, out_values, out_result);
    std::string loads = in_values.vector_loads("v");
    if (const std::string more = out_values.vector_loads("v"); !more.empty()) loads += (loads.empty() ? "" : "\n    ") + more;
    split_values["vector_loads"] = loads;
    split_values["lane_input_args"] = in_values.lane_arguments("k");
    split_values["lane_output_args"] = out_values.lane_arguments("k");
    const std::string source = fill_kernel_template(*options.knowledge, "welford_split.cu", split_values);
    split_replacement.kernels.insert(split_replacement.kernels.begin(), {{kernel + "_partial", source, {}},
                                                                         {kernel + "_finalize", source, {}},
                                                                         {kernel + "_vec", source, {}},
                                                                         {kernel, source, {}}});
    auto& t = split_replacement.statements;
    const std::string p = prefix;
    // The full-size operands once, ready for the alignment check and both kernels that read them.
    std::map<std::string, std::string> ready;
    std::vector<std::string> aligned;
    for (const auto* program : {&in_values, &out_values})
      for (const auto& leaf : program->leaves())
        if (leaf.full_size) {
          const auto it = prepared.find(leaf.pointer);
          t.push_back(p + leaf.pointer + " = " + (it != prepared.end() ? it->second : leaf.python + ".contiguous()"));
          ready[leaf.pointer] = p + leaf.pointer;
          aligned.push_back(p + leaf.pointer);
        }
    const std::string split_arguments =
        join_arguments({launch_arguments(in_values, ready), launch_arguments(out_values, ready)});
    t.push_back(p + "channels = " + (nhwc ? p + "in_shape[1]" : std::string("1")));
    t.push_back(p + "per_group = " + (nhwc ? op.per_group_python(p + "in_shape") : std::string("1")));
    if (nhwc) t.push_back("assert " + p + "channels <= 256, \"kernel " + kernel + " takes at most 256 channels\"");
    t.push_back(p + "n = " + p + "rows * " + p + "cols * " + p + "channels");
    const std::string per_sample = " // max(1, " + p + "rows))";
    t.push_back(p + "splits = min(max(1, " + p + "cols), 65535, -(-_grid(" + p + "n, 2048, " +
                std::to_string(kSplitBlocksPerSm) + ")" + per_sample + ")");
    t.push_back(p + "partial = torch.empty(" + p + "rows * (" + p + "channels // " + p + "per_group) * " + p +
                "splits * 3, dtype=torch.float32, device=" + produces + ".device)");
    t.push_back(p + "stats = torch.empty(" + p + "rows * " + p + "channels * 2, dtype=torch.float32, device=" +
                produces + ".device)");
    const std::string guard = " if " + p + "n else None";
    t.push_back("_kernel(\"" + kernel + "_partial\")((" + p + "rows, " + p + "splits), 256, " +
                join_arguments({split_arguments, p + "partial", "nvrtc_runtime.int64(" + p + "cols)", p + "channels",
                                p + "per_group", p + "splits"}) +
                ")" + guard);
    t.push_back("_kernel(\"" + kernel + "_finalize\")(_grid(" + p + "rows * " + p + "channels, 256), 256, " + p +
                "partial, " + p + "stats, nvrtc_runtime.int64(" + p + "rows), " + p + "channels, " + p + "per_group, " +
                p + "splits)" + guard);
    // Packs when every operand and the output are aligned and no pack straddles a sample or a position.
    const std::string v = std::to_string(vec);
    std::string alignment = "(";
    for (const auto& name : aligned) alignment += name + ".data_ptr() | ";
    alignment += produces + ".data_ptr()) % 16 == 0 and " + p + "cols * " + p + "channels % " + v + " == 0 and (" + p +
                 "channels == 1 or " + p + "channels % " + v + " == 0)";
    t.push_back(p + "vec = " + alignment);
    t.push_back("(_kernel(\"" + kernel + "_vec\") if " + p + "vec else _kernel(\"" + kernel + "\"))((" + p +
                "rows, min(65535, -(-_grid(" + p + "n // (" + v + " if " + p + "vec else 1), 1024, " +
                std::to_string(kSplitBlocksPerSm) + ")" + per_sample + ")), 256, " +
                join_arguments({split_arguments, p + "stats", produces, "nvrtc_runtime.int64(" + p + "cols)", p + "channels"}) +
                ")" + guard);
    if (channels_last_out && !users_layout_agnostic(graph, *result)) {
      t.push_back(produces + " = " + produces + ".contiguous()");
      split_replacement.description += ", made contiguous after";
    }
    variants.push_back(std::move(split_replacement));
    if (nhwc) return variants;
  }
  if (!broadcast)
    replacement.kernels.insert(replacement.kernels.begin(),
                               {entry, fill_kernel_template(*options.knowledge, op.template_name, values), {}});
  const auto registers = strided || nhwc ? std::nullopt : registers_config(op.cols);
  if (broadcast && !registers)
    throw Unsupported(node.name + ": rows of " + std::to_string(op.cols) + " are too long to hold in registers");
  s.push_back(streaming_launch);
  if (per_element && op.register_stats != RegisterStats::None && registers) {
    // The same statements, the last one launching the row-in-registers kernel
    // for rows of the captured length and the streaming kernel otherwise.
    const SegmentConfig held = registers.value();  // (a copy: g++ -O1 warns of the optional's reads otherwise)
    Replacement in_registers = replacement;
    in_registers.recipe = "s3_row_in_registers";
    const std::string threads = held.segment_threads == 32
                                    ? std::string("one warp per row")
                                    : std::to_string(held.segment_threads) + " threads per row";
    in_registers.description = op_list(graph, covered) + ": " + op.description +
                               (broadcast ? " and its use over each row" : "") + " fused into one kernel (rows of " +
                               std::to_string(op.cols) + " held in registers, " + threads + ")" + bias_note;
    auto row_values = values;
    row_values["kernel_name"] = kernel + "_rows";
    row_values["cols"] = std::to_string(op.cols);
    row_values["segment_threads"] = std::to_string(held.segment_threads);
    row_values["rows_per_block"] = std::to_string(held.rows_per_block);
    row_values["stats"] = std::to_string(static_cast<int>(op.register_stats));
    for (const char* key : {"eps", "identity", "combine"})
      if (!row_values.count(key)) row_values[key] = "0.0f";
    const KernelSource row_kernel = {kernel + "_rows",
                                     fill_kernel_template(*options.knowledge, "row_registers.cu", row_values), {}};
    const std::string rpb = std::to_string(held.rows_per_block);
    const std::string row_launch = "((" + prefix + "rows + " + rpb + " - 1) // " + rpb + ", (" +
                                   std::to_string(held.segment_threads) + ", " + rpb + "), " +
                                   join_arguments({launch_arguments(in_program), launch_arguments(out_program), produces,
                                                   "nvrtc_runtime.int64(" + prefix + "rows)"});
    const std::string fallback = broadcast ? "_kernel(\"" + kernel + "_rows_any_length\")" + row_launch +
                                                 ", nvrtc_runtime.int64(" + prefix + "cols))"
                                           : streaming_launch;
    if (broadcast) {
      // The same source, its other entry point: each KernelSource is one name _kernel() compiles.
      in_registers.kernels = {row_kernel, {kernel + "_rows_any_length", row_kernel.source, {}}};
    } else {
      in_registers.kernels.insert(in_registers.kernels.begin(), row_kernel);
    }
    in_registers.statements.back() = "_kernel(\"" + kernel + "_rows\")" + row_launch + ") if " + prefix +
                                     "cols == " + std::to_string(op.cols) + " else " + fallback;
    variants.push_back(std::move(in_registers));
  }
  if (!broadcast) variants.push_back(std::move(replacement));
  return variants;
}

// `op` over the memory of its input, a convolution's output, in channels_last:
// a reduction over the channels alone becomes one over contiguous rows of C
// (a position's channels); a norm over groups of channels keeps its segments,
// which the split-statistics kernels find by channel. Throws Unsupported for the rest.
SegmentedOp channels_last_form(const SegmentedOp& op, const graph::Node& conv) {
  const auto& shape = conv.meta->shape;
  SegmentedOp out = op;
  if (op.per_element) {
    if (op.register_stats != RegisterStats::Norm || !op.per_group_python || op.inner != 1)
      throw Unsupported(op.node->name + ": " + op.description + " over channels_last memory");
    if (shape[1] > 256) throw Unsupported(op.node->name + ": more than 256 channels");
    out.rows = shape[0];
    out.cols = product(shape, 2, shape.size());
    out.rows_python = [](const std::string& s) { return s + "[0]"; };
    out.cols_python = [](const std::string& s) { return s + "[2:].numel()"; };
    return out;
  }
  if (op.inner == 1 || op.rows != shape[0] || op.cols != shape[1] || op.template_name != "row_reduce.cu")
    throw Unsupported(op.node->name + ": not a reduction over the channels alone");
  out.rows = op.rows * op.inner;
  out.cols = op.cols;
  out.inner = 1;
  out.rows_python = [](const std::string& s) { return s + ".numel() // max(1, " + s + "[1])"; };
  out.cols_python = [](const std::string& s) { return s + "[1]"; };
  return out;
}

}  // namespace

std::optional<SegmentConfig> registers_config(std::int64_t cols) {
  if (cols <= 0) return std::nullopt;
  // A warp per row up to 32 values a thread; longer rows a block, at most 16 values a thread.
  if (cols <= 32 * kMaxWarpRowValues) return SegmentConfig{32, 4};
  int threads = 64;
  while (threads < 1024 && static_cast<std::int64_t>(threads) * kMaxBlockRowValues < cols) threads *= 2;
  if (static_cast<std::int64_t>(threads) * kMaxBlockRowValues < cols) return std::nullopt;
  return SegmentConfig{threads, 1};
}

SegmentConfig segment_config(std::int64_t cols) {
  if (cols <= 1024) return {32, 8};
  // About eight elements per thread, 128 to 1024 threads.
  int threads = 128;
  while (threads < 1024 && static_cast<std::int64_t>(threads) * 8 < cols) threads *= 2;
  return {threads, 1};
}

SegmentConfig online_softmax_config(std::int64_t cols) {
  if (cols <= 1024) return segment_config(cols);
  int threads = 128;
  while (threads < 512 && static_cast<std::int64_t>(threads) * 32 < cols) threads *= 2;
  return {threads, 512 / threads};
}

std::vector<std::int64_t> normalized_dims(std::vector<std::int64_t> dims, std::size_t rank) {
  for (auto& d : dims) {
    if (d < 0) d += static_cast<std::int64_t>(rank);
    if (d < 0 || d >= static_cast<std::int64_t>(rank)) throw Unsupported("dimension out of range");
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

std::int64_t product(const std::vector<std::int64_t>& shape, std::size_t from, std::size_t to) {
  std::int64_t out = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) out *= shape[i];
  return out;
}

std::vector<Replacement> fuse_segmented_op(const graph::OpGraph& graph, const std::vector<ElementwiseGroup>& groups,
                                           const std::set<std::string>& covered, const SegmentedOp& op,
                                           const KernelRewriteOptions& options) {
  if (!options.knowledge) throw std::invalid_argument("find_kernel_rewrites needs options.knowledge for its templates");
  // The input may be another kernel's output (a produced node); the op itself must be free.
  if (covered.count(op.node->name) || covered.count(op.result)) throw Unsupported(op.node->name + " is taken");
  const ElementwiseGroup* prologue = group_with_root(groups, op.input);
  if (prologue && intersects(prologue->members, covered)) prologue = nullptr;
  // The epilogue: the one group that holds every user of the op's value, with that value's shape.
  const graph::Node* value_node = graph.find(op.result.empty() ? op.node->name : op.result);
  if (!value_node || !value_node->meta) throw Unsupported(op.node->name + " has no tensor result");
  const ElementwiseGroup* epilogue = nullptr;
  for (const auto& user : value_node->users) {
    const ElementwiseGroup* group = group_with_member(groups, user);
    if (!group || (epilogue && group != epilogue)) {
      epilogue = nullptr;
      break;
    }
    epilogue = group;
  }
  if (epilogue) {
    const graph::Node* root = graph.find(epilogue->root);
    if (intersects(epilogue->members, covered) || !root || !root->meta || root->meta->shape != value_node->meta->shape)
      epilogue = nullptr;
  }
  // A reduction whose every use is one elementwise group over the reduced rows
  // (the group's result has the input's shape): one kernel for the row's value and its use.
  if (op.register_stats == RegisterStats::Reduction && !op.per_element && op.inner == 1 && !epilogue &&
      !value_node->users.empty()) {
    const ElementwiseGroup* row_use = group_with_member(groups, value_node->users.front());
    const graph::Node* input = graph.find(op.input);
    bool holds_every_use = row_use && !intersects(row_use->members, covered);
    for (const auto& user : value_node->users) holds_every_use = holds_every_use && row_use->members.count(user);
    const graph::Node* root = holds_every_use ? graph.find(row_use->root) : nullptr;
    if (root && root->meta && input && input->meta && root->meta->shape == input->meta->shape) {
      std::vector<const ElementwiseGroup*> prologues = {prologue};
      if (prologue) prologues.push_back(nullptr);
      for (const ElementwiseGroup* pro : prologues) {
        try {
          return build(graph, op, pro, row_use, options, true);
        } catch (const Unsupported&) {
          // without its prologue, or else the reduction alone, below
        }
      }
    }
  }
  // The op on a convolution's output alone: that convolution in channels_last first.
  std::vector<Replacement> variants;
  const graph::Node* input = graph.find(op.input);
  if (input && input->meta && convolution_rank(*input) && input->users.size() == 1 && !covered.count(input->name)) {
    for (const ElementwiseGroup* epi : {epilogue, static_cast<const ElementwiseGroup*>(nullptr)}) {
      try {
        const ChannelsLastInput converted = channels_last_input(graph, *input, options);
        variants = build(graph, channels_last_form(op, *input), nullptr, epi, options, false, &converted);
        break;
      } catch (const Unsupported&) {
        // the contiguous kernels below
      }
      if (!epilogue) break;
    }
  }
  std::vector<std::pair<const ElementwiseGroup*, const ElementwiseGroup*>> attempts = {{prologue, epilogue}};
  if (epilogue) attempts.push_back({prologue, nullptr});
  if (prologue) attempts.push_back({nullptr, nullptr});
  // The last attempt is the op alone: its failure is why nothing came of it.
  std::string failure;
  for (const auto& [pro, epi] : attempts) {
    try {
      for (auto& replacement : build(graph, op, pro, epi, options)) variants.push_back(std::move(replacement));
      return variants;
    } catch (const Unsupported& e) {
      failure = e.what();
    }
  }
  if (!variants.empty()) return variants;
  throw Unsupported(failure);
}

}  // namespace hiera::engine::propose::recipes::kernels
