#pragma once
// Test-only features for the end-to-end tests. Compiled into hiera-test-lsp,
// never into hiera: they stand in for the analysis and optimizer features
// until those land, and exercise every piece of LSP plumbing.
#include "server/features/feature.h"

namespace hiera::testing {

class TestFeature final : public server::Feature {
 public:
  std::vector<protocol::lsp::Diagnostic> diagnostics(const server::TextDocument& document,
                                                     const server::FeatureContext& context) override;
  std::optional<protocol::lsp::Hover> hover(const server::TextDocument& document,
                                            const protocol::lsp::Position& position,
                                            const server::FeatureContext& context) override;
  std::vector<protocol::lsp::CodeLens> code_lenses(const server::TextDocument& document,
                                                   const server::FeatureContext& context) override;
  std::vector<protocol::lsp::CodeAction> code_actions(const server::TextDocument& document,
                                                      const protocol::lsp::CodeActionParams& params,
                                                      const server::FeatureContext& context) override;
  protocol::lsp::CodeAction resolve_code_action(protocol::lsp::CodeAction action,
                                                const server::FeatureContext& context) override;
  std::vector<std::string> commands() const override;
  nlohmann::json execute_command(const std::string& command, const nlohmann::json& arguments,
                                 const server::FeatureContext& context) override;
};

}  // namespace hiera::testing
