#pragma once
// The CLI11 side of what `hiera optimize` and `hiera bench` build alike: the
// shared options on a subcommand, mapped onto the engine's
// make_optimizer_setup (engine/optimize/optimizer_setup.h), so the two
// commands (and the LSP server's jobs) run the very same optimizer.
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/optimize/optimizer_setup.h"

namespace hiera::cli {

struct OptimizerArgs : engine::optimize::OptimizerSetupArgs {
  std::string config;  // JSON configuration file
};

// Registers the shared options on a subcommand; `workers_help` says what
// --workers defaults to there.
void add_optimizer_options(CLI::App& command, OptimizerArgs& args, const std::string& workers_help);

using engine::optimize::load_configuration;
using engine::optimize::make_optimizer_setup;
using engine::optimize::OptimizerSetup;
using engine::optimize::self_path;
using engine::optimize::visible_gpu_count;

}  // namespace hiera::cli
