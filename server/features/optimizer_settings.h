#pragma once
// The editor's hiera settings, as far as the optimizer is concerned, mapped
// onto the engine's OptimizerSetupArgs:
//   worker.command: [argv...]  the worker to start (default: `<this hiera> worker`)
//   worker.device: "gpu"|"cpu" "cpu": a CPU run, asked for; "gpu" (default): jobs
//                              need a worker with a GPU and are refused without one
//   gpu: "h200"                knowledge GPU id or usual name ("H200", "NVIDIA A100-SXM4-80GB",
//                              any case: KnowledgeBase::gpu) for estimates where no GPU is probed
//   llm: {endpoint, model, apiKeyEnv[, provider: "openai"|"anthropic", maxRetries]}
//                              an LLM proposer next to the built-in one; the key
//                              is read from the variable apiKeyEnv names
//   budget: {candidates, minutes}
//   runsDir: where run directories go (relative: to the document's folder;
//            default <document's folder>/.hiera/runs)
// The whole settings object is also the task spec's configuration (spec_builder.h
// reads numerics, budget, spaces, ... and ignores the rest).
#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/optimize/optimizer_setup.h"

namespace hiera::server {

// Throws std::invalid_argument naming the setting that is wrong ("hiera
// settings: budget.candidates must be a positive integer").
engine::optimize::OptimizerSetupArgs optimizer_args_from_settings(const nlohmann::json& settings,
                                                                  const std::filesystem::path& document_dir);

}  // namespace hiera::server
