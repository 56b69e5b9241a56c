#pragma once
// The CLI11 side of what `hiera optimize` and `hiera bench` build alike: the
// shared options on a subcommand, mapped onto the engine's
// make_optimizer_setup (engine/optimize/optimizer_setup.h), so the two
// commands (and the LSP server's jobs) run the very same optimizer.
#include <filesystem>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/eval/allocation_notices.h"
#include "engine/optimize/optimizer_setup.h"

namespace hiera::cli {

struct OptimizerArgs : engine::optimize::OptimizerSetupArgs {
  std::string config;  // JSON configuration file
};

// Registers the shared options on a subcommand; `workers_help` says what
// --workers defaults to there.
void add_optimizer_options(CLI::App& command, OptimizerArgs& args, const std::string& workers_help);

// Allocations' news on a terminal, as both commands show it: pending and
// running belong to the progress line (engine/optimize/allocation_progress.h);
// the rest go through `note` as "PROGRAM: line" above it. Without `note`
// (--quiet), every notice is a line on stderr. Subscribe before
// make_optimizer_setup, which posts the first.
[[nodiscard]] engine::eval::AllocationNotices::Subscription show_allocation_notices(
    const engine::eval::AllocationNotices& notices, const std::string& program,
    std::function<void(const std::string&)> note);

// The configuration (engine/facade/configuration.h): `path` (--config), else
// $HIERA_CONFIG, else the first .hiera/config.json in `start` or above; each
// unknown key a line on stderr, "PROGRAM: FILE: unknown configuration key 'KEY' (...)".
// Throws std::runtime_error as engine::facade::load_configuration does.
nlohmann::json load_configuration(const std::string& path, const std::filesystem::path& start, const std::string& program);

using engine::optimize::make_optimizer_setup;
using engine::optimize::OptimizerSetup;
using engine::optimize::self_path;
using engine::optimize::visible_gpu_count;

}  // namespace hiera::cli
