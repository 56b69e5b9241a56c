#pragma once
// A language feature the server offers. The server owns the LSP plumbing
// (lifecycle, documents, replies, capabilities); a feature only computes.
// Every method has a do-nothing default, so a feature implements what it has.
#include <optional>
#include <string>
#include <vector>

#include "engine/common/cancellation.h"
#include "protocol/lsp_types.h"
#include "server/client/client.h"
#include "server/documents/document_store.h"
#include "server/jobs/job_manager.h"
#include "server/state/settings.h"

namespace hiera::server {

struct FeatureContext {
  PositionEncoding encoding;
  const protocol::lsp::ClientCapabilities& client_capabilities;
  const Settings& settings;
  DocumentStore& documents;
  JobManager& jobs;
  Client& client;
  engine::CancellationToken request_cancel;  // of the request being served; long handlers poll it
};

class Feature {
 public:
  virtual ~Feature() = default;

  virtual std::vector<protocol::lsp::Diagnostic> diagnostics(const TextDocument&, const FeatureContext&) { return {}; }
  virtual std::optional<protocol::lsp::Hover> hover(const TextDocument&, const protocol::lsp::Position&,
                                                    const FeatureContext&) {
    return std::nullopt;
  }
  virtual std::vector<protocol::lsp::CodeLens> code_lenses(const TextDocument&, const FeatureContext&) { return {}; }
  // Cheap: list actions with `data`, leaving expensive parts for resolve.
  virtual std::vector<protocol::lsp::CodeAction> code_actions(const TextDocument&,
                                                              const protocol::lsp::CodeActionParams&,
                                                              const FeatureContext&) {
    return {};
  }
  // Fills in an action this feature listed (the server routes by data.feature).
  virtual protocol::lsp::CodeAction resolve_code_action(protocol::lsp::CodeAction action, const FeatureContext&) {
    return action;
  }
  // The views of documents. They read what the last build left (never
  // analyse on the message loop): a document not analysed yet has none.
  virtual std::vector<protocol::lsp::DocumentSymbol> document_symbols(const TextDocument&, const FeatureContext&) { return {}; }
  // The hints whose position lies in `range`.
  virtual std::vector<protocol::lsp::InlayHint> inlay_hints(const TextDocument&, const protocol::lsp::Range& /*range*/,
                                                            const FeatureContext&) {
    return {};
  }
  virtual std::vector<protocol::lsp::Location> definition(const TextDocument&, const protocol::lsp::Position&,
                                                          const FeatureContext&) {
    return {};
  }
  // Over every open document (context.documents).
  virtual std::vector<protocol::lsp::SymbolInformation> workspace_symbols(const std::string& /*query*/, const FeatureContext&) {
    return {};
  }
  // Server capabilities this feature adds to the initialize reply
  // ({"documentSymbolProvider": true, ...}); the server answers the methods
  // either way (empty results without a feature).
  virtual nlohmann::json capabilities() const { return nlohmann::json::object(); }
  // Names of the workspace/executeCommand commands this feature handles.
  virtual std::vector<std::string> commands() const { return {}; }
  virtual nlohmann::json execute_command(const std::string& command, const nlohmann::json& /*arguments*/,
                                         const FeatureContext&) {
    throw protocol::RpcError(protocol::ErrorCode::InvalidRequest, "unknown command: " + command);
  }
};

}  // namespace hiera::server
