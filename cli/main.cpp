// The hiera executable: one binary, one subcommand per job.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "hiera/version.h"
#include "server/serve.h"

namespace {

// Subcommands whose issues have not landed yet answer this, exit code 2.
int not_available(const std::string& name) {
  std::cerr << "hiera " << name << ": not available yet in hiera " << hiera::kVersion
            << " (this subcommand arrives with a later release)" << std::endl;
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

  std::string target;
  auto* optimize = app.add_subcommand("optimize", "Optimize FILE[::SYMBOL] from the terminal");
  optimize->add_option("target", target, "FILE[::SYMBOL]")->required();
  auto* analyze = app.add_subcommand("analyze", "Print static findings of FILE as JSON");
  analyze->add_option("file", target, "source file")->required();
  auto* bench = app.add_subcommand("bench", "Run a KernelBench-format suite and print the fast_p table");
  bench->add_option("dir", target, "suite directory")->required();
  auto* worker = app.add_subcommand("worker", "Run the GPU evaluation worker (job protocol on stdio)");
  int device = 0;
  worker->add_option("--device", device, "CUDA device index");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (*lsp) return hiera::server::serve_lsp(serve);
  for (auto* sub : {optimize, analyze, bench, worker}) {
    if (*sub) return not_available(sub->get_name());
  }
  return 2;
}
