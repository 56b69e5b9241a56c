#include "server/features/analysis_feature.h"

#include <filesystem>

#include "engine/facade/hints.h"
#include "server/features/analysis_symbols.h"
#include "server/features/annotation_diagnostics.h"
#include "engine/facade/cost_estimates.h"
#include "server/features/cost_text.h"
#include "server/features/document_symbols.h"
#include "server/features/estimate_target.h"
#include "server/features/file_uri.h"
#include "server/features/hint_explanation.h"
#include "server/features/hint_settings.h"
#include "server/features/inlay_hints.h"
#include "server/features/kernel_definition.h"
#include "server/features/layer_definition.h"
#include "server/features/symbol_actions.h"
#include "server/features/symbol_hover.h"
#include "server/features/workspace_symbols.h"

namespace hiera::server {

namespace lsp = protocol::lsp;
using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

HintSettings hint_settings_of(const FeatureContext& context) { return parse_hint_settings(context.settings.get("/hints")); }

// The document an action or command names, at the version it was made for.
std::shared_ptr<const TextDocument> document_at(const FeatureContext& context, const json& args, const std::string& what) {
  if (!args.contains("uri") || !args["uri"].is_string()) throw RpcError(ErrorCode::InvalidParams, what + ": uri is required");
  const auto uri = args["uri"].get<std::string>();
  auto document = context.documents.get(uri);
  if (!document) throw RpcError(ErrorCode::InvalidParams, what + ": document not open: " + uri);
  if (args.contains("version")) {
    if (!args["version"].is_number_integer()) throw RpcError(ErrorCode::InvalidParams, what + ": version must be an integer");
    if (args["version"].get<std::int64_t>() != document->version()) {
      throw RpcError(ErrorCode::ContentModified, what + ": the document changed since this was offered (version " +
                                                     args["version"].dump() + ", now " + std::to_string(document->version()) + ")");
    }
  }
  return document;
}

}  // namespace

AnalysisFeature::AnalysisFeature(std::shared_ptr<const engine::knowledge::KnowledgeBase> knowledge,
                                 std::shared_ptr<const MeasurementStore> measurements)
    : knowledge_(std::move(knowledge)), measurements_(std::move(measurements)) {
  for (const auto& recipe : knowledge_->recipes) {
    const auto path = knowledge_->dir / "recipes" / (recipe.id + ".json");
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) recipe_links_[recipe.id] = file_uri(std::filesystem::absolute(path, ec));
  }
}

std::shared_ptr<const DocumentAnalysis> AnalysisFeature::analysis_of(const TextDocument& document, const FeatureContext& context) {
  analyses_.retain(context.documents.uris());  // closed documents go
  return analyses_.of(document);
}

void AnalysisFeature::report_problems(const std::vector<std::string>& problems, const FeatureContext& context) {
  for (const auto& problem : problems) {
    {
      std::lock_guard lock(reported_mutex_);
      if (!reported_.insert(problem).second) continue;
    }
    // Shown, not only logged: a refused setting is something the user set and
    // would otherwise never hear of. Once per distinct problem.
    const std::string message = "hiera: " + problem + " (ignored)";
    context.client.notify("window/showMessage", lsp::ShowMessageParams{lsp::MessageType::Warning, message});
    context.client.notify("window/logMessage", lsp::LogMessageParams{lsp::MessageType::Warning, message});
  }
}

std::vector<lsp::Diagnostic> AnalysisFeature::diagnostics(const TextDocument& document, const FeatureContext& context) {
  const auto settings = hint_settings_of(context);
  report_problems(settings.problems, context);
  const auto analysed = analysis_of(document, context);  // analysed even without hints: lenses and hovers read it
  if (!analysed) return {};
  // A build superseded while it analysed stops before rendering its hints.
  engine::throw_if_cancelled(context.request_cancel);
  // Malformed annotations are shown even with hints off: Profile and Optimize refuse them.
  auto annotations = annotation_diagnostics(document, analysed->analysis, context.encoding);
  if (!settings.enabled) return annotations;
  auto out = hint_diagnostics(document, analysed->analysis, settings, context.encoding, recipe_links_);
  out.insert(out.end(), annotations.begin(), annotations.end());
  return out;
}

std::optional<lsp::Hover> AnalysisFeature::hover(const TextDocument& document, const lsp::Position& position,
                                                 const FeatureContext& context) {
  // Stale is OK for hover: the server waited briefly for this version's
  // build; if edits keep coming, the last analysis answers, read against the
  // text it was made from.
  auto analysed = analyses_.latest(document);
  if (!analysed) analysed = analysis_of(document, context);
  if (!analysed) return std::nullopt;
  std::optional<TextDocument> stale;
  if (analysed->version != document.version() || analysed->text != document.text()) {
    stale.emplace(document.uri(), document.language_id(), analysed->version, analysed->text);
  }
  const TextDocument& analysed_document = stale ? *stale : document;
  const auto target = estimate_target(*knowledge_, context.settings.get("/gpu"));
  if (!target.problem.empty()) report_problems({target.problem}, context);
  return symbol_hover(analysed_document, analysed->analysis, analysed_document.offset_of(position, context.encoding),
                      *measurements_, target, context.encoding);
}

