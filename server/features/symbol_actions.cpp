#include "server/features/symbol_actions.h"

#include "server/features/analysis_symbols.h"
#include "server/features/hint_fixes.h"
#include "server/features/launch_contract_action.h"

namespace hiera::server {

namespace analysis = engine::analysis;
namespace lsp = protocol::lsp;
using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

// LSP kinds are hierarchical: "refactor" admits "refactor.rewrite".
bool wanted(const std::optional<std::vector<std::string>>& only, const std::string& kind) {
  if (!only) return true;
  for (const auto& prefix : *only) {
    if (kind == prefix || kind.rfind(prefix + ".", 0) == 0) return true;
  }
  return false;
}

lsp::CodeAction listed(std::string title, std::string kind, json data) {
  lsp::CodeAction action;
  action.title = std::move(title);
  action.kind = std::move(kind);
  action.data = std::move(data);
  return action;
}

std::string symbol_title(const std::string& verb, const json& data) {
  const auto symbol = data.at("symbol").get<std::string>();
  if (verb == "spec") return "Show task spec for " + symbol;
  const std::string head = verb == "optimize" ? "Optimize " : "Profile ";
  return data.at("kind") == "kernel" ? head + "kernel " + symbol : head + symbol + ".forward";
}

const char* symbol_command(const std::string& verb) {
  if (verb == "optimize") return kOptimizeSymbolCommand;
  if (verb == "profile") return kProfileSymbolCommand;
  return kShowSpecCommand;
}

template <typename T>
T field(const json& data, const char* name) {
  const auto found = data.find(name);
  if (found == data.end()) throw RpcError(ErrorCode::InvalidParams, std::string("codeAction/resolve: data.") + name + " is missing");
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw RpcError(ErrorCode::InvalidParams, std::string("codeAction/resolve: data.") + name + " has the wrong type");
  }
}

}  // namespace

json symbol_argument(const std::string& uri, std::int64_t version, const std::string& symbol, const std::string& kind) {
  return {{"uri", uri}, {"version", version}, {"symbol", symbol}, {"kind", kind}};
}

std::vector<lsp::CodeAction> list_actions(const TextDocument& document, const analysis::Analysis& a,
                                          const lsp::CodeActionParams& params, const HintSettings& settings,
                                          PositionEncoding encoding, const RecipeLinks& recipes) {
  const std::size_t begin = document.offset_of(params.range.start, encoding);
  const std::size_t end = std::max(begin, document.offset_of(params.range.end, encoding));
  const auto& only = params.context.only;
  const json base = {{"feature", "analysis"}, {"uri", document.uri()}, {"version", document.version()}};
  std::vector<lsp::CodeAction> out;

  for (std::size_t index = 0; index < a.hints.size(); ++index) {
    const auto& hint = a.hints[index];
    // Touching counts: a cursor just before or after the flagged text.
    if (!settings.shows(hint) || hint.span.begin > end || hint.span.end < begin) continue;
    if (!wanted(only, "quickfix")) continue;
    json data = base;
    data["hint"] = index;
    data["rule"] = hint.rule;
    const auto diagnostic = hint_diagnostic(document, hint, settings, encoding, recipes);
    if (!hint.fix.empty()) {
      data["action"] = "fix";
      auto fix = listed(fix_title(document, hint), "quickfix", data);
      fix.diagnostics = std::vector<lsp::Diagnostic>{diagnostic};
      fix.isPreferred = true;
      out.push_back(std::move(fix));
    }
    data["action"] = "explain";
    auto explain = listed("Explain hint " + hint.rule, "quickfix", data);
    explain.diagnostics = std::vector<lsp::Diagnostic>{diagnostic};
    out.push_back(std::move(explain));
  }

  if (const auto symbol = symbol_at(a, {begin, end})) {
    json data = base;
    data["symbol"] = symbol->name;
    data["kind"] = to_string(symbol->kind);
    for (const auto& [verb, kind] : {std::pair{"optimize", "refactor.rewrite"}, {"profile", "source"}, {"spec", "source"}}) {
      if (!wanted(only, kind)) continue;
      data["action"] = verb;
      out.push_back(listed(symbol_title(verb, data), kind, data));
    }
    if (symbol->kind == SymbolKind::Kernel && wanted(only, "source")) {
      if (auto contract = launch_contract_action(document, a, symbol->name, base)) out.push_back(std::move(*contract));
    }
  }
  return out;
}

lsp::CodeAction resolve_action(lsp::CodeAction action, const TextDocument& document, const analysis::Analysis& a,
                               PositionEncoding encoding, bool document_changes) {
  const json data = action.data.value_or(json());
  const auto verb = field<std::string>(data, "action");
  if (verb == "optimize" || verb == "profile" || verb == "spec") {
    const auto symbol = field<std::string>(data, "symbol");
    const auto kind = field<std::string>(data, "kind");
    if (kind != "kernel" && kind != "module") {
      throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: data.kind must be \"kernel\" or \"module\"");
    }
    action.command = lsp::Command{action.title, symbol_command(verb),
                                  json::array({symbol_argument(document.uri(), document.version(), symbol, kind)})};
    return action;
  }
  if (verb == kLaunchContractAction) return resolve_launch_contract(std::move(action), document, a, encoding, document_changes);
  if (verb != "fix" && verb != "explain") throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: unknown action '" + verb + "'");
  const auto index = field<std::size_t>(data, "hint");
  const auto rule = field<std::string>(data, "rule");
  if (index >= a.hints.size() || a.hints[index].rule != rule) {
    throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: no hint " + rule + " at index " + std::to_string(index));
  }
  if (verb == "explain") {
    action.command = lsp::Command{action.title, kExplainHintCommand,
                                  json::array({{{"rule", rule}, {"uri", document.uri()}, {"version", document.version()},
                                                {"hint", index}}})};
    return action;
  }
  if (a.hints[index].fix.empty()) throw RpcError(ErrorCode::InvalidParams, "codeAction/resolve: hint " + rule + " has no fix");
  action.edit = fix_edit(document, a.hints[index], encoding, document_changes);
  return action;
}

}  // namespace hiera::server
