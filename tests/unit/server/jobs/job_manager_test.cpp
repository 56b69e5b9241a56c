// JobManager against a recording Client. The Client here is a fake on purpose:
// it lets each test decide how the "editor" answers (refuse progress, refuse
// the edit, never answer); the real clients are exercised in tests/e2e.
#include "server/jobs/job_manager.h"

#include <gtest/gtest.h>

#include <thread>

namespace hiera::server {
namespace {

using nlohmann::json;
namespace lsp = protocol::lsp;

class RecordingClient final : public Client {
 public:
  std::function<ClientRequests::Outcome(const std::string&, const json&)> answer = [](const std::string& method, const json&) {
    if (method == "workspace/applyEdit") return ClientRequests::Outcome(json{{"applied", true}});
    return ClientRequests::Outcome(json(nullptr));
  };
  lsp::ClientCapabilities caps;

  RecordingClient() {
    caps.workDoneProgress = true;
    caps.applyEdit = true;
    caps.documentChanges = true;
  }
  void notify(const std::string& method, json params) override {
    std::lock_guard lock(mutex_);
    log_.push_back({{"method", method}, {"params", params}});
  }
  void request(const std::string& method, json params, ClientRequests::Callback callback) override {
    {
      std::lock_guard lock(mutex_);
      log_.push_back({{"method", method}, {"params", params}, {"request", true}});
    }
    callback(answer(method, params));
  }
  const lsp::ClientCapabilities& capabilities() const override { return caps; }
  PositionEncoding encoding() const override { return PositionEncoding::Utf16; }

  std::vector<json> log() {
    std::lock_guard lock(mutex_);
    return log_;
  }
  std::vector<std::string> methods() {
    std::vector<std::string> out;
    for (auto& m : log()) out.push_back(m["method"]);
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<json> log_;
};

class JobManagerTest : public ::testing::Test {
 protected:
  RecordingClient client;
  DocumentStore documents;
  std::unique_ptr<JobManager> jobs;

