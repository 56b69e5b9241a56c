#pragma once
// The editor features built on source analysis (engine/analysis): hints as
// diagnostics, hovers and code lenses with what each kernel and module costs
// (estimated on the settings' GPU, and measured once profiled), code actions
// to optimize, profile or inspect a symbol, quick fixes, and the
// hiera.explainHint command. Settings it reads: `gpu` and `hints.*`.
#include <memory>
#include <mutex>
#include <set>

#include "engine/facade/knowledge.h"
#include "server/features/feature.h"
#include "server/features/hint_diagnostics.h"
#include "server/state/document_analyses.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

class AnalysisFeature final : public Feature {
 public:
  // `knowledge` gives the GPU specs for estimates and the recipes hints link
  // to; `measurements` is what the profile and optimize jobs recorded.
  AnalysisFeature(std::shared_ptr<const engine::knowledge::KnowledgeBase> knowledge,
                  std::shared_ptr<const MeasurementStore> measurements);

  std::vector<protocol::lsp::Diagnostic> diagnostics(const TextDocument& document, const FeatureContext& context) override;
  std::optional<protocol::lsp::Hover> hover(const TextDocument& document, const protocol::lsp::Position& position,
                                            const FeatureContext& context) override;
  std::vector<protocol::lsp::CodeLens> code_lenses(const TextDocument& document, const FeatureContext& context) override;
  std::vector<protocol::lsp::CodeAction> code_actions(const TextDocument& document,
                                                      const protocol::lsp::CodeActionParams& params,
                                                      const FeatureContext& context) override;
  protocol::lsp::CodeAction resolve_code_action(protocol::lsp::CodeAction action, const FeatureContext& context) override;
  std::vector<protocol::lsp::DocumentSymbol> document_symbols(const TextDocument& document, const FeatureContext& context) override;
  std::vector<protocol::lsp::InlayHint> inlay_hints(const TextDocument& document, const protocol::lsp::Range& range,
                                                    const FeatureContext& context) override;
  std::vector<protocol::lsp::Location> definition(const TextDocument& document, const protocol::lsp::Position& position,
                                                  const FeatureContext& context) override;
  std::vector<protocol::lsp::SymbolInformation> workspace_symbols(const std::string& query, const FeatureContext& context) override;
  nlohmann::json capabilities() const override;
  std::vector<std::string> commands() const override;
  nlohmann::json execute_command(const std::string& command, const nlohmann::json& arguments,
                                 const FeatureContext& context) override;

  const DocumentAnalyses& analyses() const { return analyses_; }

 private:
  std::shared_ptr<const DocumentAnalysis> analysis_of(const TextDocument& document, const FeatureContext& context);
  // The last analysis stored for `document` (of whatever version) and the
  // text it was made from; nullopt when none is stored yet. Never analyses.
  struct Analysed {
    std::shared_ptr<const DocumentAnalysis> analysis;
    const TextDocument* current = nullptr;
    std::optional<TextDocument> stale;  // the analysed version, when it is not the document's
    const TextDocument& text() const { return stale ? *stale : *current; }
  };
  std::optional<Analysed> latest_of(const TextDocument& document) const;
  // The settings' GPU, for occupancy; nullptr when unknown.
  const engine::knowledge::GpuSpec* gpu_of(const FeatureContext& context) const;
  // Tells the user once about each settings value that is ignored.
  void report_problems(const std::vector<std::string>& problems, const FeatureContext& context);

  std::shared_ptr<const engine::knowledge::KnowledgeBase> knowledge_;
  std::shared_ptr<const MeasurementStore> measurements_;
  RecipeLinks recipe_links_;
  DocumentAnalyses analyses_;
  std::mutex reported_mutex_;
  std::set<std::string> reported_;
};

}  // namespace hiera::server
