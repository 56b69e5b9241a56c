#pragma once
// The LLM proposer: one chat request per wanted candidate (in parallel, within
// the client's concurrency limit), the prompt built from the knowledge base's
// "propose" template, the code taken out of the reply. A reply without usable
// code becomes a rejected candidate with its reason; the loop goes on.
#include <memory>
#include <string>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/llm/llm_client.h"
#include "engine/propose/proposer.h"

namespace hiera::engine::propose {

class LlmProposer final : public Proposer {
 public:
  // `knowledge` must outlive the proposer; it must hold the "propose" prompt.
  LlmProposer(std::shared_ptr<llm::LlmClient> client, const knowledge::KnowledgeBase& knowledge);
  std::string name() const override;
  std::vector<Candidate> propose(const ProposalRequest& request, const CancellationToken& cancel) override;

  llm::Usage usage() const { return client_->usage(); }

 private:
  Candidate one(const ProposalRequest& request, int variant, const CancellationToken& cancel) const;

  std::shared_ptr<llm::LlmClient> client_;
  const knowledge::KnowledgeBase& knowledge_;
};

// The first `__global__` function's name in CUDA source; empty when there is none.
std::string first_kernel_name(const std::string& source);

}  // namespace hiera::engine::propose
