#include "protocol/lsp_types.h"

#include <limits>
#include <utility>

namespace hiera::protocol::lsp {

namespace {

// An InvalidParams error that knows its field path, so enclosing readers can
// prefix their own field name as the error travels outward.
class FieldError : public RpcError {
 public:
  FieldError(std::string path, std::string detail)
      : RpcError(ErrorCode::InvalidParams, (path.empty() ? std::string("params") : path) + ": " + detail),
        path_(std::move(path)),
        detail_(std::move(detail)) {}

  // name is a field ("textDocument") or an index ("[2]").
  FieldError within(std::string_view name) const {
    std::string path(name);
    if (!path_.empty()) {
      if (path_.front() != '[') path += '.';
      path += path_;
    }
    return FieldError(std::move(path), detail_);
  }

 private:
  std::string path_;
  std::string detail_;
};

// How a wrong value is shown: scalars by value, containers and strings by kind
// (a string may be a whole document).
std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    default: return v.dump();
  }
}

[[noreturn]] void fail(std::string detail) { throw FieldError("", std::move(detail)); }

template <typename F>
decltype(auto) in_field(std::string_view name, F&& read) {
  try {
    return read();
  } catch (const FieldError& e) {
    throw e.within(name);
  }
}

void expect_object(const json& j) {
  if (!j.is_object()) fail("expected an object, got " + describe(j));
}

// The member, or nullptr when absent. Callers have checked j is an object.
const json* member(const json& j, std::string_view name) {
  auto it = j.find(name);
  return it == j.end() ? nullptr : &*it;
}

// Value readers: each checks the JSON type and reports with an empty path.
void read_value(const json& v, std::string& out) {
  if (!v.is_string()) fail("expected a string, got " + describe(v));
  out = v.get<std::string>();
}

void read_value(const json& v, bool& out) {
  if (!v.is_boolean()) fail("expected a boolean, got " + describe(v));
  out = v.get<bool>();
}

std::int64_t read_integer(const json& v, bool non_negative) {
  const char* expected = non_negative ? "expected a non-negative integer, got " : "expected an integer, got ";
  if (!v.is_number_integer()) fail(expected + describe(v));
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("integer out of range: " + v.dump());
    }
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  const auto value = v.get<std::int64_t>();
  if (non_negative && value < 0) fail(expected + v.dump());
  return value;
}

void read_value(const json& v, std::int64_t& out) { out = read_integer(v, false); }

template <typename T>
void read_value(const json& v, T& out);  // an LSP structure, defined below

template <typename T>
void read_value(const json& v, std::vector<T>& out) {
  if (!v.is_array()) fail("expected an array, got " + describe(v));
  out.clear();
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    in_field("[" + std::to_string(i) + "]", [&] { read_value(v[i], out.emplace_back()); });
  }
}

// Everything else is an LSP structure with its own from_json.
template <typename T>
void read_value(const json& v, T& out) {
  from_json(v, out);
}

template <typename T>
constexpr const char* kind_name() {
  if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (std::is_same_v<T, bool>) return "boolean";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "integer";
  else if constexpr (requires(T t) { t.begin(); }) return "array";
  else return "object";
}

template <typename T>
T required_field(const json& j, std::string_view name) {
  const json* v = member(j, name);
  if (v == nullptr) throw FieldError(std::string(name), std::string("required ") + kind_name<T>() + " field is missing");
  T out{};
  in_field(name, [&] { read_value(*v, out); });
  return out;
}

// Absent or null: nullopt. Present with the wrong type: an error.
template <typename T>
std::optional<T> optional_field(const json& j, std::string_view name) {
  const json* v = member(j, name);
  if (v == nullptr || v->is_null()) return std::nullopt;
  T out{};
  in_field(name, [&] { read_value(*v, out); });
  return out;
}

std::optional<json> optional_any(const json& j, std::string_view name) {
  const json* v = member(j, name);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return *v;
}

std::int64_t required_uinteger(const json& j, std::string_view name) {
  const json* v = member(j, name);
  if (v == nullptr) throw FieldError(std::string(name), "required integer field is missing");
  return in_field(name, [&] { return read_integer(*v, true); });
}

// Progress tokens and the like: integer | string, kept as JSON.
json read_integer_or_string(const json& j, std::string_view name) {
  const json* v = member(j, name);
  if (v == nullptr) throw FieldError(std::string(name), "required integer or string field is missing");
  if (!v->is_number_integer() && !v->is_string()) {
    throw FieldError(std::string(name), "expected an integer or a string, got " + describe(*v));
  }
  return *v;
}

