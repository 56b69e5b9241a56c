#include "server/lsp_server.h"

#include <algorithm>
#include <future>
#include <iostream>

#include <boost/asio/post.hpp>

#include "hiera/version.h"
#include "protocol/json_text.h"

namespace hiera::server {

namespace lsp = protocol::lsp;
using nlohmann::json;
using protocol::ErrorCode;

namespace {

void log_stderr(const std::string& line) { std::cerr << "hiera: " << line << '\n'; }

const char* framing_error_name(protocol::FramingErrorKind kind) {
  switch (kind) {
    case protocol::FramingErrorKind::MissingContentLength: return "missing Content-Length";
    case protocol::FramingErrorKind::MalformedContentLength: return "malformed Content-Length";
    case protocol::FramingErrorKind::BodyTooLarge: return "message too large";
    case protocol::FramingErrorKind::HeaderTooLong: return "header too long";
    case protocol::FramingErrorKind::MalformedHeader: return "malformed header";
    case protocol::FramingErrorKind::TruncatedBody: return "truncated message";
  }
  return "framing error";
}

}  // namespace

LspServer::LspServer(Transport& transport, ServerOptions options)
    : transport_(transport),
      options_(std::move(options)),
      reader_(options_.max_body_bytes),
      writer_([this](std::string_view bytes) { transport_.write(bytes); }),
      loop_guard_(boost::asio::make_work_guard(loop_)),
      client_requests_(loop_, [this](json message) { send(message); }),
      dispatcher_([this](json message) { send(message); }) {
  jobs_ = std::make_unique<JobManager>(*this, documents_, options_.job_threads);
  scheduler_ = std::make_unique<DocumentScheduler>(
      loop_, [this](const DocumentStore::Snapshot& document, const engine::CancellationToken& cancel) {
        return build_diagnostics(document, cancel);
      },
      DocumentScheduler::Options{options_.analysis_debounce, options_.analysis_threads});
  register_handlers();
}

LspServer::~LspServer() {
  views_.join();
  jobs_.reset();
  loop_guard_.reset();
  if (loop_thread_.joinable()) {
    loop_.stop();
    loop_thread_.join();
  }
  scheduler_->stop();  // the loop is gone: this thread is the only one touching it
  scheduler_.reset();
}

void LspServer::add_feature(std::unique_ptr<Feature> feature) { features_.push_back(std::move(feature)); }

void LspServer::send(const json& message) {
  try {
    writer_.write(protocol::dump_json(message));
  } catch (const std::exception& e) {
    // The client is gone; the read side will see EOF and end the session.
    log_stderr(std::string("write failed: ") + e.what());
  }
}

void LspServer::send_text(std::string_view body) {
  try {
    writer_.write(body);
  } catch (const std::exception& e) {
    log_stderr(std::string("write failed: ") + e.what());
  }
}

void LspServer::reply_in_order(json message) {
  // Errors found on the reader thread queue behind the requests that came
  // before them, so the client sees answers in the order it sent messages.
  boost::asio::post(loop_, [this, message = std::move(message)] { send(message); });
}

void LspServer::notify(const std::string& method, json params) {
  send(protocol::to_json(protocol::Notification{method, std::move(params)}));
}

void LspServer::request(const std::string& method, json params, ClientRequests::Callback callback) {
  client_requests_.request(method, std::move(params), std::move(callback), options_.client_request_timeout);
}

int LspServer::run() {
  loop_thread_ = std::thread([this] { loop_.run(); });
  try {
    transport_.read_loop([this](std::string_view bytes) { on_bytes(bytes); });
    if (!exit_received_) {
      if (auto error = reader_.finish()) {
        log_stderr(error->message);
        reply_in_order(protocol::make_error(protocol::RequestId(), ErrorCode::ParseError, error->message));
      }
      log_stderr("the client closed the connection without 'exit'");
    }
  } catch (const std::exception& e) {
    log_stderr(std::string("transport failed: ") + e.what());
  }
  // Let queued handlers finish, then stop jobs and fail what waits on the client.
  std::promise<void> drained;
  boost::asio::post(loop_, [&drained] { drained.set_value(); });
  drained.get_future().wait();
  views_.join();  // their replies are out before shutdown goes on
  client_requests_.fail_all("the connection to the client is closed");
  jobs_->cancel_all();
  jobs_->wait_idle();
  std::promise<void> stopped;
  boost::asio::post(loop_, [this, &stopped] {
    scheduler_->stop();  // answers the requests that wait for a build
    stopped.set_value();
  });
  stopped.get_future().wait();
  scheduler_->join();
  loop_guard_.reset();
  loop_thread_.join();
  return state_ == State::ShutDown ? 0 : 1;
}

void LspServer::on_bytes(std::string_view bytes) {
  if (exit_received_) return;
  reader_.feed(bytes);
  while (auto event = reader_.next()) {
    if (auto* frame = std::get_if<protocol::Frame>(&*event)) {
      on_body(frame->body);
      if (exit_received_) return;
    } else {
      const auto& error = std::get<protocol::FramingError>(*event);
      const auto code = error.kind == protocol::FramingErrorKind::BodyTooLarge ? ErrorCode::InvalidRequest
                                                                                : ErrorCode::ParseError;
      log_stderr(std::string(framing_error_name(error.kind)) + ": " + error.message);
      reply_in_order(protocol::make_error(protocol::RequestId(), code, error.message));
    }
  }
}

void LspServer::on_body(const std::string& body) {
  auto parsed = protocol::parse_message(body);
  if (auto* bad = std::get_if<protocol::MessageError>(&parsed)) {
    log_stderr("rejected message: " + bad->error.message);
    reply_in_order(protocol::make_error(bad->id, bad->error.code, bad->error.message));
    return;
  }
  auto& message = std::get<protocol::Message>(parsed);
  if (auto* request = std::get_if<protocol::Request>(&message)) {
    boost::asio::post(loop_, [this, request = std::move(*request)]() mutable { dispatcher_.dispatch(std::move(request)); });
  } else if (auto* notification = std::get_if<protocol::Notification>(&message)) {
    if (notification->method == "$/cancelRequest") {
      // Handled on the reader thread so it overtakes the queue.
      const auto* id = notification->params.is_object() ? &notification->params["id"] : nullptr;
      if (auto rid = id ? protocol::RequestId::from_json(*id) : std::nullopt) dispatcher_.cancel(*rid);
      return;
    }
    if (notification->method == "exit") {
      exit_received_ = true;
      transport_.close();
      return;
    }
    boost::asio::post(loop_, [this, notification = std::move(*notification)] {
      try {
        dispatcher_.dispatch(notification);
      } catch (const std::exception& e) {
        // A notification has no reply; tell the user through the log.
        log_stderr("notification " + notification.method + " failed: " + e.what());
        notify("window/logMessage", lsp::LogMessageParams{lsp::MessageType::Error,
                                                          "hiera: " + notification.method + ": " + e.what()});
      }
    });
  } else {
    auto& response = std::get<protocol::Response>(message);
    if (!client_requests_.on_response(response)) log_stderr("response to an unknown request " + response.id.to_string());
  }
}

FeatureContext LspServer::context(engine::CancellationToken cancel) {
  return FeatureContext{encoding_, capabilities_, settings_, documents_, *jobs_, *this, std::move(cancel)};
}

DocumentScheduler::Commit LspServer::build_diagnostics(const DocumentStore::Snapshot& document,
                                                        const engine::CancellationToken& cancel) {
  lsp::PublishDiagnosticsParams params{document->uri(), document->version(), {}};
  auto ctx = context(cancel);
  for (auto& feature : features_) {
    engine::throw_if_cancelled(cancel);
    try {
      auto found = feature->diagnostics(*document, ctx);
      params.diagnostics.insert(params.diagnostics.end(), std::make_move_iterator(found.begin()),
                                std::make_move_iterator(found.end()));
    } catch (const engine::Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      // The other features' diagnostics still go out; the user hears of this one.
      log_stderr("diagnostics of " + document->uri() + " failed: " + e.what());
      notify("window/logMessage", lsp::LogMessageParams{lsp::MessageType::Error, "hiera: diagnostics: " + std::string(e.what())});
    }
  }
  engine::throw_if_cancelled(cancel);
  // Serialised here, on the pool: the loop only writes the bytes.
  auto body = protocol::dump_json(
      protocol::to_json(protocol::Notification{"textDocument/publishDiagnostics", json(params)}));
  return [this, body = std::move(body)] { send_text(body); };
}

void LspServer::pull_configuration() {
  if (!capabilities_.configuration) return;
  lsp::ConfigurationParams params{{lsp::ConfigurationItem{std::nullopt, std::string("hiera")}}};
  request("workspace/configuration", params, [this](ClientRequests::Outcome outcome) {
    if (auto* result = std::get_if<json>(&outcome); result && result->is_array() && !result->empty()) {
      settings_.merge((*result)[0]);
      republish_diagnostics();
    }
  });
}

void LspServer::republish_diagnostics() {
  // Hint toggles and severities live in the settings: open documents show the new ones at once.
  for (const auto& uri : documents_.uris()) {
    if (auto document = documents_.get(uri)) scheduler_->update(document);
  }
}

json LspServer::initialize(const json& params) {
  auto init = lsp::parse_params<lsp::InitializeParams>(params);
  capabilities_ = init.capabilities;
  const auto& encodings = capabilities_.positionEncodings;
  encoding_ = std::find(encodings.begin(), encodings.end(), "utf-8") != encodings.end() ? PositionEncoding::Utf8
                                                                                        : PositionEncoding::Utf16;
  settings_.merge(init.initializationOptions);

  json commands = json::array();
  for (auto& feature : features_) {
    for (auto& name : feature->commands()) commands.push_back(name);
  }
  json capabilities = {
      {"positionEncoding", to_string(encoding_)},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"hoverProvider", true},
      {"codeLensProvider", {{"resolveProvider", false}}},
      {"codeActionProvider",
       {{"codeActionKinds", {"quickfix", "refactor.rewrite", "source"}}, {"resolveProvider", true}}},
      {"executeCommandProvider", {{"commands", commands}}},
  };
  for (auto& feature : features_) capabilities.update(feature->capabilities());
  state_ = State::Running;
  return {{"capabilities", capabilities}, {"serverInfo", {{"name", options_.name}, {"version", kVersion}}}};
}

