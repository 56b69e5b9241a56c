// The hiera executable: one binary, one subcommand per job.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/optimize_command.h"
#include "hiera/version.h"
#include "server/serve.h"

namespace {

// Subcommands whose issues have not landed yet answer this, exit code 2.
int not_available(const std::string& name) {
  std::cerr << "hiera " << name << ": not available yet in hiera " << hiera::kVersion
            << " (this subcommand arrives with a later release)" << std::endl;
  return 2;
}

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
  CLI::App app{"hiera: a language server that makes CUDA and PyTorch code faster, verified on a GPU", "hiera"};
  app.set_version_flag("--version", std::string("hiera ") + hiera::kVersion);
  app.require_subcommand(1);

  hiera::server::ServeOptions serve;
  auto* lsp = app.add_subcommand("lsp", "Run the language server (stdio by default)");
  lsp->add_option("--listen", serve.listen, "Serve one client over TCP on a loopback ADDRESS:PORT (debugging)");
  lsp->add_option("--jobs", serve.server.job_threads, "Background job threads")->check(CLI::Range(1, 64));

  hiera::cli::OptimizeArgs optimize_args;
  auto* optimize = hiera::cli::add_optimize_command(app, optimize_args);

  std::string target;
  auto* analyze = app.add_subcommand("analyze", "Print static findings of FILE as JSON");
  analyze->add_option("file", target, "source file")->required();
  auto* bench = app.add_subcommand("bench", "Run a KernelBench-format suite and print the fast_p table");
  bench->add_option("dir", target, "suite directory")->required();
  auto* worker = app.add_subcommand("worker", "Run the GPU evaluation worker (job protocol on stdio)");
  worker->allow_extras();  // hiera-worker parses its own options

  // The worker's options belong to hiera-worker; hand them over untouched.
  if (argc >= 2 && std::string(argv[1]) == "worker") return exec_worker(argv);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (*lsp) return hiera::server::serve_lsp(serve);
  if (*optimize) return hiera::cli::run_optimize(optimize_args, argv[0]);
  for (auto* sub : {analyze, bench}) {
    if (*sub) return not_available(sub->get_name());
  }
  return 2;
}
