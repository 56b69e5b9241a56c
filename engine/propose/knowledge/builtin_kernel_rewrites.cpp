// The production S3 source of the knowledge proposer, apart from the rest so
// that code built with another source (the tests) does not link the kernels.
#include "engine/propose/knowledge/kernels/kernel_rewrites.h"
#include "engine/propose/knowledge/knowledge_proposer.h"

namespace hiera::engine::propose::knowledge_proposer {

KnowledgeProposer::KnowledgeProposer(const knowledge::KnowledgeBase& knowledge)
    : KnowledgeProposer([&knowledge](const graph::OpGraph& graph, const ProposalRequest& request) {
        KernelRewriteOptions options;
        options.allowed_precisions = request.allowed_precisions;
        options.knowledge = &knowledge;
        return find_kernel_rewrites(graph, options);
      }) {}

}  // namespace hiera::engine::propose::knowledge_proposer
