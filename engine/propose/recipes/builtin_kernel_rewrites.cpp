// The production S3 source of the recipe proposer, apart from the rest so
// that code built with another source (the tests) does not link the kernels.
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/recipe_proposer.h"

namespace hiera::engine::propose::recipes {

RecipeProposer::RecipeProposer(const knowledge::KnowledgeBase& knowledge)
    : RecipeProposer([&knowledge](const graph::OpGraph& graph, const ProposalRequest& request) {
        kernels::KernelRewriteOptions options;
        options.allowed_precisions = request.allowed_precisions;
        options.knowledge = &knowledge;
        return kernels::find_kernel_rewrites(graph, options);
      }) {}

}  // namespace hiera::engine::propose::recipes
