#pragma once
// The commands that measure or optimize one kernel or module of an open
// document (the code actions and lenses offer them), each with the argument
// [{"uri", "version", "symbol", "kind": "kernel"|"module"}]:
// - hiera.optimizeSymbol: a job "Optimize <symbol>" that runs the optimizer on
//   the document's text at that version and, when a candidate is verified
//   faster, edits that version: the kernel replaced, or the optimized module
//   inserted after the original, under an annotation comment with the evidence.
//   Answers {"jobId"} at once.
// - hiera.profileSymbol: a job "Profile <symbol>" that times and profiles the
//   reference only and records the Measurement. Answers {"jobId"} at once.
// - hiera.showSpec: the task spec built from the text and the settings (no
//   worker), answered as {"markdown", "path", "problems"}, written to
//   <runs dir>/specs/<file>.<symbol>.md and shown (window/showDocument where
//   the client has it, else window/showMessage with the path).
// A job ends "improved", "no improvement", "measured" (Profile), "failed" or
// "cancelled"; without a worker that has a GPU, and no worker.device "cpu"
// asked for, it ends "no GPU" before it runs, shown with what to set
// (worker.command / worker.specs, an ssh:// example, or the CPU run).
// Every job runs on one engine facade (engine/facade/engine.h) kept for the
// feature's life, the server's: its worker pool starts with the first job and
// serves the jobs after it, restarted only when the settings give other
// workers. Jobs read the settings (optimizer_settings.h) when they start. A worker
// allocation's news (a Slurm job submitted, pending, running, cancelled) is a
// window/logMessage (Info) each; while workers wait on a pending one, the
// job's $/progress reports "waiting: <the line>" instead of the step.
#include <filesystem>
#include <memory>

#include "engine/facade/engine.h"
#include "server/features/feature.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

class SymbolJobs final : public Feature {
 public:
  // `hiera_executable`: the default worker is `<it> worker`, and the knowledge
  // directory is found next to it.
  SymbolJobs(std::shared_ptr<MeasurementStore> measurements, std::filesystem::path hiera_executable);
  // On a given engine (tests: to see its pool reused).
  SymbolJobs(std::shared_ptr<MeasurementStore> measurements, std::shared_ptr<engine::facade::Engine> engine);
  const std::shared_ptr<engine::facade::Engine>& engine() const { return engine_; }

  std::vector<std::string> commands() const override;
  nlohmann::json execute_command(const std::string& command, const nlohmann::json& arguments,
                                 const FeatureContext& context) override;

 private:
  std::shared_ptr<MeasurementStore> measurements_;
  std::shared_ptr<engine::facade::Engine> engine_;
};

}  // namespace hiera::server