std::vector<lsp::CodeLens> AnalysisFeature::code_lenses(const TextDocument& document, const FeatureContext& context) {
  const auto analysed = analysis_of(document, context);
  if (!analysed) return {};
  const auto target = estimate_target(*knowledge_, context.settings.get("/gpu"));
  if (!target.problem.empty()) report_problems({target.problem}, context);
  const auto* roofline = target.roofline ? &*target.roofline : nullptr;
  const auto& a = analysed->analysis;
  std::vector<lsp::CodeLens> out;
  for (const auto& symbol : cost_symbols(a)) {
    std::optional<engine::facade::CostEstimate> estimate;
    if (symbol.kind == SymbolKind::Kernel) {
      if (const auto* kernel = find_kernel(a, symbol.name)) estimate = engine::facade::kernel_estimate(*kernel, roofline);
    } else {
      for (const auto& module : a.modules) {
        if (module.name == symbol.name && module.span == symbol.span) estimate = engine::facade::module_estimate(module, roofline);
      }
    }
    const auto title = lens_title(measurements_->get(document.uri(), symbol.name), estimate, target);
    out.push_back(lsp::CodeLens{
        {document.position_of(symbol.name_span.begin, context.encoding), document.position_of(symbol.name_span.end, context.encoding)},
        lsp::Command{title, kProfileSymbolCommand,
                     json::array({symbol_argument(document.uri(), document.version(), symbol.name, to_string(symbol.kind))})},
        std::nullopt});
  }
  return out;
}

std::vector<lsp::CodeAction> AnalysisFeature::code_actions(const TextDocument& document, const lsp::CodeActionParams& params,
                                                           const FeatureContext& context) {
  const auto analysed = analysis_of(document, context);
  if (!analysed) return {};
  return list_actions(document, analysed->analysis, params, hint_settings_of(context), context.encoding, recipe_links_);
}

lsp::CodeAction AnalysisFeature::resolve_code_action(lsp::CodeAction action, const FeatureContext& context) {
  const json data = action.data.value_or(json());
  if (!data.is_object() || data.value("feature", "") != "analysis") {
    throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: not an analysis action");
  }
  const auto document = document_at(context, data, "codeAction/resolve");
  if (!data.contains("version")) throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: version is required");
  const auto analysed = analysis_of(*document, context);
  if (!analysed) throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: " + document->uri() + " is not CUDA or Python");
  return resolve_action(std::move(action), *document, analysed->analysis, context.encoding,
                        context.client_capabilities.documentChanges);
}

std::optional<AnalysisFeature::Analysed> AnalysisFeature::latest_of(const TextDocument& document) const {
  auto analysed = analyses_.latest(document);
  if (!analysed) return std::nullopt;
  Analysed out{analysed, &document, std::nullopt};
  if (analysed->version != document.version() || analysed->text != document.text()) {
    out.stale.emplace(document.uri(), document.language_id(), analysed->version, analysed->text);
  }
  return out;
}

const engine::knowledge::GpuSpec* AnalysisFeature::gpu_of(const FeatureContext& context) const {
  const json setting = context.settings.get("/gpu");
  if (setting.is_null()) return knowledge_->gpu(kDefaultGpu);
  return setting.is_string() ? knowledge_->gpu(setting.get<std::string>()) : nullptr;
}

std::vector<lsp::DocumentSymbol> AnalysisFeature::document_symbols(const TextDocument& document, const FeatureContext& context) {
  const auto analysed = latest_of(document);
  if (!analysed) return {};
  const auto target = estimate_target(*knowledge_, context.settings.get("/gpu"));
  return hiera::server::document_symbols(analysed->text(), analysed->analysis->analysis, *measurements_, target,
                                         context.encoding);
}

std::vector<lsp::InlayHint> AnalysisFeature::inlay_hints(const TextDocument& document, const lsp::Range& range,
                                                         const FeatureContext& context) {
  const auto analysed = latest_of(document);
  if (!analysed) return {};
  const auto target = estimate_target(*knowledge_, context.settings.get("/gpu"));
  return hiera::server::inlay_hints(analysed->text(), analysed->analysis->analysis, range, *measurements_, target,
                                    gpu_of(context), context.encoding);
}

