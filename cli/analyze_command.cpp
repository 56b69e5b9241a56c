#include "cli/analyze_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/facade/analysis_output.h"
#include "engine/facade/annotation_contracts.h"
#include "engine/facade/cost_estimates.h"
#include "engine/facade/document_analysis.h"
#include "engine/facade/estimates.h"
#include "engine/facade/knowledge.h"
#include "engine/facade/quantity_text.h"

namespace hiera::cli {

namespace analysis = engine::analysis;

namespace {

std::filesystem::path self_path(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
}

std::string describe_work(const analysis::Work& work, const engine::GpuCeilings* roofline) {
  std::string out = engine::plan::format_flops(work.flops) + ", " + engine::plan::format_bytes(work.bytes);
  if (roofline) {
    if (const auto t = analysis::roofline_time(work, *roofline)) {
      out += ": " + engine::plan::format_time_ms(t->seconds * 1e3) + " on " + roofline->source + " (" +
             (t->launch_bound ? "launch" : t->memory_bound ? "memory" : "compute") + "-bound)";
    }
  }
  return out;
}

std::string shape_text(const analysis::Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The readable listing: positions are 1-based line:column (UTF-16 columns + 1), as compilers print them.
void print_listing(std::ostream& out, const std::string& file, const std::string& text, const analysis::Analysis& a,
                   const engine::GpuCeilings* roofline) {
  const analysis::LineIndex lines(text);
  auto at = [&](const analysis::Span& span) {
    const auto p = lines.position(span.begin);
    std::string s = std::to_string(p.line + 1) + ":" + std::to_string(p.character + 1);
    return s + std::string(s.size() < 8 ? 8 - s.size() : 1, ' ');
  };
  out << file << " (" << analysis::to_string(a.language) << "): ";
  if (a.language == analysis::Language::Cuda) {
    out << a.functions.size() << " kernel and device functions, " << a.launches.size() << " launch sites";
  } else {
    out << a.modules.size() << " nn.Module classes";
  }
  out << ", " << a.hints.size() << " hints, " << a.problems.size() << " problems\n";

  if (!a.functions.empty()) out << "\nfunctions\n";
  for (const auto& f : a.functions) {
    out << "  " << at(f.span) << analysis::to_string(f.kind) << " " << f.name << "(";
    for (std::size_t i = 0; i < f.parameters.size(); ++i) {
      out << (i ? ", " : "") << f.parameters[i].type << (f.parameters[i].name.empty() ? "" : " " + f.parameters[i].name);
    }
    out << ")" << (f.complete ? "" : " [incomplete]") << "\n";
    if (f.work) out << "          work: " << describe_work(*f.work, roofline) << "\n";
  }
  if (!a.launches.empty()) out << "\nlaunches\n";
  for (const auto& l : a.launches) {
    out << "  " << at(l.span) << l.kernel << "<<<" << l.grid << ", " << l.block;
    if (l.shared_bytes != "0" || l.stream != "0") out << ", " << l.shared_bytes;
    if (l.stream != "0") out << ", " << l.stream;
    out << ">>> in " << (l.caller.empty() ? "file scope" : l.caller) << (l.in_loop ? " (in a loop)" : "");
    if (l.block_threads) out << ", " << *l.block_threads << " threads per block";
    out << "\n";
    for (const auto& s : l.sizing) out << "          " << at(s.span) << s.span.text(text) << "\n";
  }
  for (const auto& m : a.modules) {
    out << "\nmodule " << m.name << "\n";
    for (const auto& layer : m.layers) out << "  " << at(layer.span) << "self." << layer.name << " = " << layer.type << "(" << layer.arguments << ")\n";
    if (!m.ops.empty()) out << "  forward:\n";
    for (const auto& o : m.ops) {
      out << "  " << at(o.span) << o.op << " (" << o.call << ")";
      if (o.shape) out << " -> " << shape_text(*o.shape) << " " << o.dtype;
      if (o.in_loop) out << " [in a loop]";
      if (o.work && (o.work->flops > 0 || o.work->bytes > 0)) out << ": " << describe_work(*o.work, roofline);
      out << "\n";
    }
    // The editor's estimate: fused where hiera fuses, a launch per pass.
    if (const auto total = engine::facade::module_estimate(m, roofline)) {
      out << "  total of " << total->ops_counted << " of " << m.ops.size() << " ops: " << engine::plan::format_flops(total->flops)
          << ", " << engine::plan::format_bytes(total->bytes);
      if (total->seconds) {
        out << ": " << engine::plan::format_time_ms(*total->seconds * 1e3) << " on " << roofline->source;
        if (total->op_by_op_seconds) {
          out << " with " << total->fused_ops << " elementwise ops fused into their producers ("
              << engine::plan::format_time_ms(*total->op_by_op_seconds * 1e3) << " op by op)";
        }
      }
      out << "\n";
    }
  }
  if (a.kernelbench) {
    out << "\nKernelBench inputs of " << a.kernelbench->model << "\n";
    for (const auto& i : a.kernelbench->inputs) {
      out << "  " << at(i.span) << i.expression;
      if (i.shape) out << " -> " << shape_text(*i.shape) << " " << i.dtype;
      out << "\n";
    }
  }
  if (!a.hints.empty()) out << "\nhints\n";
  for (const auto& h : a.hints) {
    out << "  " << at(h.span) << analysis::to_string(h.severity) << " " << h.rule << ": " << h.message;
    if (!h.recipe.empty()) out << " [recipe " << h.recipe << "]";
    if (!h.fix.empty()) out << " [quick fix]";
    out << "\n";
  }
  if (!a.problems.empty()) out << "\nproblems\n";
  for (const auto& p : a.problems) out << "  " << at(p.span) << p.message << "\n";
}

}  // namespace

CLI::App* add_analyze_command(CLI::App& app, AnalyzeArgs& args) {
  auto* cmd = app.add_subcommand("analyze", "Print the static findings and hints of a CUDA or PyTorch FILE");
  cmd->add_option("file", args.file, "source file (.cu, .cuh, .py)")->required();
  cmd->add_flag("--json", args.json, "Print the full analysis as JSON (0-based LSP ranges, UTF-16 characters)");
  cmd->add_option("--gpu", args.gpu, "GPU for roofline estimates: a knowledge GPU id or name (h200, H200, \"NVIDIA A100-SXM4-80GB\", any case), or 'none' (default: h200)");
  cmd->add_option("--knowledge", args.knowledge_dir, "Knowledge directory (default: the installed one)");
  return cmd;
}

int run_analyze(const AnalyzeArgs& args, const char* argv0) {
  const auto language = engine::facade::source_language("", args.file);
  if (!language) {
    std::cerr << "hiera analyze: " << args.file << ": not a CUDA (.cu, .cuh) or Python (.py) file" << std::endl;
    return kAnalyzeUsage;
  }
  std::optional<engine::GpuCeilings> roofline;
  if (args.gpu != "none") {
    const auto dir = args.knowledge_dir.empty() ? engine::knowledge::default_knowledge_dir(self_path(argv0))
                                                : std::filesystem::path(args.knowledge_dir);
    const auto knowledge = engine::knowledge::load_knowledge(dir);
    const engine::knowledge::GpuSpec* gpu = knowledge.gpu(args.gpu);
    if (!gpu) {
      std::cerr << "hiera analyze: --gpu: unknown GPU \"" << args.gpu << "\" in " << dir.string()
                << "; accepted: " << knowledge.accepted_gpus() << ", or 'none'" << std::endl;
      return kAnalyzeUsage;
    }
    roofline = engine::facade::estimate_roofline(*gpu);
  }
  std::ifstream in(args.file, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(args.file, ec)) {
    std::cerr << "hiera analyze: " << args.file << ": cannot read the file" << std::endl;
    return kAnalyzeUnreadable;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  // With the facts of the file's `hiera:` annotations, as the editor analyses it.
  const analysis::Analysis result = engine::facade::analyze_source(text, *language).analysis;
  const engine::GpuCeilings* r = roofline ? &*roofline : nullptr;
  // Malformed `hiera:` annotations join the problems, worded as `hiera optimize` words them.
  analysis::Analysis shown = result;
  for (const auto& p : engine::spec::annotation_problems(text, result)) shown.problems.push_back({p.span, p.message});
  std::stable_sort(shown.problems.begin(), shown.problems.end(),
                   [](const auto& x, const auto& y) { return x.span.begin < y.span.begin; });
  if (args.json) {
    nlohmann::json out = analysis::to_json(shown, text, r);
    out["file"] = args.file;
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    print_listing(std::cout, args.file, text, shown, r);
  }
  return kAnalyzeOk;
}

}  // namespace hiera::cli