template <typename T>
void put_optional(json& j, const char* name, const std::optional<T>& value) {
  if (value) j[name] = *value;
}

// ClientCapabilities: clients send odd things, so a wrong type along a path reads as absent.
const json* at_path(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

bool flag_at(const json& j, std::initializer_list<const char*> path) {
  const json* v = at_path(j, path);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

bool object_at(const json& j, std::initializer_list<const char*> path) {
  const json* v = at_path(j, path);
  return v != nullptr && v->is_object();
}

std::vector<std::string> strings_at(const json& j, std::initializer_list<const char*> path) {
  std::vector<std::string> out;
  const json* v = at_path(j, path);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& item : *v) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

void to_json(json& j, const MarkupKind& v) { j = v == MarkupKind::PlainText ? "plaintext" : "markdown"; }

void from_json(const json& j, MarkupKind& v) {
  if (j == "plaintext") {
    v = MarkupKind::PlainText;
  } else if (j == "markdown") {
    v = MarkupKind::Markdown;
  } else {
    fail("expected \"plaintext\" or \"markdown\", got " + (j.is_string() ? j.dump() : describe(j)));
  }
}

void from_json(const json& j, Position& v) {
  expect_object(j);
  v.line = required_uinteger(j, "line");
  v.character = required_uinteger(j, "character");
}

void to_json(json& j, const Position& v) { j = {{"line", v.line}, {"character", v.character}}; }

void from_json(const json& j, Range& v) {
  expect_object(j);
  v.start = required_field<Position>(j, "start");
  v.end = required_field<Position>(j, "end");
}

void to_json(json& j, const Range& v) { j = {{"start", v.start}, {"end", v.end}}; }

void to_json(json& j, const Location& v) { j = {{"uri", v.uri}, {"range", v.range}}; }

void from_json(const json& j, TextDocumentIdentifier& v) {
  expect_object(j);
  v.uri = required_field<std::string>(j, "uri");
}

void to_json(json& j, const TextDocumentIdentifier& v) { j = {{"uri", v.uri}}; }

void from_json(const json& j, VersionedTextDocumentIdentifier& v) {
  expect_object(j);
  v.uri = required_field<std::string>(j, "uri");
  v.version = required_field<std::int64_t>(j, "version");
}

void to_json(json& j, const OptionalVersionedTextDocumentIdentifier& v) {
  // version is "integer | null" and required: null is written, not omitted.
  j = {{"uri", v.uri}, {"version", v.version ? json(*v.version) : json(nullptr)}};
}

void from_json(const json& j, OptionalVersionedTextDocumentIdentifier& v) {
  expect_object(j);
  v.uri = required_field<std::string>(j, "uri");
  v.version = optional_field<std::int64_t>(j, "version");
}

void from_json(const json& j, TextDocumentItem& v) {
  expect_object(j);
  v.uri = required_field<std::string>(j, "uri");
  v.languageId = required_field<std::string>(j, "languageId");
  v.version = required_field<std::int64_t>(j, "version");
  v.text = required_field<std::string>(j, "text");
}

void from_json(const json& j, TextDocumentContentChangeEvent& v) {
  expect_object(j);
  v.range = optional_field<Range>(j, "range");  // the deprecated rangeLength is ignored
  v.text = required_field<std::string>(j, "text");
}

void from_json(const json& j, DidOpenTextDocumentParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentItem>(j, "textDocument");
}

void from_json(const json& j, DidChangeTextDocumentParams& v) {
  expect_object(j);
  v.textDocument = required_field<VersionedTextDocumentIdentifier>(j, "textDocument");
  v.contentChanges = required_field<std::vector<TextDocumentContentChangeEvent>>(j, "contentChanges");
}

void from_json(const json& j, DidCloseTextDocumentParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
}

void from_json(const json& j, DidSaveTextDocumentParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
  v.text = optional_field<std::string>(j, "text");
}

void from_json(const json& j, TextDocumentPositionParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
  v.position = required_field<Position>(j, "position");
}

void to_json(json& j, const MarkupContent& v) { j = {{"kind", v.kind}, {"value", v.value}}; }

void to_json(json& j, const Hover& v) {
  j = {{"contents", v.contents}};
  put_optional(j, "range", v.range);
}

void from_json(const json& j, CodeDescription& v) {
  expect_object(j);
  v.href = required_field<std::string>(j, "href");
}

void to_json(json& j, const CodeDescription& v) { j = {{"href", v.href}}; }

void from_json(const json& j, Diagnostic& v) {
  expect_object(j);
  v.range = required_field<Range>(j, "range");
  v.message = required_field<std::string>(j, "message");
  v.severity.reset();
  if (auto severity = optional_field<std::int64_t>(j, "severity")) {
    if (*severity < 1 || *severity > 4) throw FieldError("severity", "expected 1 to 4, got " + std::to_string(*severity));
    v.severity = static_cast<DiagnosticSeverity>(*severity);
  }
  // code is "integer | string" in LSP; hiera keeps it as a string.
  v.code.reset();
  if (const json* code = member(j, "code"); code != nullptr && !code->is_null()) {
    if (code->is_string()) {
      v.code = code->get<std::string>();
    } else if (code->is_number_integer()) {
      v.code = code->dump();
    } else {
      throw FieldError("code", "expected an integer or a string, got " + describe(*code));
    }
  }
  v.source = optional_field<std::string>(j, "source");
  v.data = optional_any(j, "data");
  v.codeDescription = optional_field<CodeDescription>(j, "codeDescription");
}

void to_json(json& j, const Diagnostic& v) {
  j = {{"range", v.range}, {"message", v.message}};
  put_optional(j, "severity", v.severity);
  put_optional(j, "code", v.code);
  put_optional(j, "source", v.source);
  put_optional(j, "data", v.data);
  put_optional(j, "codeDescription", v.codeDescription);
}

void to_json(json& j, const PublishDiagnosticsParams& v) {
  j = {{"uri", v.uri}, {"diagnostics", v.diagnostics}};
  put_optional(j, "version", v.version);
}

void from_json(const json& j, Command& v) {
  expect_object(j);
  v.title = required_field<std::string>(j, "title");
  v.command = required_field<std::string>(j, "command");
  v.arguments = optional_any(j, "arguments");
  if (v.arguments && !v.arguments->is_array()) {
    throw FieldError("arguments", "expected an array, got " + describe(*v.arguments));
  }
}

void to_json(json& j, const Command& v) {
  j = {{"title", v.title}, {"command", v.command}};
  put_optional(j, "arguments", v.arguments);
}

void from_json(const json& j, CodeLens& v) {
  expect_object(j);
  v.range = required_field<Range>(j, "range");
  v.command = optional_field<Command>(j, "command");
  v.data = optional_any(j, "data");
}

void to_json(json& j, const CodeLens& v) {
  j = {{"range", v.range}};
  put_optional(j, "command", v.command);
  put_optional(j, "data", v.data);
}

void from_json(const json& j, CodeLensParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
}

void to_json(json& j, const DocumentSymbol& v) {
  j = {{"name", v.name}, {"kind", v.kind}, {"range", v.range}, {"selectionRange", v.selectionRange}};
  put_optional(j, "detail", v.detail);
  if (!v.children.empty()) j["children"] = v.children;
}

void from_json(const json& j, DocumentSymbolParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
}

void to_json(json& j, const SymbolInformation& v) {
  j = {{"name", v.name}, {"kind", v.kind}, {"location", v.location}};
  put_optional(j, "containerName", v.containerName);
}

void from_json(const json& j, WorkspaceSymbolParams& v) {
  expect_object(j);
  v.query = required_field<std::string>(j, "query");
}

void to_json(json& j, const InlayHint& v) {
  j = {{"position", v.position}, {"label", v.label}};
  put_optional(j, "kind", v.kind);
  put_optional(j, "tooltip", v.tooltip);
  if (v.paddingLeft) j["paddingLeft"] = true;
  if (v.paddingRight) j["paddingRight"] = true;
}

void from_json(const json& j, InlayHintParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
  v.range = required_field<Range>(j, "range");
}

void from_json(const json& j, TextEdit& v) {
  expect_object(j);
  v.range = required_field<Range>(j, "range");
  v.newText = required_field<std::string>(j, "newText");
  v.annotationId = optional_field<std::string>(j, "annotationId");
}

void to_json(json& j, const TextEdit& v) {
  j = {{"range", v.range}, {"newText", v.newText}};
  put_optional(j, "annotationId", v.annotationId);
}

void to_json(json& j, const TextDocumentEdit& v) { j = {{"textDocument", v.textDocument}, {"edits", v.edits}}; }

void from_json(const json& j, TextDocumentEdit& v) {
  expect_object(j);
  v.textDocument = required_field<OptionalVersionedTextDocumentIdentifier>(j, "textDocument");
  v.edits = required_field<std::vector<TextEdit>>(j, "edits");
}

void to_json(json& j, const ChangeAnnotation& v) {
  j = {{"label", v.label}};
  put_optional(j, "needsConfirmation", v.needsConfirmation);
  put_optional(j, "description", v.description);
}

void from_json(const json& j, ChangeAnnotation& v) {
  expect_object(j);
  v.label = required_field<std::string>(j, "label");
  v.needsConfirmation = optional_field<bool>(j, "needsConfirmation");
  v.description = optional_field<std::string>(j, "description");
}

void to_json(json& j, const WorkspaceEdit& v) {
  j = json::object();
  if (v.changes) {
    json changes = json::object();
    // Edits for a URI listed twice are concatenated rather than one list overwriting the other.
    for (const auto& [uri, edits] : *v.changes) {
      json& list = changes[uri];
      if (list.is_null()) list = json::array();
      for (const auto& edit : edits) list.push_back(edit);
    }
    j["changes"] = std::move(changes);
  }
  put_optional(j, "documentChanges", v.documentChanges);
  if (v.changeAnnotations) {
    json annotations = json::object();
    for (const auto& [id, annotation] : *v.changeAnnotations) annotations[id] = annotation;
    j["changeAnnotations"] = std::move(annotations);
  }
}

void from_json(const json& j, WorkspaceEdit& v) {
  expect_object(j);
  v = WorkspaceEdit{};
  if (const json* changes = member(j, "changes"); changes != nullptr && !changes->is_null()) {
    in_field("changes", [&] {
      expect_object(*changes);
      auto& out = v.changes.emplace();
      for (const auto& [uri, edits] : changes->items()) out.emplace_back(uri, required_field<std::vector<TextEdit>>(*changes, uri));
    });
  }
  if (const json* changes = member(j, "documentChanges"); changes != nullptr && !changes->is_null()) {
    in_field("documentChanges", [&] {
      if (!changes->is_array()) fail("expected an array, got " + describe(*changes));
      auto& out = v.documentChanges.emplace();
      for (std::size_t i = 0; i < changes->size(); ++i) {
        in_field("[" + std::to_string(i) + "]", [&] {
          const json& item = (*changes)[i];
          if (item.is_object() && item.contains("kind")) fail("resource operations (create, rename, delete) are not supported");
          read_value(item, out.emplace_back());
        });
      }
    });
  }
  if (const json* annotations = member(j, "changeAnnotations"); annotations != nullptr && !annotations->is_null()) {
    in_field("changeAnnotations", [&] {
      expect_object(*annotations);
      auto& out = v.changeAnnotations.emplace();
      for (const auto& [id, annotation] : annotations->items()) out.emplace_back(id, required_field<ChangeAnnotation>(*annotations, id));
    });
  }
}

void to_json(json& j, const ApplyWorkspaceEditParams& v) {
  j = {{"edit", v.edit}};
  put_optional(j, "label", v.label);
}

void from_json(const json& j, ApplyWorkspaceEditResult& v) {
  expect_object(j);
  v.applied = required_field<bool>(j, "applied");
  v.failureReason = optional_field<std::string>(j, "failureReason");
}

void from_json(const json& j, CodeActionContext& v) {
  expect_object(j);
  v.diagnostics = required_field<std::vector<Diagnostic>>(j, "diagnostics");
  v.only = optional_field<std::vector<std::string>>(j, "only");
}

void from_json(const json& j, CodeActionParams& v) {
  expect_object(j);
  v.textDocument = required_field<TextDocumentIdentifier>(j, "textDocument");
  v.range = required_field<Range>(j, "range");
  v.context = required_field<CodeActionContext>(j, "context");
}

void from_json(const json& j, CodeAction& v) {
  expect_object(j);
  v.title = required_field<std::string>(j, "title");
  v.kind = optional_field<std::string>(j, "kind");
  v.diagnostics = optional_field<std::vector<Diagnostic>>(j, "diagnostics");
  v.isPreferred = optional_field<bool>(j, "isPreferred");
  v.edit = optional_field<WorkspaceEdit>(j, "edit");
  v.command = optional_field<Command>(j, "command");
  v.data = optional_any(j, "data");
}

void to_json(json& j, const CodeAction& v) {
  j = {{"title", v.title}};
  put_optional(j, "kind", v.kind);
  put_optional(j, "diagnostics", v.diagnostics);
  put_optional(j, "isPreferred", v.isPreferred);
  put_optional(j, "edit", v.edit);
  put_optional(j, "command", v.command);
  put_optional(j, "data", v.data);
}

void from_json(const json& j, ExecuteCommandParams& v) {
  expect_object(j);
  v.command = required_field<std::string>(j, "command");
  v.arguments = optional_any(j, "arguments").value_or(json::array());
  if (!v.arguments.is_array()) throw FieldError("arguments", "expected an array, got " + describe(v.arguments));
}

void to_json(json& j, const ShowMessageParams& v) { j = {{"type", v.type}, {"message", v.message}}; }

void to_json(json& j, const WorkDoneProgressCreateParams& v) { j = {{"token", v.token}}; }

void to_json(json& j, const WorkDoneProgressBegin& v) {
  j = {{"kind", "begin"}, {"title", v.title}};
  put_optional(j, "cancellable", v.cancellable);
  put_optional(j, "message", v.message);
  put_optional(j, "percentage", v.percentage);
}

void to_json(json& j, const WorkDoneProgressReport& v) {
  j = {{"kind", "report"}};
  put_optional(j, "cancellable", v.cancellable);
  put_optional(j, "message", v.message);
  put_optional(j, "percentage", v.percentage);
}

void to_json(json& j, const WorkDoneProgressEnd& v) {
  j = {{"kind", "end"}};
  put_optional(j, "message", v.message);
}

void from_json(const json& j, WorkDoneProgressCancelParams& v) {
  expect_object(j);
  v.token = read_integer_or_string(j, "token");
}

void to_json(json& j, const ConfigurationParams& v) {
  json items = json::array();
  for (const auto& item : v.items) {
    json entry = json::object();
    put_optional(entry, "scopeUri", item.scopeUri);
    put_optional(entry, "section", item.section);
    items.push_back(std::move(entry));
  }
  j = {{"items", std::move(items)}};
}

void from_json(const json& j, ClientCapabilities& v) {
  v = ClientCapabilities{};
  v.workDoneProgress = flag_at(j, {"window", "workDoneProgress"});
  v.showMessageRequest = object_at(j, {"window", "showMessage"});
  v.showDocument = flag_at(j, {"window", "showDocument", "support"});
  v.codeLensRefresh = flag_at(j, {"workspace", "codeLens", "refreshSupport"});
  v.applyEdit = flag_at(j, {"workspace", "applyEdit"});
  v.documentChanges = flag_at(j, {"workspace", "workspaceEdit", "documentChanges"});
  v.changeAnnotations = object_at(j, {"workspace", "workspaceEdit", "changeAnnotationSupport"});
  v.configuration = flag_at(j, {"workspace", "configuration"});
  v.codeActionLiteral = object_at(j, {"textDocument", "codeAction", "codeActionLiteralSupport"});
  v.codeActionResolve = object_at(j, {"textDocument", "codeAction", "resolveSupport"});
  v.codeActionResolveProperties = strings_at(j, {"textDocument", "codeAction", "resolveSupport", "properties"});
  v.codeActionData = flag_at(j, {"textDocument", "codeAction", "dataSupport"});
  for (const auto& format : strings_at(j, {"textDocument", "hover", "contentFormat"})) {
    if (format == "plaintext") v.hoverContentFormat.push_back(MarkupKind::PlainText);
    if (format == "markdown") v.hoverContentFormat.push_back(MarkupKind::Markdown);
  }
  v.positionEncodings = strings_at(j, {"general", "positionEncodings"});
}

void from_json(const json& j, InitializeParams& v) {
  expect_object(j);
  v = InitializeParams{};
  // processId and rootUri are "integer | null" / "string | null"; an absent one is
  // read as null rather than refusing the whole session.
  v.processId = optional_field<std::int64_t>(j, "processId");
  v.rootUri = optional_field<std::string>(j, "rootUri");
  if (const json* info = member(j, "clientInfo"); info != nullptr && !info->is_null()) {
    in_field("clientInfo", [&] {
      expect_object(*info);
      v.clientName = required_field<std::string>(*info, "name");
      v.clientVersion = optional_field<std::string>(*info, "version");
    });
  }
  if (const json* capabilities = member(j, "capabilities")) from_json(*capabilities, v.capabilities);
  if (const json* options = member(j, "initializationOptions")) v.initializationOptions = *options;
}

}  // namespace hiera::protocol::lsp
