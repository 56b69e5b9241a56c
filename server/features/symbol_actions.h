#pragma once
// The code actions at a range: for the kernel or module there, "Optimize
// kernel k" / "Optimize M.forward", "Profile kernel k" / "Profile M.forward"
// and "Show task spec for k"; for each shown hint the range overlaps,
// "Explain hint <rule>" and, when the fix is mechanical, the quick fix.
// Listing is cheap: each action carries only `data`
// {"feature":"analysis", "action", "uri", "version", ...}; resolve adds the
// command or the edit for the version the action was listed for.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"
#include "server/features/hint_diagnostics.h"
#include "server/features/hint_settings.h"

namespace hiera::server {

// Commands the actions and lenses name. All but explainHint are another
// feature's; each takes [{"uri", "version", "symbol", "kind": "kernel" | "module"}].
inline constexpr const char* kOptimizeSymbolCommand = "hiera.optimizeSymbol";
inline constexpr const char* kProfileSymbolCommand = "hiera.profileSymbol";
inline constexpr const char* kShowSpecCommand = "hiera.showSpec";
// [{"rule", "uri"?, "version"?, "hint"?: index in the document's hints}]
inline constexpr const char* kExplainHintCommand = "hiera.explainHint";

// {"uri", "version", "symbol", "kind"}
nlohmann::json symbol_argument(const std::string& uri, std::int64_t version, const std::string& symbol,
                               const std::string& kind);

// `document` is the version `analysis` was made from.
std::vector<protocol::lsp::CodeAction> list_actions(const TextDocument& document,
                                                    const engine::analysis::Analysis& analysis,
                                                    const protocol::lsp::CodeActionParams& params,
                                                    const HintSettings& settings, PositionEncoding encoding,
                                                    const RecipeLinks& recipes);

// Fills in an action list_actions made for `document` (the caller checked
// that data's uri and version are this document's). Throws
// RpcError(InvalidParams) for data that names no such action or hint.
protocol::lsp::CodeAction resolve_action(protocol::lsp::CodeAction action, const TextDocument& document,
                                         const engine::analysis::Analysis& analysis, PositionEncoding encoding,
                                         bool document_changes);

}  // namespace hiera::server
