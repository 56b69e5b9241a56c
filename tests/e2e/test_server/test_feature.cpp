#include "test_feature.h"

#include <cctype>
#include <chrono>
#include <thread>

namespace hiera::testing {

namespace lsp = protocol::lsp;
using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

namespace {

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_';
}

std::string comment_prefix(const server::TextDocument& document) {
  return document.language_id() == "python" ? "# " : "// ";
}

}  // namespace

std::vector<lsp::Diagnostic> TestFeature::diagnostics(const server::TextDocument& document,
                                                      const server::FeatureContext& context) {
  std::vector<lsp::Diagnostic> out;
  const std::string& text = document.text();
  for (auto at = text.find("TODO"); at != std::string::npos; at = text.find("TODO", at + 4)) {
    out.push_back(lsp::Diagnostic{{document.position_of(at, context.encoding), document.position_of(at + 4, context.encoding)},
                                  lsp::DiagnosticSeverity::Warning, std::string("test.todo"), std::string("hiera-test"),
                                  "TODO found", std::nullopt, std::nullopt});
  }
  return out;
}

std::optional<lsp::Hover> TestFeature::hover(const server::TextDocument& document, const lsp::Position& position,
                                             const server::FeatureContext& context) {
  const std::string& text = document.text();
  const std::size_t at = document.offset_of(position, context.encoding);
  std::size_t begin = at;
  std::size_t end = at;
  while (begin > 0 && is_word_byte(text[begin - 1])) --begin;
  while (end < text.size() && is_word_byte(text[end])) ++end;
  if (begin == end) return std::nullopt;
  const auto start = document.position_of(begin, context.encoding);
  const std::string word = text.substr(begin, end - begin);
  // The column is printed in the negotiated encoding so clients can check conversions.
  return lsp::Hover{{lsp::MarkupKind::Markdown, "`" + word + "` at line " + std::to_string(start.line) + ", column " +
                                                    std::to_string(start.character) + " (" +
                                                    server::to_string(context.encoding) + ")"},
                    lsp::Range{start, document.position_of(end, context.encoding)}};
}

std::vector<lsp::CodeLens> TestFeature::code_lenses(const server::TextDocument& document, const server::FeatureContext&) {
  return {lsp::CodeLens{{{0, 0}, {0, 0}},
                        lsp::Command{"hiera-test: " + std::to_string(document.line_count()) + " lines", "hiera.jobs",
                                     json::array()},
                        std::nullopt}};
}

std::vector<lsp::CodeAction> TestFeature::code_actions(const server::TextDocument& document,
                                                       const lsp::CodeActionParams&, const server::FeatureContext&) {
  lsp::CodeAction job;
  job.title = "hiera-test: run test job";
  job.kind = "source";
  job.command = lsp::Command{job.title, "hiera.test.slowJob",
                             json::array({{{"uri", document.uri()}, {"version", document.version()}, {"steps", 5},
                                           {"stepMs", 100}}})};
  lsp::CodeAction header;
  header.title = "hiera-test: insert header comment";
  header.kind = "refactor.rewrite";
  header.data = json{{"uri", document.uri()}, {"version", document.version()}};  // the edit is made on resolve
  return {job, header};
}

lsp::CodeAction TestFeature::resolve_code_action(lsp::CodeAction action, const server::FeatureContext& context) {
  const json data = action.data.value_or(json());
  if (!data.is_object() || !data.contains("uri")) return action;
  auto document = context.documents.get(data.at("uri").get<std::string>());
  if (!document) throw RpcError(ErrorCode::InvalidParams, "document not open: " + data.at("uri").get<std::string>());
  lsp::TextEdit edit{{{0, 0}, {0, 0}}, comment_prefix(*document) + "hiera-test: header\n", std::nullopt};
  lsp::WorkspaceEdit workspace_edit;
  if (context.client_capabilities.documentChanges) {
    workspace_edit.documentChanges = std::vector<lsp::TextDocumentEdit>{{{document->uri(), document->version()}, {edit}}};
  } else {
    workspace_edit.changes = std::vector<std::pair<std::string, std::vector<lsp::TextEdit>>>{{document->uri(), {edit}}};
  }
  action.edit = workspace_edit;
  return action;
}

std::vector<std::string> TestFeature::commands() const { return {"hiera.test.slowJob", "hiera.test.block"}; }

json TestFeature::execute_command(const std::string& command, const json& arguments,
                                  const server::FeatureContext& context) {
  const json args = arguments.is_array() && !arguments.empty() ? arguments[0] : json::object();
  if (!args.is_object()) throw RpcError(ErrorCode::InvalidParams, command + ": the argument must be an object");
  if (command == "hiera.test.block") {
    // Blocks the message loop on purpose, to test $/cancelRequest of a running request.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(args.value("ms", 1000));
    while (std::chrono::steady_clock::now() < until) {
      engine::throw_if_cancelled(context.request_cancel);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {{"blocked", true}};
  }
  // hiera.test.slowJob {uri, version, steps, stepMs}
  if (!args.contains("uri") || !args["uri"].is_string()) throw RpcError(ErrorCode::InvalidParams, "hiera.test.slowJob: uri is required");
  const std::string uri = args["uri"].get<std::string>();
  auto document = context.documents.get(uri);
  if (!document) throw RpcError(ErrorCode::InvalidParams, "document not open: " + uri);
  if (args.contains("version") && !args["version"].is_number_integer()) {
    throw RpcError(ErrorCode::InvalidParams, "hiera.test.slowJob: version must be an integer");
  }
  if (args.contains("version") && args["version"] != document->version()) {
    throw RpcError(ErrorCode::ContentModified, "the document changed since the action was offered");
  }
  const int steps = args.value("steps", 5);
  const int step_ms = args.value("stepMs", 100);
  const std::string text = comment_prefix(*document) + "hiera-test: job done\n";
  const std::string id = context.jobs.start("hiera test job", [document, steps, step_ms, text](server::JobContext& job) {
    for (int i = 1; i <= steps; ++i) {
      for (int t = 0; t < step_ms; t += 5) {
        engine::throw_if_cancelled(job.cancellation());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      job.report("step " + std::to_string(i) + "/" + std::to_string(steps), 100 * i / steps);
    }
    return server::JobResult{"done",
                             server::DocumentEdit{document->uri(), document->version(), {{0, 0, text}}, "hiera test job", false},
                             {}, {}};
  });
  return {{"jobId", id}};
}

}  // namespace hiera::testing
