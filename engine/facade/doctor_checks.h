#pragma once
// What `hiera doctor` checks through the engine, in editor-neutral types:
// - the worker: one started the way `hiera optimize` starts its first (the
//   same --worker / worker.command / default resolution, make_optimizer_setup),
//   the job protocol's `hello` exchanged through eval::WorkerProcess, and shut
//   down; what it says about itself;
// - the knowledge directory: the one the optimizer would load, and what it holds.
#include <cstddef>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/optimize/optimizer_setup.h"

namespace hiera::engine::facade {

struct WorkerCheck {
  std::string command;                // the worker's command line, for messages
  std::optional<std::string> skipped;  // why no worker was started (a Slurm spec: no job is submitted for a check)
  std::optional<std::string> error;    // it did not start, or the handshake failed (the engine's message)
  std::string worker_version;
  bool cuda = false;                   // a CUDA device opened
  std::optional<std::string> gpu;      // its name, when cuda
  std::optional<std::string> gpu_cc;   // its compute capability, "9.0"
  std::optional<std::string> python;   // the interpreter that imports torch, when one does
  std::optional<std::string> torch;    // its torch.__version__
};

// `args.llm` and `args.no_knowledge` are ignored (no proposer is built).
// Never throws: a bad worker spec or command line is an error of the check.
WorkerCheck check_worker(optimize::OptimizerSetupArgs args, const nlohmann::json& config,
                         const std::filesystem::path& exe, std::chrono::milliseconds handshake_timeout);

struct KnowledgeCheck {
  std::filesystem::path dir;
  bool exists = false;
  std::size_t recipes = 0;
  std::size_t gpus = 0;
  std::vector<std::string> problems;  // what did not load (KnowledgeBase::problems)
};

// `dir`, else the default: $HIERA_KNOWLEDGE_DIR, else the installed one beside
// `exe`, else the source tree's (knowledge::default_knowledge_dir).
KnowledgeCheck check_knowledge(const std::string& dir, const std::filesystem::path& exe);

}  // namespace hiera::engine::facade
