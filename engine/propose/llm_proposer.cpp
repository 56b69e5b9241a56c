#include "engine/propose/llm_proposer.h"

#include <future>
#include <regex>
#include <stdexcept>

#include "engine/propose/llm/code_extraction.h"
#include "engine/propose/prompt_builder.h"

namespace hiera::engine::propose {

LlmProposer::LlmProposer(std::shared_ptr<llm::LlmClient> client, const knowledge::KnowledgeBase& knowledge)
    : client_(std::move(client)), knowledge_(knowledge) {
  if (!knowledge_.prompt("propose")) {
    throw std::invalid_argument("the knowledge base has no 'propose' prompt (knowledge/prompts/propose.json)");
  }
}

std::string LlmProposer::name() const { return "llm:" + client_->endpoint().name; }

std::string first_kernel_name(const std::string& source) {
  static const std::regex kernel(R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\()");
  std::smatch match;
  return std::regex_search(source, match, kernel) ? match[1].str() : std::string();
}

Candidate LlmProposer::one(const ProposalRequest& request, int variant, const CancellationToken& cancel) const {
  Candidate candidate;
  candidate.proposer = name();
  candidate.space = request.space;
  candidate.region = request.region;
  for (const auto* recipe : request.recipes) candidate.recipes.push_back(recipe->id);

  const Prompt prompt = build_prompt(*knowledge_.prompt("propose"), request, knowledge_, variant, request.count);
  const llm::ChatResult result = client_->complete({prompt.system, prompt.user, std::nullopt}, cancel);
  if (!result.ok()) {
    if (result.error().kind == llm::ChatErrorKind::Cancelled) throw Cancelled{};
    candidate.rejected = "the LLM request failed (" + std::string(llm::to_string(result.error().kind)) +
                         "): " + result.error().message;
    return candidate;
  }
  const llm::ChatReply& reply = result.reply();
  candidate.usage = {reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.from_cache};
  const auto language = request.language == Language::Python ? llm::Language::Python : llm::Language::Cuda;
  const llm::ExtractionResult code = llm::extract_code(reply.text, reply.finish, language);
  if (!code.ok()) {
    candidate.rejected = "the reply holds no usable code (" + std::string(llm::to_string(code.rejection->reason)) +
                         "): " + code.rejection->message;
    return candidate;
  }
  candidate.source = code.code;
  if (request.language == Language::Cuda) candidate.kernel = first_kernel_name(candidate.source);
  candidate.notes = "proposal " + std::to_string(variant) + " of " + std::to_string(request.count);
  return candidate;
}

std::vector<Candidate> LlmProposer::propose(const ProposalRequest& request, const CancellationToken& cancel) {
  std::vector<std::future<Candidate>> pending;
  for (int variant = 1; variant <= std::max(1, request.count); ++variant) {
    pending.push_back(std::async(std::launch::async, [this, &request, variant, &cancel] { return one(request, variant, cancel); }));
  }
  std::vector<Candidate> out;
  bool cancelled = false;
  for (auto& p : pending) {
    try {
      out.push_back(p.get());
    } catch (const Cancelled&) {
      cancelled = true;  // wait for the others before leaving: they reference `request`
    }
  }
  if (cancelled) throw Cancelled{};
  return out;
}

}  // namespace hiera::engine::propose