std::vector<lsp::Location> AnalysisFeature::definition(const TextDocument& document, const lsp::Position& position,
                                                       const FeatureContext& context) {
  const auto analysed = latest_of(document);
  if (!analysed) return {};
  const auto& here = analysed->text();
  const auto offset = here.offset_of(position, context.encoding);
  auto range_of = [&](const TextDocument& text, const engine::analysis::Span& span) {
    return lsp::Range{text.position_of(span.begin, context.encoding), text.position_of(span.end, context.encoding)};
  };
  if (const auto* layer = layer_at_call(analysed->analysis->analysis, here.text(), offset)) {
    return {lsp::Location{here.uri(), range_of(here, layer->span)}};
  }
  const auto* launch = launch_at_kernel_name(analysed->analysis->analysis, offset);
  if (!launch) return {};
  auto location_in = [&](const TextDocument& text, const engine::analysis::Analysis& a) -> std::optional<lsp::Location> {
    const auto* kernel = find_kernel(a, launch->kernel);
    if (!kernel) return std::nullopt;
    return lsp::Location{text.uri(), range_of(text, kernel->name_span)};
  };
  if (auto found = location_in(here, analysed->analysis->analysis)) return {*found};
  // Another open CUDA document that defines it (a header, a second .cu): the first by URI.
  for (const auto& uri : context.documents.uris()) {
    if (uri == document.uri()) continue;
    const auto other = context.documents.get(uri);
    if (!other) continue;
    const auto theirs = latest_of(*other);
    if (!theirs || theirs->analysis->analysis.language != engine::analysis::Language::Cuda) continue;
    if (auto found = location_in(theirs->text(), theirs->analysis->analysis)) return {*found};
  }
  return {};
}

std::vector<lsp::SymbolInformation> AnalysisFeature::workspace_symbols(const std::string& query, const FeatureContext& context) {
  std::vector<DocumentStore::Snapshot> open;
  std::vector<Analysed> analysed;
  for (const auto& uri : context.documents.uris()) {
    auto document = context.documents.get(uri);
    if (!document) continue;
    if (auto found = latest_of(*document)) {
      open.push_back(std::move(document));
      analysed.push_back(std::move(*found));
    }
  }
  std::vector<AnalysedDocument> documents;
  for (auto& a : analysed) documents.push_back({&a.text(), &a.analysis->analysis});
  return hiera::server::workspace_symbols(documents, query, context.encoding);
}

json AnalysisFeature::capabilities() const {
  return {{"documentSymbolProvider", true},
          {"inlayHintProvider", {{"resolveProvider", false}}},
          {"workspaceSymbolProvider", true},
          {"definitionProvider", true}};
}

std::vector<std::string> AnalysisFeature::commands() const { return {kExplainHintCommand}; }

json AnalysisFeature::execute_command(const std::string& command, const json& arguments, const FeatureContext& context) {
  if (command != kExplainHintCommand) throw RpcError(ErrorCode::InvalidRequest, "unknown command: " + command);
  const json args = arguments.is_array() && !arguments.empty() ? arguments[0] : json();
  if (!args.is_object()) throw RpcError(ErrorCode::InvalidParams, command + ": the argument must be an object {\"rule\", ...}");
  if (!args.contains("rule") || !args["rule"].is_string()) throw RpcError(ErrorCode::InvalidParams, command + ": rule is required");
  const auto rule = args["rule"].get<std::string>();
  bool known = false;
  for (const auto& r : engine::analysis::hint_rules()) known = known || r.id == rule;
  if (!known) throw RpcError(ErrorCode::InvalidParams, command + ": unknown rule '" + rule + "'");

  // With a document and a hint index, the message of that occurrence leads.
  std::optional<engine::analysis::Hint> hint;
  if (args.contains("uri")) {
    const auto document = document_at(context, args, command);
    if (args.contains("hint")) {
      if (!args["hint"].is_number_unsigned()) throw RpcError(ErrorCode::InvalidParams, command + ": hint must be an index");
      const auto analysed = analysis_of(*document, context);
      const auto index = args["hint"].get<std::size_t>();
      if (!analysed || index >= analysed->analysis.hints.size() || analysed->analysis.hints[index].rule != rule) {
        throw RpcError(ErrorCode::InvalidParams, command + ": no hint " + rule + " at index " + std::to_string(index));
      }
      hint = analysed->analysis.hints[index];
    }
  }
  const auto explanation = explain_hint(rule, hint ? &*hint : nullptr, *knowledge_);
  context.client.notify("window/showMessage", lsp::ShowMessageParams{lsp::MessageType::Info, explanation.one_line});
  return {{"title", explanation.title}, {"markdown", explanation.markdown}};
}

}  // namespace hiera::server
