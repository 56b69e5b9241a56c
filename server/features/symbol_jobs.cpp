#include "server/features/symbol_jobs.h"

#include <cstdio>
#include <fstream>

#include "engine/facade/engine.h"
#include "server/features/annotation_comment.h"
#include "server/features/file_uri.h"
#include "server/features/optimized_edit.h"
#include "server/features/optimizer_settings.h"
#include "server/features/result_measurement.h"
#include "server/features/symbol_arguments.h"
#include "engine/common/number_text.h"

namespace hiera::server {

using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;
namespace optimize = engine::optimize;
namespace lsp = protocol::lsp;
using engine::fixed;
using engine::significant;

namespace {

// "S1 / op graph: c2: passed (1.85x) (3/8 tried, 2 verified, best 1.85x)"; before the plan, the message alone
std::string progress_text(const optimize::OptimizeProgress& p) {
  std::string text = p.message;
  if (!p.step.empty() && text.compare(0, p.step.size(), p.step) != 0) text = p.step + ": " + text;
  if (!p.step.empty() && p.budget > 0) {  // the budget is the plan's once a step runs
    text += " (" + std::to_string(p.tried) + "/" + std::to_string(p.budget) + " tried, " + std::to_string(p.verified) +
            " verified";
    if (p.best_speedup) text += ", best " + fixed(*p.best_speedup, 2) + "x";
    text += ")";
  }
  return text;
}

// Everything a job needs, read when the command arrives (the settings' snapshot then).
struct JobInputs {
  SymbolArguments symbol;
  optimize::OptimizerSetupArgs args;
  json settings;
};

JobInputs job_inputs(const std::string& command, const json& arguments, const FeatureContext& context) {
  JobInputs in{parse_symbol_arguments(command, arguments, context.documents), {}, context.settings.snapshot()};
  try {
    in.args = optimizer_args_from_settings(in.settings, in.symbol.path.parent_path());
  } catch (const std::invalid_argument& e) {
    // Shown as well as answered: not every client shows a command's error.
    context.client.show_message(lsp::MessageType::Warning, std::string("hiera: ") + command + ": " + e.what());
    throw RpcError(ErrorCode::InvalidParams, command + ": " + e.what());
  }
  return in;
}

// Runs the optimizer as the settings say, on the server's one engine (its
// pool kept between jobs), reporting progress to the job. A worker
// allocation's news goes to the client's log, once each; while the workers
// wait on it, the job's progress says so instead of the step.
optimize::OptimizeResult run_optimizer(const JobInputs& in, engine::facade::Engine& facade, bool measure_only, Client& client,
                                       JobContext& job) {
  auto logged = facade.notices().subscribe([&client](const engine::eval::AllocationNotice& n) {
    client.log(lsp::MessageType::Info, "hiera: " + n.line);
  });
  engine::facade::RunRequest request;
  request.target = in.symbol.target;
  request.spec_configuration = in.settings.is_object() ? in.settings : json::object();
  request.measure_only = measure_only;
  return facade.run({in.args, json::object()}, request, [&](const optimize::OptimizeProgress& p) {
    const bool counting = !measure_only && !p.step.empty() && p.budget > 0;
    const std::optional<int> percentage =
        measure_only ? std::nullopt : std::optional<int>(counting ? std::min(100, 100 * p.tried / p.budget) : 0);
    if (!p.waiting.empty()) {
      job.report("waiting: " + p.waiting, percentage);
    } else {
      job.report(measure_only ? p.message : progress_text(p), percentage);
    }
  }, job.cancellation());
}

std::string report_of(const optimize::OptimizeResult& result) {
  return result.run_dir.empty() ? std::string() : (result.run_dir / "report.md").string();
}

// The first reason an LLM request failed, when every LLM candidate failed that way.
std::optional<std::string> dead_llm(const optimize::OptimizeResult& result) {
  std::optional<std::string> reason;
  for (const auto& a : result.attempts) {
    if (a.attempt.candidate.proposer.rfind("llm", 0) != 0) continue;
    const auto& rejected = a.attempt.candidate.rejected;
    if (!rejected || rejected->find("the LLM request failed") == std::string::npos) return std::nullopt;
    if (!reason) reason = *rejected;
  }
  return reason;
}

JobResult optimize_job(const JobInputs& in, engine::facade::Engine& facade, const std::shared_ptr<MeasurementStore>& store,
                       Client& client, JobContext& job) {
  const auto result = run_optimizer(in, facade, false, client, job);
  const std::string& symbol = in.symbol.symbol;
  const std::string uri = in.symbol.document->uri();
  JobResult out;
  out.report_path = report_of(result);
  const std::string report = out.report_path.empty() ? "" : "; report: " + out.report_path;
  if (result.outcome == optimize::Outcome::Cancelled) return {"cancelled", std::nullopt, out.report_path, {}, JobState::Cancelled};
  if (result.reference_timing) store->put(measurement_of(result, uri, symbol, false));
  if (result.outcome == optimize::Outcome::Error) throw std::runtime_error(result.message + report);
  if (!result.improved()) {
    if (auto reason = dead_llm(result)) {
      throw std::runtime_error("the LLM endpoint did not answer: " + *reason + " (no verified improvement" + report + ")");
    }
    out.message = symbol + ": no verified improvement (" + result.message + ")" + report;
    out.state = JobState::NoImprovement;
    return out;
  }
  // Only a result with passing evidence becomes an edit (improved() above).
  const Evidence evidence = evidence_of(result);
  const auto& best = *result.best;
  const std::string& text = in.symbol.document->text();
  std::vector<ByteEdit> edits;
  try {
    edits = in.symbol.kind == "kernel"
                ? kernel_replacement(text, symbol, best.delivered_source, best.candidate.kernel, annotation_comment(evidence, "// "))
                : module_insertion(text, symbol, best.delivered_source, annotation_comment(evidence, "# "));
  } catch (const OptimizedEditError& e) {
    throw std::runtime_error(symbol + ": " + fixed(best.speedup, 2) + "x faster, verified, but not deliverable as an edit: " +
                             e.what() + report);
  }
  out.message = symbol + ": " + fixed(best.speedup, 2) + "x faster on " + result.gpu + ", verified" + report;
  out.edit = DocumentEdit{uri, in.symbol.document->version(), std::move(edits),
                          "hiera: optimized " + symbol + " (" + fixed(best.speedup, 2) + "x)", false};
  out.on_applied = [store, measurement = measurement_of(result, uri, symbol, true)] { store->put(measurement); };
  out.state = JobState::Improved;
  return out;
}

JobResult profile_job(const JobInputs& in, engine::facade::Engine& facade, const std::shared_ptr<MeasurementStore>& store,
                      Client& client, JobContext& job) {
  const auto result = run_optimizer(in, facade, true, client, job);
  JobResult out;
  out.report_path = report_of(result);
  if (result.outcome == optimize::Outcome::Cancelled) return {"cancelled", std::nullopt, out.report_path, {}, JobState::Cancelled};
  if (!result.reference_timing) {
    throw std::runtime_error(result.message + (out.report_path.empty() ? "" : "; report: " + out.report_path));
  }
  const Measurement m = measurement_of(result, in.symbol.document->uri(), in.symbol.symbol, false);
  store->put(m);
  out.message = in.symbol.symbol + ": " + significant(*m.median_ms) + " ms (p10-p90 " + significant(*m.p10_ms) + "-" +
                significant(*m.p90_ms) + " ms) on " + m.gpu;
  out.state = JobState::Measured;
  return out;
}

// What a job without a GPU worker needs, in the settings' words.
JobResult no_gpu_job(const std::string& symbol, const engine::facade::NoGpu& refusal) {
  JobResult out;
  out.state = JobState::NoGpu;
  out.message = symbol + ": not started: " + refusal.what() +
                ". Profiling and optimizing need a GPU worker: set worker.command to one (e.g. "
                "[\"ssh://gpu-host\"], a host with a GPU and hiera installed) or list several in worker.specs "
                "([\"ssh://gpu-host\", \"slurm:gpu,gres=gpu:1\"]); or ask for a CPU run with worker.device: \"cpu\" "
                "(PyTorch-operator candidates only, timed on the CPU)";
  return out;
}

json show_spec(const JobInputs& in, const FeatureContext& context) {
  const auto& target = in.symbol.target;
  const auto page = engine::facade::Engine::show_spec(target, in.settings);
  const std::string& markdown = page.markdown;
  json problems = page.problems;
  const std::filesystem::path file = std::filesystem::path(in.args.runs_dir) / "specs" /
                                     (in.symbol.path.filename().string() + "." + in.symbol.symbol + ".md");
  std::string written;
  try {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << markdown;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
    written = file.string();
  } catch (const std::exception& e) {
    context.client.log(lsp::MessageType::Warning, std::string("hiera: task spec not written: ") + e.what());
  }
  if (!written.empty()) {
    if (context.client_capabilities.showDocument) {
      // The answer is not awaited: the message loop must not block on the client.
      context.client.request("window/showDocument", {{"uri", file_uri(std::filesystem::absolute(file))}, {"takeFocus", true}},
                             [](ClientRequests::Outcome) {});
    } else {
      context.client.show_message(lsp::MessageType::Info, "hiera: task spec of " + target.name() + ": " + written);
    }
  }
  return {{"markdown", markdown}, {"path", written.empty() ? json(nullptr) : json(written)}, {"problems", problems}};
}

}  // namespace

SymbolJobs::SymbolJobs(std::shared_ptr<MeasurementStore> measurements, std::filesystem::path hiera_executable)
    : SymbolJobs(std::move(measurements),
                 std::make_shared<engine::facade::Engine>(engine::facade::EngineOptions{std::move(hiera_executable), "hiera lsp",
                                                                                         ".hiera/runs"})) {}

SymbolJobs::SymbolJobs(std::shared_ptr<MeasurementStore> measurements, std::shared_ptr<engine::facade::Engine> engine)
    : measurements_(std::move(measurements)), engine_(std::move(engine)) {}

std::vector<std::string> SymbolJobs::commands() const {
  return {"hiera.optimizeSymbol", "hiera.profileSymbol", "hiera.showSpec"};
}

json SymbolJobs::execute_command(const std::string& command, const json& arguments, const FeatureContext& context) {
  auto in = std::make_shared<const JobInputs>(job_inputs(command, arguments, context));
  if (command == "hiera.showSpec") return show_spec(*in, context);
  const bool optimizing = command == "hiera.optimizeSymbol";
  const std::string title = (optimizing ? "Optimize " : "Profile ") + in->symbol.symbol;
  // A new measurement changes the lenses: clients that can be asked to fetch them again are.
  Client* client = &context.client;
  const bool refresh = context.client_capabilities.codeLensRefresh;
  auto refresh_lenses = [client, refresh] {
    if (refresh) client->request("workspace/codeLens/refresh", nullptr, [](const ClientRequests::Outcome&) {});
  };
  const std::string id =
      context.jobs.start(title, [in, facade = engine_, store = measurements_, optimizing, client, refresh_lenses](JobContext& job) {
        JobResult result;
        try {
          result = optimizing ? optimize_job(*in, *facade, store, *client, job) : profile_job(*in, *facade, store, *client, job);
        } catch (const engine::facade::NoGpu& refusal) {
          return no_gpu_job(in->symbol.symbol, refusal);  // nothing measured: the lenses stay as they are
        }
        if (result.on_applied) {
          result.on_applied = [applied = std::move(result.on_applied), refresh_lenses] {
            applied();
            refresh_lenses();
          };
        }
        refresh_lenses();  // the reference's measurement is stored by now
        return result;
      });
  return {{"jobId", id}};
}

}  // namespace hiera::server
