#include "engine/propose/prompt_builder.h"
#include "engine/common/number_text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace hiera::engine::propose {

namespace {

std::string first_lines(const std::string& text, int count) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (n++ == count) {
      out += "  ...\n";
      break;
    }
    out += "  " + line + "\n";
  }
  return out;
}

std::string speedup_text(double speedup) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", speedup);
  return text;
}

}  // namespace

std::string language_text(Language language) {
  return language == Language::Python ? "Python (a PyTorch module in KernelBench format)" : "CUDA C++";
}

std::string space_text(knowledge::Space space, const knowledge::KnowledgeBase& knowledge) {
  const knowledge::SpaceInfo* info = knowledge.space(space);
  return std::string(knowledge::to_string(space)) + (info ? " (" + info->name + ")" : "");
}

std::string recipes_text(const std::vector<const knowledge::Recipe*>& recipes) {
  if (recipes.empty()) return "(none from the knowledge base for this step)\n";
  std::string out;
  for (const auto* r : recipes) {
    char range[64];
    std::snprintf(range, sizeof range, "%.2g-%.2gx", r->expected_speedup_low, r->expected_speedup_high);
    out += "- " + r->id + " (" + knowledge::to_string(r->space) + "): " + r->title + "\n";
    out += "  What: " + r->what + "\n";
    out += "  Expected: " + r->effect + " (" + range + ")\n";
    if (!r->pitfalls.empty()) {
      out += "  Pitfalls:";
      for (std::size_t i = 0; i < r->pitfalls.size(); ++i) out += (i ? "; " : " ") + r->pitfalls[i];
      out += "\n";
    }
  }
  return out;
}

std::string failures_text(const std::vector<Attempt>& history) {
  std::vector<const Attempt*> shown;
  for (const auto& attempt : history) {
    const bool unhelpful = attempt.correct && attempt.speedup && *attempt.speedup > 1.0;
    if (!unhelpful) shown.push_back(&attempt);
  }
  if (shown.empty()) return "(none yet)\n";
  if (shown.size() > static_cast<std::size_t>(kPromptFailures)) {
    shown.erase(shown.begin(), shown.end() - kPromptFailures);
  }
  std::string out;
  for (const Attempt* a : shown) {
    const Candidate& c = a->candidate;
    out += "- " + c.id + " (" + knowledge::to_string(c.space) + (c.notes.empty() ? "" : ", " + c.notes) + "): ";
    if (c.rejected) {
      out += "no usable code: " + *c.rejected + "\n";
    } else if (!a->compiled) {
      out += "did not compile\n";
    } else if (!a->correct) {
      out += "failed verification\n";
    } else {
      out += "correct but not faster (" + (a->speedup ? speedup_text(*a->speedup) : std::string("untimed")) + ")\n";
    }
    for (const auto& failure : a->failures) out += "  " + failure + "\n";
    if (!a->compile_log.empty()) out += first_lines(a->compile_log, kPromptLogLines);
  }
  return out;
}

std::string profile_text(const ReferenceProfile& profile) {
  std::string text = "reference: " + fixed(profile.reference_ms, 4) + " ms per call on " + profile.gpu + "\n";
  for (const auto& region : profile.regions) text += "- " + region.name + ": " + region.roofline + "\n";
  if (const auto& c = profile.counters) {
    text += "hardware counters (CUPTI): DRAM throughput " + fixed(c->dram_throughput_pct, 1) + "% of peak, SM throughput " +
            fixed(c->sm_throughput_pct, 1) + "%, achieved occupancy " + fixed(c->achieved_occupancy_pct, 1) + "%\n";
  }
  int shown = 0;
  for (const auto& k : profile.kernels) {
    if (shown++ == kPromptKernels) break;
    text += "  kernel " + k.name + ": " + std::to_string(k.calls) + " calls, mean " + fixed(k.mean_ns / 1e3, 2) + " us\n";
  }
  return text;
}

std::map<std::string, std::string, std::less<>> prompt_values(const ProposalRequest& request,
                                                              const knowledge::KnowledgeBase& knowledge) {
  const knowledge::SpaceInfo* info = knowledge.space(request.space);
  return {
      {"task_name", request.task_name},
      {"language", language_text(request.language)},
      {"gpu", request.gpu.empty() ? "(unknown GPU)" : request.gpu},
      {"spec", request.spec},
      {"space", space_text(request.space, knowledge)},
      {"space_rules", info ? info->rules_text() : "(no rules recorded for this space)\n"},
      {"current_code", request.current_best_source.empty() ? request.reference_source : request.current_best_source},
      {"profile", request.profile.empty() ? "(no profile)\n" : request.profile},
      {"recipes", recipes_text(request.recipes)},
      {"failures", failures_text(request.history)},
  };
}

Prompt build_prompt(const knowledge::PromptTemplate& prompt_template, const ProposalRequest& request,
                    const knowledge::KnowledgeBase& knowledge, int variant, int of) {
  const auto messages = prompt_template.render(prompt_values(request, knowledge));
  Prompt prompt{messages.system, messages.user};
  if (of > 1) {
    prompt.user += "\n\nThis is proposal " + std::to_string(variant) + " of " + std::to_string(of) +
                   " for this step: take a different approach from the other proposals.\n";
  }
  return prompt;
}

}  // namespace hiera::engine::propose
