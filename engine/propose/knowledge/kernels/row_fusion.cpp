#include "engine/propose/knowledge/kernels/row_fusion.h"

#include <algorithm>
#include <optional>

#include "engine/propose/knowledge/kernels/conv_bias.h"
#include "engine/propose/knowledge/kernels/elementwise_fusion.h"
#include "engine/propose/knowledge/kernels/kernel_dtypes.h"
#include "engine/propose/knowledge/kernels/kernel_template.h"
#include "engine/propose/knowledge/kernels/launch_statements.h"
#include "engine/propose/knowledge/kernels/node_args.h"
#include "engine/propose/knowledge/kernels/unsupported.h"

namespace hiera::engine::propose::knowledge_proposer::kernels {

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

// `broadcast`: the epilogue reads the op's per-row value over the whole row
// (x * rsqrt(mean(x^2) + eps)): only the row-in-registers kernel can do that,
// with its any-length entry point for rows of another length.
std::vector<Replacement> build(const graph::OpGraph& graph, const SegmentedOp& op, const ElementwiseGroup* prologue,
                               const ElementwiseGroup* epilogue, const KernelRewriteOptions& options,
                               bool broadcast = false) {
  const bool per_element = op.per_element || broadcast;
  const graph::Node& node = *op.node;
  const graph::Node* input = graph.find(op.input);
  if (!input || !input->meta) throw Unsupported(node.name + ": its input is not a tensor");
  const graph::Node* value_node = graph.find(op.result.empty() ? node.name : op.result);
  if (!value_node || !value_node->meta) throw Unsupported(node.name + " has no tensor result");

  std::set<std::string> covered = {node.name, value_node->name};
  if (prologue) covered.insert(prologue->members.begin(), prologue->members.end());
  if (epilogue) covered.insert(epilogue->members.begin(), epilogue->members.end());
  // The op reads a convolution module's output alone: the conv runs without
  // its bias, which the kernel adds as it reads each element.
  std::optional<UnbiasedConvolution> unbiased;
  if (!prologue && input->users.size() == 1 && !input->args.empty() && input->args[0].is_node())
    unbiased = without_bias(graph, *input, input->args[0].node);
  if (unbiased) covered.insert(input->name);
  const std::string produces = epilogue ? epilogue->root : value_node->name;
  if (!closed(graph, covered, produces)) throw Unsupported(node.name + ": a fused value is also read elsewhere");
  const graph::Node* result = graph.find(produces);
  const KernelDtype* out_type = kernel_dtype(result->meta->dtype);
  if (!out_type) throw Unsupported(produces + " is " + result->meta->dtype);

  const std::string prefix = "_" + produces + "_";
  const std::string kernel = "fused_" + produces;
  const bool index64 = input->meta->elements() >= kIndex64From;

  ProgramOptions in_options;
  in_options.shape = input->meta->shape;
  in_options.shape_python = prefix + "in_shape";
  in_options.prefix = "a";
  in_options.index64 = index64;
  std::set<std::string> in_members = prologue ? prologue->members : std::set<std::string>{};
  if (unbiased) in_members.insert(input->name);
  ElementwiseProgram in_program(graph, in_members, in_options);
  if (unbiased) in_program.set_custom(input->name, plus_bias(unbiased->bias));
  const std::string input_result = in_program.value(op.input);

  ProgramOptions out_options;
  out_options.shape = per_element ? input->meta->shape : value_node->meta->shape;
  out_options.shape_python = prefix + (per_element ? "in_shape" : "out_shape");
  out_options.prefix = "b";
  out_options.index64 = index64;
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

  const SegmentConfig config = segment_config(op.cols);
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
  values["input_params"] = in_program.element_parameters();
  values["input_body"] = join_lines(in_program.body(), 2);
  values["input_result"] = input_result;
  values["output_params"] = out_program.element_parameters();
  values["output_body"] = join_lines(out_program.body(), 2);
  values["output_result"] = output_result;
  values["params"] = params;
  values["input_args"] = in_program.element_arguments("i");
  values["output_args"] = out_program.element_arguments("i");

  Replacement replacement;
  replacement.recipe = op.recipe;
  replacement.space = knowledge::Space::S3;
  replacement.covered = covered;
  replacement.produces = produces;
  const std::string layout = strided ? "one thread per strided column"
                             : config.segment_threads == 32
                                 ? "one warp per segment"
                                 : "one block of " + std::to_string(config.segment_threads) + " threads per segment";
  // "; 'conv' without its bias, added in the kernel"
  const std::string bias_note = unbiased ? "; '" + input->name + "' without its bias, added in the kernel" : "";
  replacement.description =
      op_list(graph, covered) + ": " + op.description + " fused into one kernel (" + layout + ")" + bias_note;
  // A reduction used over its row has no streaming template: only its row-in-registers kernel, below.
  if (!broadcast)
    replacement.kernels.push_back({entry, fill_kernel_template(*options.knowledge, op.template_name, values), {}});

  const std::vector<const ElementwiseProgram*> programs = {&in_program, &out_program};
  auto& s = replacement.statements;
  if (unbiased) s.push_back(input->name + " = " + unbiased->call);
  s.push_back(prefix + "in_shape = " + broadcast_shape(in_program, input->meta->shape));
  if (auto check = dtype_check(programs, kernel); !check.empty()) s.push_back(check);
  s.push_back(prefix + "rows = " + op.rows_python(prefix + "in_shape"));
  s.push_back(prefix + "cols = " + op.cols_python(prefix + "in_shape"));
  if (strided) s.push_back(prefix + "inner = " + op.inner_python(prefix + "in_shape"));
  if (!per_element) s.push_back(prefix + "out_shape = " + op.output_shape_python(prefix + "in_shape"));
  s.push_back(produces + " = torch.empty(" + prefix + (per_element ? "in_shape" : "out_shape") + ", dtype=" +
              output_dtype(programs, result->meta->dtype, options.allowed_precisions) +
              ", device=" + output_device(programs) + ")");
  if (!index64)
    s.push_back("assert " + prefix + "in_shape.numel() < 2**31, \"kernel " + kernel + " indexes with 32 bits\"");
  const std::string arguments = join_arguments(
      {launch_arguments(in_program), launch_arguments(out_program), produces, "nvrtc_runtime.int64(" + prefix + "rows)",
       "nvrtc_runtime.int64(" + prefix + "cols)", strided ? "nvrtc_runtime.int64(" + prefix + "inner)" : ""});
  std::string streaming_launch;
  if (strided) {
    streaming_launch =
        "_kernel(\"" + entry + "\")(_grid(" + prefix + "rows * " + prefix + "inner, 256), 256, " + arguments + ")";
  } else {
    const std::string block =
        "(" + std::to_string(config.segment_threads) + ", " + std::to_string(config.rows_per_block) + ")";
    streaming_launch = "_kernel(\"" + entry + "\")(_grid(" + prefix + "rows, " +
                       std::to_string(config.rows_per_block) + "), " + block + ", " + arguments + ")";
  }
  std::vector<Replacement> variants;
  const auto registers = strided ? std::nullopt : registers_config(op.cols);
  if (broadcast && !registers)
    throw Unsupported(node.name + ": rows of " + std::to_string(op.cols) + " are too long to hold in registers");
  s.push_back(streaming_launch);
  if (per_element && op.register_stats != RegisterStats::None && registers) {
    // The same statements, the last one launching the row-in-registers kernel
    // for rows of the captured length and the streaming kernel otherwise.
    Replacement in_registers = replacement;
    in_registers.recipe = "s3_row_in_registers";
    const std::string threads = registers->segment_threads == 32
                                    ? std::string("one warp per row")
                                    : std::to_string(registers->segment_threads) + " threads per row";
    in_registers.description = op_list(graph, covered) + ": " + op.description +
                               (broadcast ? " and its use over each row" : "") + " fused into one kernel (rows of " +
                               std::to_string(op.cols) + " held in registers, " + threads + ")" + bias_note;
    auto row_values = values;
    row_values["kernel_name"] = kernel + "_rows";
    row_values["cols"] = std::to_string(op.cols);
    row_values["segment_threads"] = std::to_string(registers->segment_threads);
    row_values["rows_per_block"] = std::to_string(registers->rows_per_block);
    row_values["stats"] = std::to_string(static_cast<int>(op.register_stats));
    for (const char* key : {"eps", "identity", "combine"})
      if (!row_values.count(key)) row_values[key] = "0.0f";
    const KernelSource row_kernel = {kernel + "_rows",
                                     fill_kernel_template(*options.knowledge, "row_registers.cu", row_values), {}};
    const std::string rpb = std::to_string(registers->rows_per_block);
    const std::string row_launch = "((" + prefix + "rows + " + rpb + " - 1) // " + rpb + ", (" +
                                   std::to_string(registers->segment_threads) + ", " + rpb + "), " +
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
  std::vector<std::pair<const ElementwiseGroup*, const ElementwiseGroup*>> attempts = {{prologue, epilogue}};
  if (epilogue) attempts.push_back({prologue, nullptr});
  if (prologue) attempts.push_back({nullptr, nullptr});
  // The last attempt is the op alone: its failure is why nothing came of it.
  std::string failure;
  for (const auto& [pro, epi] : attempts) {
    try {
      return build(graph, op, pro, epi, options);
    } catch (const Unsupported& e) {
      failure = e.what();
    }
  }
  throw Unsupported(failure);
}

}  // namespace hiera::engine::propose::knowledge_proposer::kernels
