#pragma once
// The loaded knowledge directory (GPU specs, recipes, spaces, prompts, code
// templates) and the queries the planner and proposers ask of it. Loading
// never throws: what is malformed is skipped and listed in `problems`.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/knowledge/gpu_spec.h"
#include "engine/knowledge/knowledge_problem.h"
#include "engine/knowledge/prompt_template.h"
#include "engine/knowledge/recipe.h"
#include "engine/knowledge/space_info.h"

namespace hiera::engine::knowledge {

// A file under templates/, filled by the offline proposer.
struct CodeTemplate {
  std::string name;                       // file name, e.g. "row_softmax.cu"
  std::string text;
  std::vector<std::string> placeholders;  // find_placeholders(text)
};

struct KnowledgeBase {
  std::filesystem::path dir;
  std::vector<GpuSpec> gpus;                                  // sorted by id
  std::vector<Recipe> recipes;                                // sorted by id
  std::vector<SpaceInfo> spaces;                              // S1, S2, S3 (those that loaded)
  std::vector<PromptTemplate> prompts;                        // sorted by id
  std::map<std::string, CodeTemplate, std::less<>> templates;  // by file name
  std::vector<KnowledgeProblem> problems;                     // empty when everything loaded

  // The spec whose `match` is the longest substring of the CUDA device name
  // (case-insensitive), so "NVIDIA H100 PCIe" picks "H100 PCIe" over "H100";
  // equal lengths go to the lower id. nullptr when nothing matches.
  const GpuSpec* find_gpu(std::string_view device_name) const;
  // A GPU by id or by the usual name, in any case: "h200", "H200",
  // "NVIDIA H200", "nvidia-h200", "A100" (a unique prefix of an id or match
  // entry), "NVIDIA A100-SXM4-80GB" (a CUDA device name, as find_gpu).
  // Spaces, '-' and '_' are alike and a leading "NVIDIA" is dropped.
  // nullptr when nothing, or more than one GPU, fits.
  const GpuSpec* gpu(std::string_view name) const;
  // What gpu() accepts, for messages: "a knowledge GPU id (a100_sxm_80gb,
  // h200, ...) or a name such as \"H200\" or \"NVIDIA A100-SXM4-80GB\", in any case".
  std::string accepted_gpus() const;
  const Recipe* recipe(std::string_view id) const;

  // Recipes that apply (Recipe::applies) and whose requires_allow are all in
  // `allowed` (spellings as numerics.allow takes them: "float16" counts as
  // "fp16"), in id order.
  std::vector<const Recipe*> recipes_for(Space space, Bottleneck bottleneck, std::string_view pattern,
                                         std::string_view dtype, std::int64_t elements,
                                         const std::vector<std::string>& allowed) const;

  const PromptTemplate* prompt(std::string_view id) const;
  const SpaceInfo* space(Space space) const;
  // The text of templates/<name>; nullopt when there is no such template.
  std::optional<std::string> template_text(std::string_view name) const;
};

// Loads `dir` (layout in knowledge/README.md). A missing directory is one problem.
KnowledgeBase load_knowledge(const std::filesystem::path& dir);

}  // namespace hiera::engine::knowledge
