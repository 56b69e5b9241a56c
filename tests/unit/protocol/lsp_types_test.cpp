#include "protocol/lsp_types.h"

#include <gtest/gtest.h>

#include <string>

namespace hiera::protocol::lsp {
namespace {

// The InvalidParams message parse_params<T> throws for params, or "" when it parses.
template <typename T>
std::string params_error(const json& params) {
  try {
    (void)parse_params<T>(params);
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidParams);
    return e.what();
  }
  return "";
}

const json kRange = json::parse(R"({"start":{"line":1,"character":2},"end":{"line":3,"character":4}})");
const Range kRangeValue{{1, 2}, {3, 4}};

TEST(LspPosition, RoundTrip) {
  const Position p{12, 7};
  const json j = p;
  EXPECT_EQ(j.dump(), R"({"character":7,"line":12})");
  EXPECT_EQ(j.get<Position>(), p);
  EXPECT_EQ(kRange.get<Range>(), kRangeValue);
  EXPECT_EQ(json(kRangeValue), kRange);
}

TEST(LspPosition, LineAndCharacterMustBeNonNegativeIntegers) {
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":-1,"character":0})")),
            "line: expected a non-negative integer, got -1");
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":0,"character":1.5})")),
            "character: expected a non-negative integer, got 1.5");
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":0,"character":2.0})")),
            "character: expected a non-negative integer, got 2.0");
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":"3","character":0})")),
            "line: expected a non-negative integer, got a string");
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":0})")), "character: required integer field is missing");
  EXPECT_EQ(params_error<Position>(json::parse(R"({"line":18446744073709551615,"character":0})")),
            "line: integer out of range: 18446744073709551615");
  EXPECT_EQ(params_error<Range>(json::parse(R"({"start":{"line":0,"character":0},"end":{"line":-2,"character":0}})")),
            "end.line: expected a non-negative integer, got -2");
}

TEST(LspParams, ParamsThatAreNotAnObject) {
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(nullptr), "params: expected an object, got null");
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(json::array()), "params: expected an object, got an array");
}

