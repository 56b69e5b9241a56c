#pragma once
// The values an LLM prompt template is filled with (knowledge/prompts: task_name,
// language, gpu, spec, space, space_rules, current_code, profile, recipes,
// failures), built from a proposal request: the exact text the model reads.
#include <map>
#include <string>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/proposer.h"
#include "engine/propose/reference_profile.h"

namespace hiera::engine::propose {

// How many earlier failures the prompt repeats (the most recent ones).
inline constexpr int kPromptFailures = 6;
// Lines of a compile log the prompt repeats for one failure.
inline constexpr int kPromptLogLines = 12;
// Kernels of the reference's profile the prompt lists (the first ones).
inline constexpr int kPromptKernels = 8;

std::map<std::string, std::string, std::less<>> prompt_values(const ProposalRequest& request,
                                                              const knowledge::KnowledgeBase& knowledge);

// Each part on its own, as prompt_values puts them in.
std::string language_text(Language language);
std::string space_text(knowledge::Space space, const knowledge::KnowledgeBase& knowledge);
std::string recipes_text(const std::vector<const knowledge::Recipe*>& recipes);
std::string failures_text(const std::vector<Attempt>& history);
// The request's `profile`: "reference: 0.1000 ms per call on GPU", a line per
// region with its roofline, the counters when there are some, the first
// kPromptKernels kernels with their calls and mean time.
std::string profile_text(const ReferenceProfile& profile);

// A rendered prompt ready for the client. `variant`/`of`: when one step asks
// for several proposals at once, each prompt says which one it is, so the
// requests (and the model's answers) differ.
struct Prompt {
  std::string system;
  std::string user;
};
Prompt build_prompt(const knowledge::PromptTemplate& prompt_template, const ProposalRequest& request,
                    const knowledge::KnowledgeBase& knowledge, int variant, int of);

}  // namespace hiera::engine::propose
