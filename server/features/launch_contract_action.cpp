#include "server/features/launch_contract_action.h"

#include "engine/facade/annotation_contracts.h"
#include "server/features/hint_fixes.h"

namespace hiera::server {

namespace lsp = protocol::lsp;
using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

std::string title_of(const engine::spec::InferredContract& contract) {
  return contract.complete() ? "Add launch contract" : "Add launch contract (fill in the values marked ?)";
}

}  // namespace

std::optional<lsp::CodeAction> launch_contract_action(const TextDocument& document, const engine::analysis::Analysis& analysis,
                                                      const std::string& kernel, json base) {
  const auto contract = engine::spec::infer_launch_contract(document.text(), analysis, kernel);
  if (!contract) return std::nullopt;
  lsp::CodeAction action;
  action.title = title_of(*contract);
  action.kind = "source";
  base["action"] = kLaunchContractAction;
  base["symbol"] = kernel;
  action.data = std::move(base);
  return action;
}

lsp::CodeAction resolve_launch_contract(lsp::CodeAction action, const TextDocument& document,
                                        const engine::analysis::Analysis& analysis, PositionEncoding encoding,
                                        bool document_changes) {
  const json data = action.data.value_or(json());
  const auto symbol = data.find("symbol");
  if (symbol == data.end() || !symbol->is_string()) {
    throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: data.symbol must name the kernel");
  }
  const auto kernel = symbol->get<std::string>();
  const auto contract = engine::spec::infer_launch_contract(document.text(), analysis, kernel);
  if (!contract) {
    throw RpcError(ErrorCode::InvalidParams,
                   "codeAction/resolve: kernel " + kernel + " has a launch contract already, or is not in the document");
  }
  // One insertion, in the same versioned form as a hint's quick fix.
  engine::analysis::Hint insertion;
  insertion.fix.push_back({{contract->insert_at, contract->insert_at}, contract->text});
  action.edit = fix_edit(document, insertion, encoding, document_changes);
  return action;
}

}  // namespace hiera::server
