#include "server/jobs/job_manager.h"

#include <future>

#include <boost/asio/post.hpp>

namespace hiera::server {

namespace lsp = protocol::lsp;

const char* to_string(JobState state) {
  switch (state) {
    case JobState::Done: return "done";
    case JobState::Running: return "running";
    case JobState::Improved: return "improved";
    case JobState::NoImprovement: return "no improvement";
    case JobState::Measured: return "measured";
    case JobState::NoGpu: return "no GPU";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
    case JobState::Conflict: return "conflict";
  }
  return "unknown";
}

namespace {

// Waits for a server→client request's outcome from a pool thread. The
// ClientRequests timeout bounds the wait; the extra margin covers a loop that
// has already stopped.
ClientRequests::Outcome call_client(Client& client, const std::string& method, nlohmann::json params) {
  auto promise = std::make_shared<std::promise<ClientRequests::Outcome>>();
  auto future = promise->get_future();
  client.request(method, std::move(params), [promise](ClientRequests::Outcome outcome) { promise->set_value(std::move(outcome)); });
  if (future.wait_for(std::chrono::minutes(2)) != std::future_status::ready) {
    return protocol::ResponseError{protocol::ErrorCode::RequestFailed, "no answer to " + method, std::nullopt};
  }
  return future.get();
}

}  // namespace

class JobManager::Context final : public JobContext {
 public:
  Context(JobManager& manager, std::string id, std::string title, bool progress, engine::CancellationToken token)
      : manager_(manager), id_(std::move(id)), title_(std::move(title)), progress_(progress), token_(std::move(token)) {}

  const engine::CancellationToken& cancellation() const override { return token_; }

  void report(const std::string& message, std::optional<int> percentage) override {
    manager_.update(id_, [&](JobStatus& s) {
      s.message = message;
      s.percentage = percentage;
    });
    if (progress_) {
      lsp::WorkDoneProgressReport report{true, message, percentage};
      manager_.client_.notify("$/progress", {{"token", id_}, {"value", report}});
    } else {
      manager_.client_.log(lsp::MessageType::Log, "hiera: " + title_ + ": " + message);
    }
  }

 private:
  JobManager& manager_;
  std::string id_;
  std::string title_;
  bool progress_;
  engine::CancellationToken token_;
};

JobManager::JobManager(Client& client, DocumentStore& documents, std::size_t threads)
    : client_(client), documents_(documents), pool_(threads == 0 ? 1 : threads) {}

JobManager::~JobManager() {
  cancel_all();
  pool_.join();
}

std::string JobManager::start(const std::string& title, JobWork work) {
  std::string id;
  {
    std::lock_guard lock(mutex_);
    id = "hiera-job-" + std::to_string(next_id_++);
    entries_[id] = Entry{JobStatus{id, title, JobState::Running, "queued", std::nullopt, {}}, engine::CancellationToken{}};
    ++running_;
  }
  boost::asio::post(pool_, [this, id, title, work = std::move(work)] { run(id, title, work); });
  return id;
}

bool JobManager::cancel(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.status.state != JobState::Running) return false;
  it->second.cancel.cancel();
  return true;
}

std::size_t JobManager::cancel_all() {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (auto& [id, entry] : entries_) {
    if (entry.status.state == JobState::Running) {
      entry.cancel.cancel();
      ++count;
    }
  }
  return count;
}

std::vector<JobStatus> JobManager::jobs() const {
  std::lock_guard lock(mutex_);
  std::vector<JobStatus> out;
  for (const auto& [id, entry] : entries_) out.push_back(entry.status);
  return out;
}

std::optional<JobStatus> JobManager::job(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.status;
}

void JobManager::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return running_ == 0; });
}

void JobManager::update(const std::string& id, const std::function<void(JobStatus&)>& change) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it != entries_.end()) change(it->second.status);
}

bool JobManager::begin_progress(const std::string& id, const std::string& title) {
  if (client_.capabilities().workDoneProgress) {
    auto created = call_client(client_, "window/workDoneProgress/create", lsp::WorkDoneProgressCreateParams{id});
    if (created.index() == 0) {
      lsp::WorkDoneProgressBegin begin{title, true, "started", 0};
      client_.notify("$/progress", {{"token", id}, {"value", begin}});
      return true;
    }
    client_.log(lsp::MessageType::Warning,
                "hiera: progress token refused (" + std::get<1>(created).message + "); reporting by messages");
  }
  client_.show_message(lsp::MessageType::Info, "hiera: " + title + " started (job " + id + ")");
  return false;
}

