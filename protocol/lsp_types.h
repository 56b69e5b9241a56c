#pragma once
// The LSP 3.17 types hiera uses. from_json ignores unknown fields and throws
// RpcError(InvalidParams, "<path>: ...") when a required field is missing or
// has the wrong type; optional fields are std::optional.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/message.h"

namespace hiera::protocol::lsp {

using json = nlohmann::json;

struct Position {
  std::int64_t line = 0;
  std::int64_t character = 0;  // in the negotiated encoding's code units
  friend bool operator==(const Position&, const Position&) = default;
};
struct Range {
  Position start;
  Position end;
  friend bool operator==(const Range&, const Range&) = default;
};
struct Location {
  std::string uri;
  Range range;
};

struct TextDocumentIdentifier {
  std::string uri;
};
struct VersionedTextDocumentIdentifier {
  std::string uri;
  std::int64_t version = 0;
};
// version is null in applyEdit when the document is not open.
struct OptionalVersionedTextDocumentIdentifier {
  std::string uri;
  std::optional<std::int64_t> version;
};
struct TextDocumentItem {
  std::string uri;
  std::string languageId;
  std::int64_t version = 0;
  std::string text;
};
struct TextDocumentContentChangeEvent {
  std::optional<Range> range;  // absent: the whole document is replaced
  std::string text;
};

struct DidOpenTextDocumentParams {
  TextDocumentItem textDocument;
};
struct DidChangeTextDocumentParams {
  VersionedTextDocumentIdentifier textDocument;
  std::vector<TextDocumentContentChangeEvent> contentChanges;
};
struct DidCloseTextDocumentParams {
  TextDocumentIdentifier textDocument;
};
struct DidSaveTextDocumentParams {
  TextDocumentIdentifier textDocument;
  std::optional<std::string> text;
};
struct TextDocumentPositionParams {
  TextDocumentIdentifier textDocument;
  Position position;
};

enum class MarkupKind { PlainText, Markdown };
struct MarkupContent {
  MarkupKind kind = MarkupKind::Markdown;
  std::string value;
};
struct Hover {
  MarkupContent contents;
  std::optional<Range> range;
};

enum class DiagnosticSeverity { Error = 1, Warning = 2, Information = 3, Hint = 4 };
struct CodeDescription {
  std::string href;  // a URI: where the diagnostic's code is documented
};
struct Diagnostic {
  Range range;
  std::optional<DiagnosticSeverity> severity;
  std::optional<std::string> code;
  std::optional<std::string> source;
  std::string message;
  std::optional<json> data;
  std::optional<CodeDescription> codeDescription;  // last, so positional initializers above stay valid
};
struct PublishDiagnosticsParams {
  std::string uri;
  std::optional<std::int64_t> version;
  std::vector<Diagnostic> diagnostics;
};

struct Command {
  std::string title;
  std::string command;
  std::optional<json> arguments;  // a JSON array
};
struct CodeLens {
  Range range;
  std::optional<Command> command;
  std::optional<json> data;
};
struct CodeLensParams {
  TextDocumentIdentifier textDocument;
};

// The views of a document: outline, inlay hints, go to definition, symbol search.
enum class SymbolKind {
  File = 1, Module = 2, Namespace = 3, Package = 4, Class = 5, Method = 6, Property = 7, Field = 8,
  Constructor = 9, Enum = 10, Interface = 11, Function = 12, Variable = 13, Constant = 14, String = 15,
  Number = 16, Boolean = 17, Array = 18, Object = 19, Key = 20, Null = 21, EnumMember = 22, Struct = 23,
  Event = 24, Operator = 25, TypeParameter = 26
};
struct DocumentSymbol {
  std::string name;
  std::optional<std::string> detail;
  SymbolKind kind = SymbolKind::Function;
  Range range;           // the whole construct
  Range selectionRange;  // its name, inside `range`
  std::vector<DocumentSymbol> children;  // sent only when not empty
};
struct DocumentSymbolParams {
  TextDocumentIdentifier textDocument;
};
// Sent as workspace/symbol's answer: a SymbolInformation, which is also a 3.17 WorkspaceSymbol.
struct SymbolInformation {
  std::string name;
  SymbolKind kind = SymbolKind::Function;
  Location location;
  std::optional<std::string> containerName;
};
struct WorkspaceSymbolParams {
  std::string query;
};
enum class InlayHintKind { Type = 1, Parameter = 2 };
struct InlayHint {
  Position position;
  std::string label;
  std::optional<InlayHintKind> kind;
  std::optional<std::string> tooltip;  // plain text
  bool paddingLeft = false;
  bool paddingRight = false;
};
struct InlayHintParams {
  TextDocumentIdentifier textDocument;
  Range range;
};

struct TextEdit {
  Range range;
  std::string newText;
  std::optional<std::string> annotationId;  // set: serialised as AnnotatedTextEdit
};
struct TextDocumentEdit {
  OptionalVersionedTextDocumentIdentifier textDocument;
  std::vector<TextEdit> edits;
};
struct ChangeAnnotation {
  std::string label;
  std::optional<bool> needsConfirmation;
  std::optional<std::string> description;
};
struct WorkspaceEdit {
  // Exactly one of changes / documentChanges is used, by the client's capability.
  std::optional<std::vector<std::pair<std::string, std::vector<TextEdit>>>> changes;
  std::optional<std::vector<TextDocumentEdit>> documentChanges;
  std::optional<std::vector<std::pair<std::string, ChangeAnnotation>>> changeAnnotations;
};
struct ApplyWorkspaceEditParams {
  std::optional<std::string> label;
  WorkspaceEdit edit;
};
struct ApplyWorkspaceEditResult {
  bool applied = false;
  std::optional<std::string> failureReason;
};

struct CodeActionContext {
  std::vector<Diagnostic> diagnostics;
  std::optional<std::vector<std::string>> only;
};
struct CodeActionParams {
  TextDocumentIdentifier textDocument;
  Range range;
  CodeActionContext context;
};
struct CodeAction {
  std::string title;
  std::optional<std::string> kind;
  std::optional<std::vector<Diagnostic>> diagnostics;
  std::optional<bool> isPreferred;
  std::optional<WorkspaceEdit> edit;
  std::optional<Command> command;
  std::optional<json> data;
};

struct ExecuteCommandParams {
  std::string command;
  json arguments = json::array();
};

enum class MessageType { Error = 1, Warning = 2, Info = 3, Log = 4 };
struct ShowMessageParams {
  MessageType type = MessageType::Info;
  std::string message;
};
using LogMessageParams = ShowMessageParams;

struct WorkDoneProgressCreateParams {
  json token;  // integer or string
};
struct WorkDoneProgressBegin {
  std::string title;
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;
};
struct WorkDoneProgressReport {
  std::optional<bool> cancellable;
  std::optional<std::string> message;
  std::optional<int> percentage;
};
struct WorkDoneProgressEnd {
  std::optional<std::string> message;
};
struct WorkDoneProgressCancelParams {
  json token;
};

struct ConfigurationItem {
  std::optional<std::string> scopeUri;
  std::optional<std::string> section;
};
struct ConfigurationParams {
  std::vector<ConfigurationItem> items;
};

// What hiera reads of the client's capabilities, flattened.
struct ClientCapabilities {
  bool workDoneProgress = false;           // window.workDoneProgress
  bool applyEdit = false;                  // workspace.applyEdit
  bool documentChanges = false;            // workspace.workspaceEdit.documentChanges
  bool changeAnnotations = false;          // workspace.workspaceEdit.changeAnnotationSupport present
  bool configuration = false;              // workspace.configuration
  bool codeActionLiteral = false;          // textDocument.codeAction.codeActionLiteralSupport present
  bool codeActionResolve = false;          // textDocument.codeAction.resolveSupport present
  std::vector<std::string> codeActionResolveProperties;  // resolveSupport.properties
  bool codeActionData = false;             // textDocument.codeAction.dataSupport
  std::vector<MarkupKind> hoverContentFormat;  // textDocument.hover.contentFormat, in preference order
  std::vector<std::string> positionEncodings;  // general.positionEncodings
  bool showMessageRequest = false;         // window.showMessage present
  bool showDocument = false;               // window.showDocument.support
  bool codeLensRefresh = false;            // workspace.codeLens.refreshSupport
};

struct InitializeParams {
  std::optional<std::int64_t> processId;
  std::optional<std::string> rootUri;
  std::optional<std::string> clientName;
  std::optional<std::string> clientVersion;
  ClientCapabilities capabilities;
  json initializationOptions;  // null when absent
};

// Serialised as "plaintext" / "markdown".
void to_json(json& j, const MarkupKind& v);
void from_json(const json& j, MarkupKind& v);

// from_json/to_json for each type above (to_json only where the server sends
// it, from_json only where the server receives it, both where both happen).
void from_json(const json& j, Position& v);
void to_json(json& j, const Position& v);
void from_json(const json& j, Range& v);
void to_json(json& j, const Range& v);
void to_json(json& j, const Location& v);
void from_json(const json& j, TextDocumentIdentifier& v);
void to_json(json& j, const TextDocumentIdentifier& v);
void from_json(const json& j, VersionedTextDocumentIdentifier& v);
void to_json(json& j, const OptionalVersionedTextDocumentIdentifier& v);
void from_json(const json& j, TextDocumentItem& v);
void from_json(const json& j, TextDocumentContentChangeEvent& v);
void from_json(const json& j, DidOpenTextDocumentParams& v);
void from_json(const json& j, DidChangeTextDocumentParams& v);
void from_json(const json& j, DidCloseTextDocumentParams& v);
void from_json(const json& j, DidSaveTextDocumentParams& v);
void from_json(const json& j, TextDocumentPositionParams& v);
void to_json(json& j, const MarkupContent& v);
void to_json(json& j, const Hover& v);
void from_json(const json& j, CodeDescription& v);
void to_json(json& j, const CodeDescription& v);
void from_json(const json& j, Diagnostic& v);
void to_json(json& j, const Diagnostic& v);
void to_json(json& j, const PublishDiagnosticsParams& v);
void from_json(const json& j, Command& v);
void to_json(json& j, const Command& v);
void from_json(const json& j, CodeLens& v);
void to_json(json& j, const CodeLens& v);
void from_json(const json& j, CodeLensParams& v);
void to_json(json& j, const DocumentSymbol& v);
void from_json(const json& j, DocumentSymbolParams& v);
void to_json(json& j, const SymbolInformation& v);
void from_json(const json& j, WorkspaceSymbolParams& v);
void to_json(json& j, const InlayHint& v);
void from_json(const json& j, InlayHintParams& v);
void from_json(const json& j, TextEdit& v);
void to_json(json& j, const TextEdit& v);
void to_json(json& j, const TextDocumentEdit& v);
void to_json(json& j, const ChangeAnnotation& v);
void to_json(json& j, const WorkspaceEdit& v);
// Read back when a client sends a CodeAction with an edit to codeAction/resolve.
// Resource operations (create/rename/delete file) in documentChanges are rejected.
void from_json(const json& j, OptionalVersionedTextDocumentIdentifier& v);
void from_json(const json& j, TextDocumentEdit& v);
void from_json(const json& j, ChangeAnnotation& v);
void from_json(const json& j, WorkspaceEdit& v);
void to_json(json& j, const ApplyWorkspaceEditParams& v);
void from_json(const json& j, ApplyWorkspaceEditResult& v);
void from_json(const json& j, CodeActionContext& v);
void from_json(const json& j, CodeActionParams& v);
void from_json(const json& j, CodeAction& v);
void to_json(json& j, const CodeAction& v);
void from_json(const json& j, ExecuteCommandParams& v);
void to_json(json& j, const ShowMessageParams& v);
void to_json(json& j, const WorkDoneProgressCreateParams& v);
void to_json(json& j, const WorkDoneProgressBegin& v);   // adds "kind":"begin"
void to_json(json& j, const WorkDoneProgressReport& v);  // adds "kind":"report"
void to_json(json& j, const WorkDoneProgressEnd& v);     // adds "kind":"end"
void from_json(const json& j, WorkDoneProgressCancelParams& v);
void to_json(json& j, const ConfigurationParams& v);
void from_json(const json& j, ClientCapabilities& v);
void from_json(const json& j, InitializeParams& v);

// Parses params into T, turning any failure into RpcError(InvalidParams) with the field's path.
// A params value that is not itself the expected object is reported under the path "params".
template <typename T>
T parse_params(const json& params) {
  T value{};
  try {
    from_json(params, value);
  } catch (const RpcError&) {
    throw;  // already InvalidParams with the field's path
  } catch (const nlohmann::json::exception& e) {
    // from_json checks types itself; this backstop keeps any slip an InvalidParams reply.
    throw RpcError(ErrorCode::InvalidParams, std::string("params: ") + e.what());
  }
  return value;
}

}  // namespace hiera::protocol::lsp