  void SetUp() override {
    documents.open(lsp::TextDocumentItem{"file:///a.cu", "cuda-cpp", 3, "int x;\n"});
    jobs = std::make_unique<JobManager>(client, documents, 2);
  }
  static DocumentEdit header_edit(std::int64_t version) {
    return DocumentEdit{"file:///a.cu", version, {{0, 0, "// hi\n"}}, "test edit", false};
  }
};

TEST_F(JobManagerTest, ReportsProgressInOrderAndAppliesAVersionedEdit) {
  const auto id = jobs->start("title", [](JobContext& job) {
    job.report("half", 50);
    return JobResult{"done", header_edit(3)};
  });
  jobs->wait_idle();
  EXPECT_EQ(client.methods(), (std::vector<std::string>{"window/workDoneProgress/create", "$/progress", "$/progress",
                                                        "workspace/applyEdit", "$/progress"}));
  auto log = client.log();
  EXPECT_EQ(log[0]["params"], (json{{"token", id}}));
  EXPECT_EQ(log[1]["params"]["value"]["kind"], "begin");
  EXPECT_EQ(log[1]["params"]["value"]["title"], "title");
  EXPECT_EQ(log[2]["params"]["value"], (json{{"kind", "report"}, {"cancellable", true}, {"message", "half"}, {"percentage", 50}}));
  const json& change = log[3]["params"]["edit"]["documentChanges"][0];
  EXPECT_EQ(change["textDocument"], (json{{"uri", "file:///a.cu"}, {"version", 3}}));
  EXPECT_EQ(change["edits"][0]["newText"], "// hi\n");
  EXPECT_EQ(log[4]["params"]["value"], (json{{"kind", "end"}, {"message", "done"}}));
  EXPECT_EQ(jobs->job(id)->state, JobState::Done);
}

TEST(JobStateText, NamesEachOutcomeAndNeverSucceeded) {
  const std::vector<std::pair<JobState, std::string>> expected = {
      {JobState::Done, "done"},          {JobState::Running, "running"},   {JobState::Improved, "improved"},
      {JobState::NoImprovement, "no improvement"}, {JobState::Measured, "measured"}, {JobState::NoGpu, "no GPU"},
      {JobState::Failed, "failed"},      {JobState::Cancelled, "cancelled"}, {JobState::Conflict, "conflict"}};
  for (const auto& [state, text] : expected) EXPECT_EQ(to_string(state), text);
}

TEST_F(JobManagerTest, TheWorksOwnVerdictIsTheState) {
  const auto none = jobs->start("t", [](JobContext&) { return JobResult{"nothing faster", std::nullopt, "", {}, JobState::NoImprovement}; });
  const auto improved = jobs->start("t", [](JobContext&) { return JobResult{"2x", header_edit(3), "", {}, JobState::Improved}; });
  jobs->wait_idle();
  EXPECT_EQ(jobs->job(none)->state, JobState::NoImprovement);
  EXPECT_EQ(jobs->job(none)->message, "nothing faster");
  EXPECT_EQ(jobs->job(improved)->state, JobState::Improved);
}

TEST_F(JobManagerTest, ANoGpuRefusalIsShownEvenWithProgressAndSendsNoEdit) {
  const auto id = jobs->start("Optimize m", [](JobContext&) {
    return JobResult{"m: not started: no GPU", header_edit(3), "", {}, JobState::NoGpu};
  });
  jobs->wait_idle();
  EXPECT_EQ(jobs->job(id)->state, JobState::NoGpu);
  EXPECT_EQ(client.methods(), (std::vector<std::string>{"window/workDoneProgress/create", "$/progress", "$/progress",
                                                        "window/showMessage"}));
  auto log = client.log();
  EXPECT_EQ(log[2]["params"]["value"], (json{{"kind", "end"}, {"message", "m: not started: no GPU"}}));
  EXPECT_EQ(log[3]["params"], (json{{"type", 2}, {"message", "hiera: Optimize m: m: not started: no GPU"}}));
}

TEST_F(JobManagerTest, AnEditForAChangedDocumentIsNeverSent) {
  std::atomic<bool> go{false};
  const auto id = jobs->start("t", [&](JobContext&) {
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return JobResult{"done", header_edit(3)};
  });
  documents.change(lsp::DidChangeTextDocumentParams{{"file:///a.cu", 4}, {{std::nullopt, "int y;\n"}}},
                   PositionEncoding::Utf16);
  go = true;
  jobs->wait_idle();
  for (auto& m : client.methods()) EXPECT_NE(m, "workspace/applyEdit");
  EXPECT_EQ(jobs->job(id)->state, JobState::Conflict);
  EXPECT_EQ(jobs->job(id)->message, "not applied: file:///a.cu changed since the job started (version 3 → 4)");
  EXPECT_EQ(documents.get("file:///a.cu")->text(), "int y;\n");
}

TEST_F(JobManagerTest, CancellationEndsTheJobWithoutAnEdit) {
  std::atomic<bool> started{false};
  const auto id = jobs->start("t", [&](JobContext& job) {
    started = true;
    while (true) {
      engine::throw_if_cancelled(job.cancellation());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return JobResult{"unreachable", header_edit(3)};
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(jobs->cancel(id));
  jobs->wait_idle();
  EXPECT_FALSE(jobs->cancel(id));  // not running any more
  EXPECT_EQ(jobs->job(id)->state, JobState::Cancelled);
  auto log = client.log();
  EXPECT_EQ(log.back()["params"]["value"], (json{{"kind", "end"}, {"message", "cancelled"}}));
  for (auto& m : client.methods()) EXPECT_NE(m, "workspace/applyEdit");
}

TEST_F(JobManagerTest, FailuresAreReportedNotThrown) {
  const auto id = jobs->start("t", [](JobContext&) -> JobResult { throw std::runtime_error("kernel crashed"); });
  jobs->wait_idle();
  EXPECT_EQ(jobs->job(id)->state, JobState::Failed);
  EXPECT_EQ(client.log().back()["params"]["value"]["message"], "failed: kernel crashed");
}

TEST_F(JobManagerTest, WithoutProgressSupportItFallsBackToShowMessage) {
  client.caps.workDoneProgress = false;
  jobs->start("t", [](JobContext& job) {
    job.report("step", 10);
    return JobResult{"finished", std::nullopt};
  });
  jobs->wait_idle();
  EXPECT_EQ(client.methods(), (std::vector<std::string>{"window/showMessage", "window/logMessage", "window/showMessage"}));
  auto log = client.log();
  EXPECT_EQ(log[2]["params"], (json{{"type", 3}, {"message", "hiera: t: finished"}}));
}

TEST_F(JobManagerTest, ARefusedProgressTokenFallsBackToMessages) {
  client.answer = [](const std::string& method, const json&) -> ClientRequests::Outcome {
    if (method == "window/workDoneProgress/create")
      return protocol::ResponseError{protocol::ErrorCode::InternalError, "no", std::nullopt};
    return json(nullptr);
  };
  jobs->start("t", [](JobContext&) { return JobResult{"ok", std::nullopt}; });
  jobs->wait_idle();
  auto methods = client.methods();
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "$/progress"), 0);
  EXPECT_EQ(methods.back(), "window/showMessage");
}

TEST_F(JobManagerTest, AnEditTheClientRefusesIsAFailureWithItsReason) {
  client.answer = [](const std::string& method, const json&) -> ClientRequests::Outcome {
    if (method == "workspace/applyEdit") return json{{"applied", false}, {"failureReason", "read-only"}};
    return json(nullptr);
  };
  const auto id = jobs->start("t", [](JobContext&) { return JobResult{"done", header_edit(3)}; });
  jobs->wait_idle();
  EXPECT_EQ(jobs->job(id)->state, JobState::Failed);
  EXPECT_EQ(jobs->job(id)->message, "not applied: read-only");
}

TEST_F(JobManagerTest, ClientsWithoutDocumentChangesGetPlainChanges) {
  client.caps.documentChanges = false;
  jobs->start("t", [](JobContext&) { return JobResult{"done", header_edit(3)}; });
  jobs->wait_idle();
  for (auto& m : client.log()) {
    if (m["method"] == "workspace/applyEdit") {
      EXPECT_FALSE(m["params"]["edit"].contains("documentChanges"));
      EXPECT_EQ(m["params"]["edit"]["changes"]["file:///a.cu"][0]["newText"], "// hi\n");
    }
  }
}

TEST_F(JobManagerTest, ChangeAnnotationsAskForConfirmationWhereSupported) {
  client.caps.changeAnnotations = true;
  const auto id = jobs->start("t", [](JobContext&) {
    auto edit = header_edit(3);
    edit.needs_confirmation = true;
    return JobResult{"done", edit};
  });
  jobs->wait_idle();
  for (auto& m : client.log()) {
    if (m["method"] == "workspace/applyEdit") {
      const json& edit = m["params"]["edit"];
      EXPECT_EQ(edit["documentChanges"][0]["edits"][0]["annotationId"], id);
      EXPECT_EQ(edit["changeAnnotations"][id]["needsConfirmation"], true);
      EXPECT_EQ(edit["changeAnnotations"][id]["label"], "test edit");
    }
  }
}

TEST_F(JobManagerTest, JobsRunConcurrentlyAndCancelAllStopsThem) {
  std::atomic<int> running{0};
  for (int i = 0; i < 2; ++i) {
    jobs->start("t", [&](JobContext& job) {
      ++running;
      while (!job.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return JobResult{};
    });
  }
  while (running < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(jobs->cancel_all(), 2u);
  jobs->wait_idle();
  for (auto& status : jobs->jobs()) EXPECT_EQ(status.state, JobState::Cancelled);
}

}  // namespace
}  // namespace hiera::server