void JobManager::deliver(const std::string& id, const std::string& title, const DocumentEdit& edit,
                         JobResult& result, JobState& state) {
  auto current = documents_.get(edit.uri);
  if (!current || current->version() != edit.version) {
    // Never overwrite text the user changed while the job ran.
    state = JobState::Conflict;
    result.message = current ? "not applied: " + edit.uri + " changed since the job started (version " +
                                   std::to_string(edit.version) + " → " + std::to_string(current->version()) + ")"
                             : "not applied: " + edit.uri + " was closed while the job ran";
    client_.show_message(lsp::MessageType::Warning, "hiera: " + title + ": " + result.message);
    return;
  }
  if (!client_.capabilities().applyEdit) {
    state = JobState::Failed;
    result.message = "not applied: the editor does not support workspace/applyEdit";
    client_.show_message(lsp::MessageType::Warning, "hiera: " + title + ": " + result.message);
    return;
  }
  const auto encoding = client_.encoding();
  const auto& caps = client_.capabilities();
  const bool annotate = caps.documentChanges && caps.changeAnnotations;
  std::vector<lsp::TextEdit> edits;
  for (const auto& e : edit.edits) {
    lsp::TextEdit te{{current->position_of(e.begin, encoding), current->position_of(e.end, encoding)}, e.text,
                     std::nullopt};
    if (annotate) te.annotationId = id;
    edits.push_back(std::move(te));
  }
  lsp::WorkspaceEdit workspace_edit;
  if (caps.documentChanges) {
    workspace_edit.documentChanges = std::vector<lsp::TextDocumentEdit>{{{edit.uri, edit.version}, edits}};
    if (annotate) {
      workspace_edit.changeAnnotations = std::vector<std::pair<std::string, lsp::ChangeAnnotation>>{
          {id, lsp::ChangeAnnotation{edit.label, edit.needs_confirmation, std::string("hiera job ") + id}}};
    }
  } else {
    workspace_edit.changes = std::vector<std::pair<std::string, std::vector<lsp::TextEdit>>>{{edit.uri, edits}};
  }
  auto answer = call_client(client_, "workspace/applyEdit", lsp::ApplyWorkspaceEditParams{edit.label, workspace_edit});
  if (answer.index() == 1) {
    state = JobState::Failed;
    result.message = "not applied: " + std::get<1>(answer).message;
    return;
  }
  lsp::ApplyWorkspaceEditResult applied;
  try {
    applied = std::get<0>(answer).get<lsp::ApplyWorkspaceEditResult>();
  } catch (const std::exception& e) {
    applied.failureReason = std::string("malformed applyEdit reply: ") + e.what();
  }
  if (!applied.applied) {
    state = JobState::Failed;
    result.message = "not applied: " + applied.failureReason.value_or("the editor refused the edit");
  }
}

void JobManager::run(const std::string& id, const std::string& title, const JobWork& work) {
  engine::CancellationToken token;
  {
    std::lock_guard lock(mutex_);
    token = entries_.at(id).cancel;
  }
  update(id, [](JobStatus& s) { s.message = "started"; });
  const bool progress = begin_progress(id, title);
  Context context(*this, id, title, progress, token);
  JobResult result;
  JobState state = JobState::Done;
  try {
    result = work(context);
    state = token.cancelled() ? JobState::Cancelled : result.state;
    if (state == JobState::Running) state = JobState::Done;  // a job cannot end running
  } catch (const engine::Cancelled&) {
    state = JobState::Cancelled;
  } catch (const std::exception& e) {
    state = JobState::Failed;
    result.message = std::string("failed: ") + e.what();
  } catch (...) {
    state = JobState::Failed;
    result.message = "failed with an unknown error";
  }
  if (state == JobState::Cancelled) {
    result.message = "cancelled";
  } else if (result.edit && state != JobState::Failed && state != JobState::NoGpu) {
    const JobState before = state;
    deliver(id, title, *result.edit, result, state);
    if (state == before && result.on_applied) result.on_applied();
  }
  if (result.message.empty()) result.message = to_string(state);

  // The outcome is recorded before the client hears of it: hiera.jobs after the end says how it ended.
  update(id, [&](JobStatus& s) {
    s.state = state;
    s.message = result.message;
    s.report_path = result.report_path;
  });
  if (progress) {
    client_.notify("$/progress", {{"token", id}, {"value", lsp::WorkDoneProgressEnd{result.message}}});
  }
  // A refusal says what to set up: shown, not only in a progress report that fades.
  if (!progress || state == JobState::NoGpu) {
    const bool fine = state == JobState::Done || state == JobState::Improved || state == JobState::NoImprovement ||
                      state == JobState::Measured;
    client_.show_message(fine ? lsp::MessageType::Info : lsp::MessageType::Warning, "hiera: " + title + ": " + result.message);
  }
  {
    std::lock_guard lock(mutex_);
    --running_;
  }
  idle_.notify_all();
}

}  // namespace hiera::server