void LspServer::register_handlers() {
  dispatcher_.set_gate([this](const std::string& method) -> std::optional<protocol::ResponseError> {
    const State state = state_;
    if (state == State::Uninitialized && method != "initialize") {
      return protocol::ResponseError{ErrorCode::ServerNotInitialized, "the server is not initialized yet", std::nullopt};
    }
    if (state != State::Uninitialized && method == "initialize") {
      return protocol::ResponseError{ErrorCode::InvalidRequest, "the server is already initialized", std::nullopt};
    }
    if (state == State::ShutDown) {
      return protocol::ResponseError{ErrorCode::InvalidRequest, "the server is shutting down", std::nullopt};
    }
    return std::nullopt;
  });

  dispatcher_.on_request("initialize", [this](const json& params, Reply& reply, auto) { reply.result(initialize(params)); });
  dispatcher_.on_notification("initialized", [this](const json&) { pull_configuration(); });
  dispatcher_.on_request("shutdown", [this](const json&, Reply& reply, auto) {
    state_ = State::ShutDown;
    jobs_->cancel_all();
    reply.result(nullptr);
  });

  // Notifications that arrive before initialize are dropped, as the spec says.
  auto when_running = [this](auto handler) {
    return [this, handler](const json& params) {
      if (state_ == State::Running) handler(params);
    };
  };

  dispatcher_.on_notification("textDocument/didOpen", when_running([this](const json& params) {
    auto open = lsp::parse_params<lsp::DidOpenTextDocumentParams>(params);
    documents_.open(open.textDocument);
    scheduler_->update(documents_.get(open.textDocument.uri), /*immediate=*/true);
  }));
  dispatcher_.on_notification("textDocument/didChange", when_running([this](const json& params) {
    auto change = lsp::parse_params<lsp::DidChangeTextDocumentParams>(params);
    scheduler_->update(documents_.change(change, encoding_));
  }));
  dispatcher_.on_notification("textDocument/didClose", when_running([this](const json& params) {
    auto close = lsp::parse_params<lsp::DidCloseTextDocumentParams>(params);
    documents_.close(close.textDocument.uri);
    scheduler_->close(close.textDocument.uri);  // nothing built for it is published after this
    notify("textDocument/publishDiagnostics", lsp::PublishDiagnosticsParams{close.textDocument.uri, std::nullopt, {}});
  }));
  dispatcher_.on_notification("textDocument/didSave", when_running([](const json& params) {
    lsp::parse_params<lsp::DidSaveTextDocumentParams>(params);  // validated; nothing to do yet
  }));
  dispatcher_.on_notification("workspace/didChangeConfiguration", when_running([this](const json& params) {
    const json settings = params.is_object() ? params.value("settings", json()) : json();
    if (settings.is_object() && settings.contains("hiera")) {
      settings_.merge(settings["hiera"]);
      republish_diagnostics();
    } else {
      pull_configuration();  // clients that send null settings expect a pull
    }
  }));
  dispatcher_.on_notification("window/workDoneProgress/cancel", when_running([this](const json& params) {
    auto cancel = lsp::parse_params<lsp::WorkDoneProgressCancelParams>(params);
    if (cancel.token.is_string()) jobs_->cancel(cancel.token.get<std::string>());
  }));
  dispatcher_.on_notification("$/setTrace", [](const json&) {});

  auto document_for = [this](const std::string& uri) {
    auto document = documents_.get(uri);
    if (!document) throw protocol::RpcError(ErrorCode::InvalidParams, "document not open: " + uri);
    return document;
  };

  // The document's own version is wanted: `wait` bounds how long (nullopt: until
  // it is built); a request whose version was superseded meanwhile is answered
  // ContentModified unless `stale_ok` (then from the last build).
  auto after_build = [this](DocumentStore::Snapshot document, Reply& reply, std::optional<std::chrono::milliseconds> wait,
                            bool stale_ok, std::function<void(Reply&)> handler) {
    auto shared = std::make_shared<Reply>(std::move(reply));
    scheduler_->when_built(document, wait, [this, document, shared, stale_ok, handler = std::move(handler)](bool) {
      Dispatcher::guard(*shared, [&] {
        if (!stale_ok && documents_.get(document->uri()) != document) {
          throw protocol::RpcError(ErrorCode::ContentModified,
                                   shared->method() + ": " + document->uri() + " changed (version " +
                                       std::to_string(document->version()) + " is superseded)");
        }
        handler(*shared);
      });
    });
  };

  dispatcher_.on_request("textDocument/hover", [this, document_for, after_build](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto position = lsp::parse_params<lsp::TextDocumentPositionParams>(params);
    auto document = document_for(position.textDocument.uri);
    after_build(document, reply, options_.hover_wait, true, [this, document, position, cancel](Reply& built) {
      engine::throw_if_cancelled(cancel);
      auto ctx = context(cancel);
      for (auto& feature : features_) {
        if (auto hover = feature->hover(*document, position.position, ctx)) {
          const auto& formats = capabilities_.hoverContentFormat;
          if (!formats.empty() && std::find(formats.begin(), formats.end(), lsp::MarkupKind::Markdown) == formats.end()) {
            hover->contents.kind = lsp::MarkupKind::PlainText;
          }
          built.result(*hover);
          return;
        }
      }
      built.result(nullptr);
    });
  });

  dispatcher_.on_request("textDocument/codeLens", [this, document_for, after_build](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto lens_params = lsp::parse_params<lsp::CodeLensParams>(params);
    auto document = document_for(lens_params.textDocument.uri);
    after_build(document, reply, std::nullopt, false, [this, document, cancel](Reply& built) {
      engine::throw_if_cancelled(cancel);
      json lenses = json::array();
      auto ctx = context();
      for (auto& feature : features_) {
        for (auto& lens : feature->code_lenses(*document, ctx)) lenses.push_back(lens);
      }
      built.result(lenses);
    });
  });

  dispatcher_.on_request("textDocument/codeAction", [this, document_for, after_build](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto action_params = lsp::parse_params<lsp::CodeActionParams>(params);
    auto document = document_for(action_params.textDocument.uri);
    after_build(document, reply, std::nullopt, false, [this, document, action_params, cancel](Reply& built) {
      engine::throw_if_cancelled(cancel);
      auto ctx = context();
      json actions = json::array();
      for (std::size_t index = 0; index < features_.size(); ++index) {
        for (auto& action : features_[index]->code_actions(*document, action_params, ctx)) {
          if (!capabilities_.codeActionResolve) {
            action = features_[index]->resolve_code_action(std::move(action), ctx);  // the client cannot resolve later
          }
          if (!capabilities_.codeActionLiteral) {
            // Old clients take only Command objects.
            if (action.command) actions.push_back(*action.command);
            continue;
          }
          // Remember which feature listed it, so resolve reaches the same one.
          action.data = json{{"feature", index}, {"payload", action.data.value_or(json())}};
          actions.push_back(action);
        }
      }
      built.result(actions);
    });
  });

  // The views (outline, inlay hints, definition) read the last analysis: they
  // wait as briefly as a hover for their own version's build, then answer
  // from whatever was built (empty when nothing was yet), never an error.
  // Rendered and serialised on views_, not on the loop.
  auto view = [this, document_for, after_build](const std::string& uri, Reply& reply, engine::CancellationToken cancel,
                                                auto collect) {
    auto document = document_for(uri);
    after_build(document, reply, options_.hover_wait, true, [this, document, cancel, collect](Reply& built) {
      auto shared = std::make_shared<Reply>(std::move(built));
      boost::asio::post(views_, [this, document, cancel, collect, shared] {
        Dispatcher::guard(*shared, [&] {
          engine::throw_if_cancelled(cancel);
          auto ctx = context(cancel);
          json out = json::array();
          for (auto& feature : features_) {
            for (auto& item : collect(*feature, *document, ctx)) out.push_back(std::move(item));
          }
          shared->result(std::move(out));  // a big file's outline is thousands of symbols: no copy
        });
      });
    });
  };

  dispatcher_.on_request("textDocument/documentSymbol", [view](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto symbol_params = lsp::parse_params<lsp::DocumentSymbolParams>(params);
    view(symbol_params.textDocument.uri, reply, cancel, [](Feature& feature, const TextDocument& document, const FeatureContext& ctx) {
      return feature.document_symbols(document, ctx);
    });
  });

  dispatcher_.on_request("textDocument/inlayHint", [view](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto hint_params = lsp::parse_params<lsp::InlayHintParams>(params);
    view(hint_params.textDocument.uri, reply, cancel,
         [range = hint_params.range](Feature& feature, const TextDocument& document, const FeatureContext& ctx) {
           return feature.inlay_hints(document, range, ctx);
         });
  });

  dispatcher_.on_request("textDocument/definition", [view](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto position = lsp::parse_params<lsp::TextDocumentPositionParams>(params);
    view(position.textDocument.uri, reply, cancel,
         [at = position.position](Feature& feature, const TextDocument& document, const FeatureContext& ctx) {
           return feature.definition(document, at, ctx);
         });
  });

  dispatcher_.on_request("workspace/symbol", [this](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto query = lsp::parse_params<lsp::WorkspaceSymbolParams>(params);
    auto shared = std::make_shared<Reply>(std::move(reply));
    boost::asio::post(views_, [this, query, cancel, shared] {
      Dispatcher::guard(*shared, [&] {
        engine::throw_if_cancelled(cancel);
        auto ctx = context(cancel);
        json out = json::array();
        for (auto& feature : features_) {
          for (auto& symbol : feature->workspace_symbols(query.query, ctx)) out.push_back(std::move(symbol));
        }
        shared->result(std::move(out));
      });
    });
  });

  dispatcher_.on_request("codeAction/resolve", [this](const json& params, Reply& reply, auto) {
    auto action = lsp::parse_params<lsp::CodeAction>(params);
    const json data = action.data.value_or(json());
    if (!data.is_object() || !data.contains("feature") || !data["feature"].is_number_unsigned() ||
        data["feature"].get<std::size_t>() >= features_.size()) {
      throw protocol::RpcError(ErrorCode::InvalidParams, "codeAction/resolve: data.feature does not name a hiera action");
    }
    const auto index = data["feature"].get<std::size_t>();
    action.data = data.value("payload", json());
    auto resolved = features_[index]->resolve_code_action(std::move(action), context());
    resolved.data = json{{"feature", index}, {"payload", resolved.data.value_or(json())}};
    reply.result(resolved);
  });

  dispatcher_.on_request("workspace/executeCommand", [this](const json& params, Reply& reply, engine::CancellationToken cancel) {
    auto execute = lsp::parse_params<lsp::ExecuteCommandParams>(params);
    for (auto& feature : features_) {
      auto names = feature->commands();
      if (std::find(names.begin(), names.end(), execute.command) != names.end()) {
        reply.result(feature->execute_command(execute.command, execute.arguments, context(cancel)));
        return;
      }
    }
    throw protocol::RpcError(ErrorCode::InvalidParams, "unknown command: " + execute.command);
  });
}

}  // namespace hiera::server
