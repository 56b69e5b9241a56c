#pragma once
// The LSP server: reads frames on the calling thread, runs handlers in order on
// one message-loop thread, runs jobs on a pool, and writes frames from any
// thread through one locked writer. Knows the protocol; features do the work.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "protocol/framing.h"
#include "server/client/client.h"
#include "server/dispatch/dispatcher.h"
#include "server/documents/document_scheduler.h"
#include "server/documents/document_store.h"
#include "server/features/feature.h"
#include "server/jobs/job_manager.h"
#include "server/state/settings.h"
#include "server/transport/transport.h"

namespace hiera::server {

struct ServerOptions {
  std::string name = "hiera";
  std::size_t job_threads = 2;
  std::chrono::milliseconds client_request_timeout{30000};
  std::size_t max_body_bytes = protocol::kDefaultMaxBodyBytes;
  // Diagnostics are built off the message loop, per document: this long after
  // the last change (a storm of edits makes one build, not one per edit) ...
  std::chrono::milliseconds analysis_debounce{50};
  // ... on this many threads (documents build side by side, one build each).
  std::size_t analysis_threads = 1;
  // A hover waits at most this long for its own version's build, then answers
  // from the last one built ("stale is OK for hover"). Code lenses and code
  // actions wait for their own version (ContentModified once superseded).
  std::chrono::milliseconds hover_wait{30};
};

class LspServer final : public Client {
 public:
  explicit LspServer(Transport& transport, ServerOptions options = {});
  ~LspServer() override;

  // Register before run(): the initialize reply lists the features' commands.
  void add_feature(std::unique_ptr<Feature> feature);
  // Serves until `exit` or end of stream. Returns the exit code the LSP
  // specifies: 0 after shutdown, 1 otherwise.
  int run();

  // Client
  void notify(const std::string& method, nlohmann::json params) override;
  void request(const std::string& method, nlohmann::json params, ClientRequests::Callback callback) override;
  const protocol::lsp::ClientCapabilities& capabilities() const override { return capabilities_; }
  PositionEncoding encoding() const override { return encoding_; }

  DocumentStore& documents() { return documents_; }
  JobManager& jobs() { return *jobs_; }
  // How many builds ran and were committed (tests, benchmarks).
  DocumentScheduler::Stats build_stats() const { return scheduler_->stats(); }
  const Settings& settings() const { return settings_; }

 private:
  enum class State { Uninitialized, Running, ShutDown };

  void on_bytes(std::string_view bytes);
  void on_body(const std::string& body);
  void send(const nlohmann::json& message);
  void reply_in_order(nlohmann::json message);
  void register_handlers();
  FeatureContext context(engine::CancellationToken cancel = {});
  void send_text(std::string_view body);
  // Runs on the analysis pool: every feature's diagnostics for `document`; the
  // returned commit publishes them (on the loop, only if still the newest).
  DocumentScheduler::Commit build_diagnostics(const DocumentStore::Snapshot& document,
                                              const engine::CancellationToken& cancel);
  void republish_diagnostics();
  void pull_configuration();
  nlohmann::json initialize(const nlohmann::json& params);

  Transport& transport_;
  ServerOptions options_;
  protocol::FrameReader reader_;
  protocol::FrameWriter writer_;
  boost::asio::io_context loop_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> loop_guard_;
  std::thread loop_thread_;
  ClientRequests client_requests_;
  Dispatcher dispatcher_;
  DocumentStore documents_;
  Settings settings_;
  std::vector<std::unique_ptr<Feature>> features_;
  std::unique_ptr<JobManager> jobs_;
  // Last: destroyed first, waiting for its builds while the features live.
  std::unique_ptr<DocumentScheduler> scheduler_;
  // Where the views (outline, inlay hints, definition) are rendered and
  // serialised, off the message loop: a big file's outline is thousands of
  // symbols, which a hover must not wait behind. Destroyed before the rest.
  boost::asio::thread_pool views_{1};

  // Written once by initialize on the loop before any feature runs.
  protocol::lsp::ClientCapabilities capabilities_;
  PositionEncoding encoding_ = PositionEncoding::Utf16;
  std::atomic<State> state_{State::Uninitialized};
  std::atomic<bool> exit_received_{false};
};

}  // namespace hiera::server
