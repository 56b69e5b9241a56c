// The hiera executable: one binary, one subcommand per job.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/analyze_command.h"
#include "cli/bench_command.h"
#include "cli/bench_compare_command.h"
#include "cli/doctor_command.h"
#include "cli/lsp_notice.h"
#include "cli/optimize_command.h"
#include "engine/common/process_protection.h"
#include "engine/knowledge/knowledge_dir.h"
#include "hiera/version.h"
#include "server/features/analysis_feature.h"
#include "server/features/symbol_jobs.h"
#include "server/serve.h"
#include "server/state/measurement_store.h"

namespace {

// `hiera worker` runs the sibling hiera-worker executable: only that process
// loads the CUDA libraries, so `hiera lsp` stays small and a crashing kernel
// can take down a worker but never the server.
int exec_worker(char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto worker = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "hiera-worker";
  if (!std::filesystem::exists(worker)) {
    std::cerr << "hiera worker: " << worker.string()
              << " not found: this hiera was built without the CUDA toolkit (configure with -DHIERA_CUDA=ON)" << std::endl;
    return 2;
  }
  std::vector<char*> args{const_cast<char*>(worker.c_str())};
  for (char** a = argv + 2; *a; ++a) args.push_back(*a);  // everything after "worker"
  args.push_back(nullptr);
  ::execv(worker.c_str(), args.data());
  std::cerr << "hiera worker: cannot start " << worker.string() << ": " << std::strerror(errno) << std::endl;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any API key is read: no other process of this user may read our environment or memory.
  hiera::engine::make_undumpable();
  CLI::App app{"hiera: a language server that makes CUDA and PyTorch code faster, verified on a GPU", "hiera"};
  app.set_version_flag("--version", std::string("hiera ") + hiera::kVersion);
  app.require_subcommand(1);

  hiera::server::ServeOptions serve;
  auto* lsp = app.add_subcommand("lsp", "Run the language server (stdio by default)");
  lsp->add_option("--listen", serve.listen, "Serve one client over TCP on a loopback ADDRESS:PORT (debugging)");
  lsp->add_option("--jobs", serve.server.job_threads, "Background job threads")->check(CLI::Range(1, 64));

  hiera::cli::OptimizeArgs optimize_args;
  auto* optimize = hiera::cli::add_optimize_command(app, optimize_args);

  hiera::cli::AnalyzeArgs analyze_args;
  auto* analyze = hiera::cli::add_analyze_command(app, analyze_args);
  hiera::cli::BenchArgs bench_args;
  auto* bench = hiera::cli::add_bench_command(app, bench_args);
  hiera::cli::BenchCompareArgs compare_args;
  auto* bench_compare = hiera::cli::add_bench_compare_command(app, compare_args);
  hiera::cli::DoctorArgs doctor_args;
  auto* doctor = hiera::cli::add_doctor_command(app, doctor_args);
  auto* worker = app.add_subcommand("worker", "Run the GPU evaluation worker (job protocol on stdio)");
  worker->allow_extras();  // hiera-worker parses its own options

  // The worker's options belong to hiera-worker; hand them over untouched.
  if (argc >= 2 && std::string(argv[1]) == "worker") return exec_worker(argv);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0 && analyze->parsed()) return hiera::cli::kAnalyzeUsage;  // analyze: bad usage is 2 as well
    if (code != 0 && bench_compare->parsed()) return hiera::cli::kCompareUsage;
    // bench's contract: bad usage is exit code 2, whatever CLI11 numbers it.
    return code != 0 && bench->parsed() ? hiera::cli::kExitUsage : code;
  }

  if (*lsp) {
    // Started by hand in a terminal: say what this is, then serve as always.
    if (!serve.listen) std::cerr << hiera::cli::lsp_notice_for_stdin(STDIN_FILENO, hiera::cli::self_path(argv[0]).string()) << std::flush;
    // One store of measurements, written by the optimize/profile jobs and read by hover and lenses.
    auto measurements = std::make_shared<hiera::server::MeasurementStore>();
    return hiera::server::serve_lsp(serve, [&](hiera::server::LspServer& server) {
      server.add_feature(std::make_unique<hiera::server::SymbolJobs>(measurements, hiera::cli::self_path(argv[0])));
      server.add_feature(std::make_unique<hiera::server::AnalysisFeature>(
          std::make_shared<const hiera::engine::knowledge::KnowledgeBase>(hiera::engine::knowledge::load_knowledge(
              hiera::engine::knowledge::default_knowledge_dir(hiera::cli::self_path(argv[0])))),
          measurements));
    });
  }
  if (*optimize) return hiera::cli::run_optimize(optimize_args, argv[0]);
  if (*bench) return hiera::cli::run_bench(bench_args, argv[0], std::vector<std::string>(argv, argv + argc));
  if (*bench_compare) return hiera::cli::run_bench_compare(compare_args);
  if (*analyze) return hiera::cli::run_analyze(analyze_args, argv[0]);
  if (*doctor) return hiera::cli::run_doctor(doctor_args, argv[0]);
  return 2;
}