TEST(LspParams, DidOpen) {
  auto open = parse_params<DidOpenTextDocumentParams>(json::parse(
      R"({"textDocument":{"uri":"file:///k.cu","languageId":"cuda","version":3,"text":"__global__ void k(){}","extra":1}})"));
  EXPECT_EQ(open.textDocument.uri, "file:///k.cu");
  EXPECT_EQ(open.textDocument.languageId, "cuda");
  EXPECT_EQ(open.textDocument.version, 3);
  EXPECT_EQ(open.textDocument.text, "__global__ void k(){}");
}

TEST(LspParams, MissingRequiredFieldNamesItsPath) {
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(
                json::parse(R"({"textDocument":{"languageId":"cuda","version":3,"text":""}})")),
            "textDocument.uri: required string field is missing");
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(json::object()), "textDocument: required object field is missing");
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(
                json::parse(R"({"textDocument":{"uri":5,"languageId":"cuda","version":3,"text":""}})")),
            "textDocument.uri: expected a string, got 5");
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(
                json::parse(R"({"textDocument":{"uri":"u","languageId":"cuda","version":"3","text":""}})")),
            "textDocument.version: expected an integer, got a string");
  EXPECT_EQ(params_error<DidOpenTextDocumentParams>(
                json::parse(R"({"textDocument":{"uri":"u","languageId":"cuda","version":3,"text":null}})")),
            "textDocument.text: expected a string, got null");
  EXPECT_EQ(params_error<DidCloseTextDocumentParams>(json::parse(R"({"textDocument":"file:///a"})")),
            "textDocument: expected an object, got a string");
}

TEST(LspParams, DidChange) {
  auto change = parse_params<DidChangeTextDocumentParams>(json::parse(R"({
    "textDocument":{"uri":"file:///a.py","version":-1},
    "contentChanges":[
      {"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"rangeLength":1,"text":"x"},
      {"text":"whole"},
      {"range":null,"text":"also whole"}]})"));
  EXPECT_EQ(change.textDocument.uri, "file:///a.py");
  EXPECT_EQ(change.textDocument.version, -1);
  ASSERT_EQ(change.contentChanges.size(), 3u);
  EXPECT_EQ(change.contentChanges[0].range, (Range{{0, 0}, {0, 1}}));
  EXPECT_EQ(change.contentChanges[0].text, "x");
  EXPECT_FALSE(change.contentChanges[1].range.has_value());
  EXPECT_FALSE(change.contentChanges[2].range.has_value());
}

TEST(LspParams, ArrayElementErrorsNameTheIndex) {
  EXPECT_EQ(params_error<DidChangeTextDocumentParams>(json::parse(R"({
    "textDocument":{"uri":"u","version":1},
    "contentChanges":[{"text":"a"},{"range":{"start":{"line":-3,"character":0},"end":{"line":0,"character":0}},"text":""}]})")),
            "contentChanges[1].range.start.line: expected a non-negative integer, got -3");
  EXPECT_EQ(params_error<DidChangeTextDocumentParams>(
                json::parse(R"({"textDocument":{"uri":"u","version":1},"contentChanges":[{"text":"a"}, 7]})")),
            "contentChanges[1]: expected an object, got 7");
  EXPECT_EQ(params_error<DidChangeTextDocumentParams>(
                json::parse(R"({"textDocument":{"uri":"u","version":1},"contentChanges":{}})")),
            "contentChanges: expected an array, got an object");
  EXPECT_EQ(params_error<DidChangeTextDocumentParams>(json::parse(R"({"textDocument":{"uri":"u","version":1}})")),
            "contentChanges: required array field is missing");
}

TEST(LspParams, DidSaveAndPositionParams) {
  EXPECT_FALSE(parse_params<DidSaveTextDocumentParams>(json::parse(R"({"textDocument":{"uri":"u"}})")).text);
  EXPECT_EQ(parse_params<DidSaveTextDocumentParams>(json::parse(R"({"textDocument":{"uri":"u"},"text":"t"})")).text,
            "t");
  auto at = parse_params<TextDocumentPositionParams>(
      json::parse(R"({"textDocument":{"uri":"u"},"position":{"line":4,"character":9},"workDoneToken":"w"})"));
  EXPECT_EQ(at.textDocument.uri, "u");
  EXPECT_EQ(at.position, (Position{4, 9}));
  EXPECT_EQ(parse_params<CodeLensParams>(json::parse(R"({"textDocument":{"uri":"v"}})")).textDocument.uri, "v");
}

TEST(LspTypes, HoverAndMarkup) {
  EXPECT_EQ(json(Hover{{MarkupKind::Markdown, "**fast**"}, std::nullopt}).dump(),
            R"({"contents":{"kind":"markdown","value":"**fast**"}})");
  EXPECT_EQ(json(Hover{{MarkupKind::PlainText, "x"}, Range{{0, 1}, {0, 2}}}).dump(),
            R"({"contents":{"kind":"plaintext","value":"x"},"range":{"end":{"character":2,"line":0},"start":{"character":1,"line":0}}})");
  EXPECT_EQ(json("plaintext").get<MarkupKind>(), MarkupKind::PlainText);
  EXPECT_EQ(json("markdown").get<MarkupKind>(), MarkupKind::Markdown);
  EXPECT_THROW((void)json("html").get<MarkupKind>(), RpcError);
}

TEST(LspTypes, LocationAndIdentifiers) {
  EXPECT_EQ(json(Location{"file:///a", {{0, 0}, {0, 1}}}).dump(),
            R"({"range":{"end":{"character":1,"line":0},"start":{"character":0,"line":0}},"uri":"file:///a"})");
  EXPECT_EQ(json(TextDocumentIdentifier{"u"}).get<TextDocumentIdentifier>().uri, "u");
  EXPECT_EQ(json(OptionalVersionedTextDocumentIdentifier{"u", std::nullopt}).dump(), R"({"uri":"u","version":null})");
  EXPECT_EQ(json(OptionalVersionedTextDocumentIdentifier{"u", 4}).dump(), R"({"uri":"u","version":4})");
}

TEST(LspTypes, DiagnosticRoundTripAndExactJson) {
  Diagnostic d;
  d.range = kRangeValue;
  d.severity = DiagnosticSeverity::Warning;
  d.code = "hiera.uncoalesced";
  d.source = "hiera";
  d.message = "uncoalesced load";
  d.data = json{{"finding", 3}};
  const json j = d;
  EXPECT_EQ(j.dump(),
            R"({"code":"hiera.uncoalesced","data":{"finding":3},"message":"uncoalesced load",)"
            R"("range":{"end":{"character":4,"line":3},"start":{"character":2,"line":1}},"severity":2,"source":"hiera"})");
  auto back = j.get<Diagnostic>();
  EXPECT_EQ(json(back), j);

  Diagnostic minimal;
  minimal.message = "m";
  EXPECT_EQ(json(minimal).dump(),
            R"({"message":"m","range":{"end":{"character":0,"line":0},"start":{"character":0,"line":0}}})");
}

TEST(LspTypes, DiagnosticFromClients) {
  auto d = json::parse(R"({"range":)" + kRange.dump() + R"(,"message":"m","code":42,"severity":null,"tags":[1]})")
               .get<Diagnostic>();
  EXPECT_EQ(d.code, "42");
  EXPECT_FALSE(d.severity.has_value());
  EXPECT_FALSE(d.source.has_value());
  EXPECT_FALSE(d.data.has_value());
  EXPECT_EQ(params_error<Diagnostic>(json::parse(R"({"range":)" + kRange.dump() + R"(,"message":"m","severity":7})")),
            "severity: expected 1 to 4, got 7");
  EXPECT_EQ(params_error<Diagnostic>(json::parse(R"({"range":)" + kRange.dump() + R"(,"message":"m","code":true})")),
            "code: expected an integer or a string, got true");
}

TEST(LspTypes, PublishDiagnostics) {
  EXPECT_EQ(json(PublishDiagnosticsParams{"u", std::nullopt, {}}).dump(), R"({"diagnostics":[],"uri":"u"})");
  EXPECT_EQ(json(PublishDiagnosticsParams{"u", 5, {}}).dump(), R"({"diagnostics":[],"uri":"u","version":5})");
}

TEST(LspTypes, CommandAndCodeLens) {
  const Command command{"Optimize", "hiera.optimize", json::array({"file:///k.cu", 3})};
  EXPECT_EQ(json(command).dump(), R"({"arguments":["file:///k.cu",3],"command":"hiera.optimize","title":"Optimize"})");
  EXPECT_EQ(json(Command{"t", "c", std::nullopt}).dump(), R"({"command":"c","title":"t"})");
  auto back = json(command).get<Command>();
  EXPECT_EQ(back.arguments, command.arguments);
  EXPECT_EQ(params_error<Command>(json::parse(R"({"title":"t","command":"c","arguments":{}})")),
            "arguments: expected an array, got an object");

  const CodeLens lens{kRangeValue, command, json{{"id", 1}}};
  const json lens_json = lens;
  EXPECT_EQ(json(lens_json.get<CodeLens>()), lens_json);
  EXPECT_EQ(json(CodeLens{kRangeValue, std::nullopt, std::nullopt}), (json{{"range", kRange}}));
}

TEST(LspTypes, TextEditWithAndWithoutAnnotation) {
  EXPECT_EQ(json(TextEdit{{{0, 0}, {0, 3}}, "new", std::nullopt}).dump(),
            R"({"newText":"new","range":{"end":{"character":3,"line":0},"start":{"character":0,"line":0}}})");
  const TextEdit annotated{{{0, 0}, {0, 3}}, "new", "hiera-1"};
  EXPECT_EQ(json(annotated).dump(),
            R"({"annotationId":"hiera-1","newText":"new","range":{"end":{"character":3,"line":0},"start":{"character":0,"line":0}}})");
  auto back = json(annotated).get<TextEdit>();
  EXPECT_EQ(back.annotationId, "hiera-1");
  EXPECT_EQ(back.range, annotated.range);
}

TEST(LspTypes, WorkspaceEditEmitsOnlyTheFieldsSet) {
  EXPECT_EQ(json(WorkspaceEdit{}).dump(), "{}");

  WorkspaceEdit changes;
  changes.changes.emplace();
  changes.changes->push_back({"file:///a", {TextEdit{{{0, 0}, {0, 0}}, "x", std::nullopt}}});
  changes.changes->push_back({"file:///a", {TextEdit{{{1, 0}, {1, 0}}, "y", std::nullopt}}});  // merged, not lost
  EXPECT_EQ(json(changes).dump(),
            R"({"changes":{"file:///a":[)"
            R"({"newText":"x","range":{"end":{"character":0,"line":0},"start":{"character":0,"line":0}}},)"
            R"({"newText":"y","range":{"end":{"character":0,"line":1},"start":{"character":0,"line":1}}}]}})");

  WorkspaceEdit document_changes;
  document_changes.documentChanges.emplace();
  document_changes.documentChanges->push_back(
      TextDocumentEdit{{"file:///b", 7}, {TextEdit{{{0, 0}, {0, 1}}, "z", "a1"}}});
  document_changes.changeAnnotations.emplace();
  document_changes.changeAnnotations->push_back({"a1", ChangeAnnotation{"hiera: 2.1x faster", true, std::nullopt}});
  EXPECT_EQ(json(document_changes).dump(),
            R"({"changeAnnotations":{"a1":{"label":"hiera: 2.1x faster","needsConfirmation":true}},)"
            R"("documentChanges":[{"edits":[{"annotationId":"a1","newText":"z",)"
            R"("range":{"end":{"character":1,"line":0},"start":{"character":0,"line":0}}}],)"
            R"("textDocument":{"uri":"file:///b","version":7}}]})");

  // And back again, as a CodeAction sent to codeAction/resolve would carry it.
  auto back = json(document_changes).get<WorkspaceEdit>();
  EXPECT_FALSE(back.changes.has_value());
  EXPECT_EQ(json(back), json(document_changes));
}

TEST(LspTypes, WorkspaceEditResourceOperationsAreRejected) {
  EXPECT_EQ(params_error<WorkspaceEdit>(json::parse(R"({"documentChanges":[{"kind":"create","uri":"file:///n"}]})")),
            "documentChanges[0]: resource operations (create, rename, delete) are not supported");
  EXPECT_EQ(params_error<WorkspaceEdit>(json::parse(R"({"changes":{"file:///a":[{"newText":"x"}]}})")),
            "changes.file:///a[0].range: required object field is missing");
}

TEST(LspTypes, ApplyWorkspaceEdit) {
  EXPECT_EQ(json(ApplyWorkspaceEditParams{"Apply hiera result", WorkspaceEdit{}}).dump(),
            R"({"edit":{},"label":"Apply hiera result"})");
  EXPECT_EQ(json(ApplyWorkspaceEditParams{std::nullopt, WorkspaceEdit{}}).dump(), R"({"edit":{}})");
  auto result = parse_params<ApplyWorkspaceEditResult>(json::parse(R"({"applied":false,"failureReason":"stale"})"));
  EXPECT_FALSE(result.applied);
  EXPECT_EQ(result.failureReason, "stale");
  EXPECT_EQ(params_error<ApplyWorkspaceEditResult>(json::object()), "applied: required boolean field is missing");
  EXPECT_EQ(params_error<ApplyWorkspaceEditResult>(json::parse(R"({"applied":"yes"})")),
            "applied: expected a boolean, got a string");
}

TEST(LspTypes, CodeActionParams) {
  auto params = parse_params<CodeActionParams>(json::parse(R"({
    "textDocument":{"uri":"u"},"range":)" + kRange.dump() + R"(,
    "context":{"diagnostics":[{"range":)" + kRange.dump() + R"(,"message":"slow"}],"only":["refactor.rewrite"],"triggerKind":1}})"));
  EXPECT_EQ(params.range, kRangeValue);
  ASSERT_EQ(params.context.diagnostics.size(), 1u);
  EXPECT_EQ(params.context.diagnostics[0].message, "slow");
  EXPECT_EQ(params.context.only, std::vector<std::string>{"refactor.rewrite"});

  EXPECT_EQ(params_error<CodeActionParams>(json::parse(
                R"({"textDocument":{"uri":"u"},"range":)" + kRange.dump() + R"(,"context":{"diagnostics":[{"message":"m"}]}})")),
            "context.diagnostics[0].range: required object field is missing");
  EXPECT_EQ(params_error<CodeActionParams>(json::parse(
                R"({"textDocument":{"uri":"u"},"range":)" + kRange.dump() + R"(,"context":{"diagnostics":[],"only":[1]}})")),
            "context.only[0]: expected a string, got 1");
}

TEST(LspTypes, CodeActionRoundTrip) {
  CodeAction action;
  action.title = "Optimize with hiera";
  action.kind = "refactor.rewrite";
  action.isPreferred = true;
  action.command = Command{"Optimize", "hiera.optimize", json::array({1})};
  action.data = json{{"finding", "k"}};
  const json j = action;
  EXPECT_EQ(j.dump(),
            R"({"command":{"arguments":[1],"command":"hiera.optimize","title":"Optimize"},"data":{"finding":"k"},)"
            R"("isPreferred":true,"kind":"refactor.rewrite","title":"Optimize with hiera"})");
  EXPECT_EQ(json(j.get<CodeAction>()), j);
  EXPECT_EQ(params_error<CodeAction>(json::parse(R"({"kind":"quickfix"})")), "title: required string field is missing");
}

TEST(LspTypes, ExecuteCommandParams) {
  auto none = parse_params<ExecuteCommandParams>(json::parse(R"({"command":"hiera.cancel"})"));
  EXPECT_EQ(none.command, "hiera.cancel");
  EXPECT_EQ(none.arguments, json::array());
  auto some = parse_params<ExecuteCommandParams>(json::parse(R"({"command":"c","arguments":["a",{"b":1}]})"));
  EXPECT_EQ(some.arguments, json::parse(R"(["a",{"b":1}])"));
  EXPECT_EQ(params_error<ExecuteCommandParams>(json::parse(R"({"command":"c","arguments":"a"})")),
            "arguments: expected an array, got a string");
}

TEST(LspTypes, MessagesAndProgress) {
  EXPECT_EQ(json(ShowMessageParams{MessageType::Error, "boom"}).dump(), R"({"message":"boom","type":1})");
  EXPECT_EQ(json(LogMessageParams{MessageType::Log, "l"}).dump(), R"({"message":"l","type":4})");
  EXPECT_EQ(json(WorkDoneProgressCreateParams{"hiera-1"}).dump(), R"({"token":"hiera-1"})");
  EXPECT_EQ(json(WorkDoneProgressBegin{"Optimizing", true, "planning", 0}).dump(),
            R"({"cancellable":true,"kind":"begin","message":"planning","percentage":0,"title":"Optimizing"})");
  EXPECT_EQ(json(WorkDoneProgressBegin{"T", std::nullopt, std::nullopt, std::nullopt}).dump(),
            R"({"kind":"begin","title":"T"})");
  EXPECT_EQ(json(WorkDoneProgressReport{std::nullopt, "verifying", 40}).dump(),
            R"({"kind":"report","message":"verifying","percentage":40})");
  EXPECT_EQ(json(WorkDoneProgressEnd{"2.1x faster"}).dump(), R"({"kind":"end","message":"2.1x faster"})");
  EXPECT_EQ(json(WorkDoneProgressEnd{}).dump(), R"({"kind":"end"})");
}

TEST(LspTypes, ProgressCancelToken) {
  EXPECT_EQ(parse_params<WorkDoneProgressCancelParams>(json::parse(R"({"token":5})")).token, json(5));
  EXPECT_EQ(parse_params<WorkDoneProgressCancelParams>(json::parse(R"({"token":"t"})")).token, json("t"));
  EXPECT_EQ(params_error<WorkDoneProgressCancelParams>(json::parse(R"({"token":true})")),
            "token: expected an integer or a string, got true");
  EXPECT_EQ(params_error<WorkDoneProgressCancelParams>(json::object()),
            "token: required integer or string field is missing");
}

TEST(LspTypes, ConfigurationParams) {
  EXPECT_EQ(json(ConfigurationParams{{ConfigurationItem{std::nullopt, "hiera"}, ConfigurationItem{"file:///w", std::nullopt}}})
                .dump(),
            R"({"items":[{"section":"hiera"},{"scopeUri":"file:///w"}]})");
}

TEST(LspClientCapabilities, ReadsTheNestedPaths) {
  auto caps = json::parse(R"({
    "general":{"positionEncodings":["utf-8","utf-16"]},
    "window":{"workDoneProgress":true,"showMessage":{"messageActionItem":{}}},
    "workspace":{"applyEdit":true,"configuration":true,
                 "workspaceEdit":{"documentChanges":true,"changeAnnotationSupport":{"groupsOnLabel":true}}},
    "textDocument":{
      "hover":{"contentFormat":["markdown","plaintext"]},
      "codeAction":{"codeActionLiteralSupport":{"codeActionKind":{"valueSet":[]}},
                    "resolveSupport":{"properties":["edit","command"]},"dataSupport":true}},
    "experimental":{"anything":1}})")
                  .get<ClientCapabilities>();
  EXPECT_TRUE(caps.workDoneProgress);
  EXPECT_TRUE(caps.showMessageRequest);
  EXPECT_TRUE(caps.applyEdit);
  EXPECT_TRUE(caps.configuration);
  EXPECT_TRUE(caps.documentChanges);
  EXPECT_TRUE(caps.changeAnnotations);
  EXPECT_TRUE(caps.codeActionLiteral);
  EXPECT_TRUE(caps.codeActionResolve);
  EXPECT_EQ(caps.codeActionResolveProperties, (std::vector<std::string>{"edit", "command"}));
  EXPECT_TRUE(caps.codeActionData);
  EXPECT_EQ(caps.hoverContentFormat, (std::vector<MarkupKind>{MarkupKind::Markdown, MarkupKind::PlainText}));
  EXPECT_EQ(caps.positionEncodings, (std::vector<std::string>{"utf-8", "utf-16"}));
}

TEST(LspClientCapabilities, OddTypesReadAsAbsent) {
  auto caps = json::parse(R"({
    "general":{"positionEncodings":["utf-16",3,"utf-8"]},
    "window":5,
    "workspace":{"applyEdit":"yes","configuration":1,"workspaceEdit":{"documentChanges":null,"changeAnnotationSupport":true}},
    "textDocument":{"hover":{"contentFormat":"markdown"},"codeAction":{"resolveSupport":{"properties":"edit"},"dataSupport":"true"}}})")
                  .get<ClientCapabilities>();
  EXPECT_FALSE(caps.workDoneProgress);
  EXPECT_FALSE(caps.showMessageRequest);
  EXPECT_FALSE(caps.applyEdit);
  EXPECT_FALSE(caps.configuration);
  EXPECT_FALSE(caps.documentChanges);
  EXPECT_FALSE(caps.changeAnnotations);
  EXPECT_FALSE(caps.codeActionLiteral);
  EXPECT_TRUE(caps.codeActionResolve);
  EXPECT_TRUE(caps.codeActionResolveProperties.empty());
  EXPECT_FALSE(caps.codeActionData);
  EXPECT_TRUE(caps.hoverContentFormat.empty());
  EXPECT_EQ(caps.positionEncodings, (std::vector<std::string>{"utf-16", "utf-8"}));

  EXPECT_NO_THROW((void)json("not an object").get<ClientCapabilities>());
  EXPECT_FALSE(json(nullptr).get<ClientCapabilities>().applyEdit);
}

TEST(LspInitializeParams, FullAndMinimal) {
  auto init = parse_params<InitializeParams>(json::parse(R"({
    "processId":4242,"rootUri":"file:///w","clientInfo":{"name":"Visual Studio Code","version":"1.90.0"},
    "capabilities":{"workspace":{"applyEdit":true}},"initializationOptions":{"hiera":{"budget":60}},
    "trace":"off","workspaceFolders":null})"));
  EXPECT_EQ(init.processId, 4242);
  EXPECT_EQ(init.rootUri, "file:///w");
  EXPECT_EQ(init.clientName, "Visual Studio Code");
  EXPECT_EQ(init.clientVersion, "1.90.0");
  EXPECT_TRUE(init.capabilities.applyEdit);
  EXPECT_EQ(init.initializationOptions, json::parse(R"({"hiera":{"budget":60}})"));

  auto minimal = parse_params<InitializeParams>(json::parse(R"({"processId":null,"rootUri":null,"capabilities":{}})"));
  EXPECT_FALSE(minimal.processId.has_value());
  EXPECT_FALSE(minimal.rootUri.has_value());
  EXPECT_FALSE(minimal.clientName.has_value());
  EXPECT_TRUE(minimal.initializationOptions.is_null());
}

TEST(LspInitializeParams, WrongTypesAreInvalidParams) {
  EXPECT_EQ(params_error<InitializeParams>(json::parse(R"({"processId":"1","capabilities":{}})")),
            "processId: expected an integer, got a string");
  EXPECT_EQ(params_error<InitializeParams>(json::parse(R"({"processId":1,"clientInfo":{"version":"1"},"capabilities":{}})")),
            "clientInfo.name: required string field is missing");
  EXPECT_EQ(params_error<InitializeParams>(json::parse(R"({"processId":1,"clientInfo":"vim","capabilities":{}})")),
            "clientInfo: expected an object, got a string");
}

TEST(LspParams, AnRpcErrorIsWhatEscapes) {
  // Callers catch protocol::RpcError; the concrete type must still be one.
  try {
    (void)parse_params<TextDocumentPositionParams>(json::parse(R"({"textDocument":{"uri":"u"}})"));
    FAIL() << "expected an error";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidParams);
    EXPECT_STREQ(e.what(), "position: required object field is missing");
  }
}

}  // namespace
}  // namespace hiera::protocol::lsp
