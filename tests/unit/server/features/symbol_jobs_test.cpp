// hiera.optimizeSymbol / hiera.profileSymbol / hiera.showSpec through a real
// LspServer (MemoryTransport), the real optimizer and worker pool, a real HTTP
// LLM endpoint on loopback with scripted replies, and hiera-fake-worker as the
// worker process: a FAKE, because this machine has no GPU (and no torch) for
// `hiera worker`; it speaks the real job protocol and answers canned
// measurements (--candidate-ms makes its candidates faster beyond noise).
#include "server/features/symbol_jobs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "http_test_server.h"
#include "memory_transport.h"
#include "scripted_llm.h"
#include "server/features/job_commands.h"
#include "server/lsp_server.h"
#include "temp_directory.h"
#include "annotated_kernel.h"
#include "build_paths.h"

namespace hiera::server {
namespace {

using nlohmann::json;
using hiera::testing::full_capabilities;
using hiera::testing::notification;
using hiera::testing::request;
namespace fs = std::filesystem;

const std::string kKernel = hiera::testing::annotated_scale_kernel();

const std::string kFaster =
    "__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] + x[i];\n"
    "}\n";

std::string chat_reply(const std::string& code) {
  json reply = {{"id", "x"}, {"object", "chat.completion"}, {"model", "scripted-model"},
                {"choices", {{{"index", 0}, {"finish_reason", "stop"},
                              {"message", {{"role", "assistant"}, {"content", "Faster:\n```cuda\n" + code + "```\n"}}}}}},
                {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 100}}}};
  return reply.dump();
}

class SymbolJobsTest : public ::testing::Test {
 protected:
  hiera::testing::TempDirectory dir{"hiera-symbol-jobs-"};
  hiera::testing::MemoryTransport transport;
  std::shared_ptr<MeasurementStore> store = std::make_shared<MeasurementStore>();
  // The server's one engine, held here too to see its pool.
  std::shared_ptr<engine::facade::Engine> facade = std::make_shared<engine::facade::Engine>(
      engine::facade::EngineOptions{::hiera::testing::hiera_bin(), "hiera lsp", ".hiera/runs"});
  std::unique_ptr<LspServer> server;
  std::future<int> exit_code;
  hiera::testing::HttpTestServer llm;
  std::string uri;
  int next_id = 100;

  json settings(const std::string& llm_url) {
    return {{"worker", {{"command", {::hiera::testing::fake_worker_bin(), "--candidate-ms", "0.05"}}}},
            {"budget", {{"candidates", 1}}},
            {"llm", {{"endpoint", llm_url}, {"model", "scripted-model"}, {"maxRetries", 0}}},
            {"runsDir", (dir.path() / "runs").string()}};
  }
  void start(json caps = full_capabilities(), json options = nullptr) {
    if (options.is_null()) options = settings(llm.base_url());
    ServerOptions server_options;
    server_options.client_request_timeout = std::chrono::milliseconds(20000);
    server = std::make_unique<LspServer>(transport, server_options);
    server->add_feature(std::make_unique<JobCommands>());
    server->add_feature(std::make_unique<SymbolJobs>(store, facade));
    exit_code = std::async(std::launch::async, [this] { return server->run(); });
    call("initialize", {{"processId", nullptr}, {"capabilities", caps}, {"initializationOptions", options}});
    transport.push_message(notification("initialized"));
    if (caps["workspace"].value("configuration", false)) {
      auto pull = wait_method("workspace/configuration");
      answer(pull, json::array({options}));
    }
    uri = "file://" + (dir.path() / "scale.cu").string();
    transport.push_message(notification("textDocument/didOpen",
                                        {{"textDocument", {{"uri", uri}, {"languageId", "cuda"}, {"version", 3}, {"text", kKernel}}}}));
  }
  void TearDown() override {
    if (exit_code.valid()) {
      transport.end_input();
      exit_code.get();
    }
  }
  json call(const std::string& method, json params) {
    const int id = next_id++;
    transport.push_message(request(id, method, std::move(params)));
    auto response = transport.wait_for_response(id, std::chrono::seconds(30));
    if (!response) ADD_FAILURE() << "no response to " << method;
    return response.value_or(json());
  }
  json command(const std::string& name, json argument) {
    return call("workspace/executeCommand", {{"command", name}, {"arguments", json::array({std::move(argument)})}});
  }
  json symbol_arg(int version = 3) { return {{"uri", uri}, {"version", version}, {"symbol", "scale"}, {"kind", "kernel"}}; }
  json wait_method(const std::string& method) {
    auto m = transport.wait_for([&](const json& message) { return message.value("method", "") == method; }, std::chrono::seconds(60));
    if (!m) ADD_FAILURE() << "no " << method;
    return m.value_or(json());
  }
  void answer(const json& message, json result) {
    transport.push_message({{"jsonrpc", "2.0"}, {"id", message["id"]}, {"result", std::move(result)}});
  }
  // The job's $/progress values up to its end, in order.
  std::vector<json> progress_until_end() {
    std::vector<json> values;
    while (true) {
      auto m = transport.wait_for([](const json& message) { return message.value("method", "") == "$/progress"; }, std::chrono::seconds(60));
      if (!m) {
        ADD_FAILURE() << "no end of progress";
        return values;
      }
      values.push_back((*m)["params"]["value"]);
      if (values.back()["kind"] == "end") return values;
    }
  }
  json job_status(const std::string& id) {
    const json jobs = call("workspace/executeCommand", {{"command", "hiera.jobs"}});
    for (const auto& job : jobs["result"]) {
      if (job["id"] == id) return job;
    }
    ADD_FAILURE() << "no job " << id << " in " << jobs.dump();
    return json::object();
  }
};

TEST_F(SymbolJobsTest, BadArgumentsAreInvalidParamsAndAStaleVersionIsContentModified) {
  start();
  auto error_of = [&](json argument) { return command("hiera.optimizeSymbol", std::move(argument))["error"]; };
  EXPECT_EQ(call("workspace/executeCommand", {{"command", "hiera.optimizeSymbol"}, {"arguments", json::array()}})["error"],
            (json{{"code", -32602}, {"message", R"(hiera.optimizeSymbol: the arguments must be [{"uri", "version", "symbol", "kind"}])"}}));
  json a = symbol_arg();
  a.erase("version");
  EXPECT_EQ(error_of(a), (json{{"code", -32602}, {"message", "hiera.optimizeSymbol: version must be an integer"}}));
  a = symbol_arg();
  a["kind"] = "function";
  EXPECT_EQ(error_of(a)["message"], "hiera.optimizeSymbol: kind must be \"kernel\" or \"module\", not \"function\"");
  a = symbol_arg();
  a["uri"] = "file:///nowhere.cu";
  EXPECT_EQ(error_of(a), (json{{"code", -32602}, {"message", "hiera.optimizeSymbol: document not open: file:///nowhere.cu"}}));
  a = symbol_arg();
  a["symbol"] = "missing";
  EXPECT_EQ(error_of(a)["code"], -32602);
  EXPECT_EQ(error_of(a)["message"], "hiera.optimizeSymbol: " + (dir.path() / "scale.cu").string() +
                                        ": no __global__ kernel 'missing' (kernels here: scale)");
  a = symbol_arg();
  a["kind"] = "module";
  EXPECT_EQ(error_of(a)["message"], "hiera.optimizeSymbol: scale is a CUDA kernel, not a module");
  EXPECT_EQ(command("hiera.profileSymbol", symbol_arg(2))["error"],
            (json{{"code", -32801}, {"message", "hiera.profileSymbol: " + uri + " is at version 3, not 2 (the document changed)"}}));
  EXPECT_EQ(command("hiera.showSpec", symbol_arg(4))["error"]["code"], -32801);
  EXPECT_EQ(llm.request_count(), 0u);
}

TEST_F(SymbolJobsTest, OptimizeReportsProgressAndEditsTheVersionItStartedFrom) {
  llm.enqueue_json(200, chat_reply(kFaster));
  start();
  const auto reply = command("hiera.optimizeSymbol", symbol_arg());
  const std::string id = reply["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  auto apply = transport.wait_for([](const json& m) { return m.value("method", "") == "workspace/applyEdit"; },
                                  std::chrono::seconds(60));
  ASSERT_TRUE(apply);
  answer(*apply, {{"applied", true}});
  const auto progress = progress_until_end();
  ASSERT_GE(progress.size(), 3u);
  EXPECT_EQ(progress.front(), (json{{"kind", "begin"}, {"title", "Optimize scale"}, {"cancellable", true}, {"message", "started"}, {"percentage", 0}}));
  EXPECT_EQ(progress[1]["kind"], "report");
  EXPECT_EQ(progress[1], (json{{"kind", "report"}, {"cancellable", true}, {"message", "reading the contract"}, {"percentage", 0}}));
  bool saw_verified = false;
  for (const auto& p : progress) {
    if (p.value("message", "") == "S3 / fake_kernel: c1: passed (2.00x) (1/1 tried, 1 verified, best 2.00x)") {
      saw_verified = true;
      EXPECT_EQ(p["percentage"], 100);
    }
  }
  EXPECT_TRUE(saw_verified) << json(progress).dump(1);

  const json status = job_status(id);
  EXPECT_EQ(status["state"], "improved");
  const std::string report = status["reportPath"];
  EXPECT_TRUE(fs::exists(report));
  EXPECT_EQ(progress.back(), (json{{"kind", "end"}, {"message", "scale: 2.00x faster on Fake GPU, verified; report: " + report}}));

  const json& change = (*apply)["params"]["edit"]["documentChanges"][0];
  EXPECT_EQ(change["textDocument"], (json{{"uri", uri}, {"version", 3}}));
  ASSERT_EQ(change["edits"].size(), 1u);
  EXPECT_EQ(change["edits"][0]["range"], (json{{"start", {{"line", 5}, {"character", 0}}}, {"end", {{"line", 8}, {"character", 1}}}}));
  EXPECT_EQ(change["edits"][0]["newText"],
            "// Optimized by hiera on Fake GPU: 2.00x faster than the original, verified.\n"
            "// Median 0.1000 ms -> 0.0500 ms (p10-p90 0.0950-0.1100 ms -> 0.0475-0.0525 ms, 50 timed runs each).\n"
            "// Verified on 5 trials within atol 0.0001, rtol 0.0001 (float32); spaces tried: S3; delivered from S3.\n"
            "// Full report: " + report + "\n" + kFaster.substr(0, kFaster.size() - 1));
  EXPECT_EQ((*apply)["params"]["label"], "hiera: optimized scale (2.00x)");

  const auto m = store->get(uri, "scale");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->gpu, "Fake GPU");
  EXPECT_EQ(m->median_ms, 0.1);
  EXPECT_EQ(m->verified_speedup, 2.0);
  EXPECT_EQ(m->optimized_median_ms, 0.05);
  EXPECT_EQ(m->report_path, report);
}

TEST_F(SymbolJobsTest, AnEditForADocumentChangedMeanwhileIsAConflictAndNeverSent) {
  llm.enqueue_json(200, chat_reply(kFaster));
  start();
  const std::string id = command("hiera.optimizeSymbol", symbol_arg())["result"]["jobId"];
  // The job waits for its progress token: change the document before granting it.
  const json create = wait_method("window/workDoneProgress/create");
  transport.push_message(notification("textDocument/didChange",
                                      {{"textDocument", {{"uri", uri}, {"version", 4}}}, {"contentChanges", {{{"text", kKernel + "// edited\n"}}}}}));
  answer(create, nullptr);
  const auto progress = progress_until_end();
  EXPECT_EQ(progress.back()["message"], "not applied: " + uri + " changed since the job started (version 3 → 4)");
  for (const auto& m : transport.drain()) EXPECT_NE(m.value("method", ""), "workspace/applyEdit");
  EXPECT_EQ(job_status(id)["state"], "conflict");
  ASSERT_TRUE(store->get(uri, "scale"));
  EXPECT_FALSE(store->get(uri, "scale")->verified_speedup);  // the reference was measured; nothing was delivered
}

TEST_F(SymbolJobsTest, AnEditTheEditorRefusesIsReportedAsNotApplied) {
  llm.enqueue_json(200, chat_reply(kFaster));
  start();
  const std::string id = command("hiera.optimizeSymbol", symbol_arg())["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  answer(wait_method("workspace/applyEdit"), {{"applied", false}, {"failureReason", "the buffer is read-only"}});
  EXPECT_EQ(progress_until_end().back()["message"], "not applied: the buffer is read-only");
  EXPECT_EQ(job_status(id)["state"], "failed");
  EXPECT_FALSE(store->get(uri, "scale")->verified_speedup);
}

TEST_F(SymbolJobsTest, CancellingStopsTheOptimizerWithoutAnEdit) {
  start();
  const std::string id = command("hiera.optimizeSymbol", symbol_arg())["result"]["jobId"];
  const json create = wait_method("window/workDoneProgress/create");
  EXPECT_EQ(command("hiera.cancelJob", id)["result"], (json{{"cancelled", 1}}));
  answer(create, nullptr);
  EXPECT_EQ(progress_until_end().back(), (json{{"kind", "end"}, {"message", "cancelled"}}));
  EXPECT_EQ(job_status(id)["state"], "cancelled");
  for (const auto& m : transport.drain()) EXPECT_NE(m.value("method", ""), "workspace/applyEdit");
  EXPECT_EQ(llm.request_count(), 0u);
}

TEST_F(SymbolJobsTest, ADeadLlmEndpointFailsTheJobWithItsReason) {
  start(full_capabilities(), settings("http://127.0.0.1:" + std::to_string(hiera::testing::closed_port())));
  const std::string id = command("hiera.optimizeSymbol", symbol_arg())["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  const std::string end = progress_until_end().back()["message"];
  EXPECT_EQ(end.rfind("failed: the LLM endpoint did not answer: the LLM request failed (network)", 0), 0u) << end;
  EXPECT_EQ(job_status(id)["state"], "failed");
}

TEST_F(SymbolJobsTest, ProfileMeasuresTheReferenceOnlyAndRecordsIt) {
  start();
  const std::string id = command("hiera.profileSymbol", symbol_arg())["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  const auto progress = progress_until_end();
  EXPECT_EQ(progress.front()["title"], "Profile scale");
  EXPECT_EQ(progress.back(), (json{{"kind", "end"}, {"message", "scale: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU"}}));
  EXPECT_EQ(llm.request_count(), 0u);
  const auto m = store->get(uri, "scale");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->gpu, "Fake GPU");
  EXPECT_EQ(m->p10_ms, 0.095);
  EXPECT_EQ(m->p90_ms, 0.11);
  ASSERT_EQ(m->kernels.size(), 1u);
  EXPECT_EQ(m->kernels[0].name, "fake_kernel");
  EXPECT_DOUBLE_EQ(m->kernels[0].ms, 0.2);
  EXPECT_EQ(m->kernels[0].fraction, 1.0);
  EXPECT_FALSE(m->verified_speedup);
  EXPECT_TRUE(fs::exists(job_status(id)["reportPath"].get<std::string>()));
}

TEST_F(SymbolJobsTest, WithoutAGpuWorkerAJobStopsBeforeItRunsAndSaysWhatIsNeeded) {
  json options = settings(llm.base_url());
  options["worker"]["command"] = {::hiera::testing::fake_worker_bin(), "--device", "none"};
  start(full_capabilities(), options);
  const std::string id = command("hiera.optimizeSymbol", symbol_arg())["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  const std::string expected =
      "scale: not started: no GPU: no worker has one (" + ::hiera::testing::fake_worker_bin() +
      " --device none answered without a CUDA device). Profiling and optimizing need a GPU worker: set worker.command "
      "to "
      "one (e.g. [\"ssh://gpu-host\"], a host with a GPU and hiera installed) or list several in worker.specs "
      "([\"ssh://gpu-host\", \"slurm:gpu,gres=gpu:1\"]); or ask for a CPU run with worker.device: \"cpu\" "
      "(PyTorch-operator candidates only, timed on the CPU)";
  EXPECT_EQ(progress_until_end().back(), (json{{"kind", "end"}, {"message", expected}}));
  const json shown = wait_method("window/showMessage");
  EXPECT_EQ(shown["params"], (json{{"type", 2}, {"message", "hiera: Optimize scale: " + expected}}));
  EXPECT_EQ(job_status(id)["state"], "no GPU");
  EXPECT_FALSE(store->get(uri, "scale"));  // nothing ran, nothing measured
  EXPECT_EQ(llm.request_count(), 0u);
}

TEST_F(SymbolJobsTest, AskedForACpuRunAJobRunsOnAWorkerWithoutAGpu) {
  json options = settings(llm.base_url());
  options["worker"] = {{"command", {::hiera::testing::fake_worker_bin(), "--device", "none"}}, {"device", "cpu"}};
  start(full_capabilities(), options);
  const std::string id = command("hiera.profileSymbol", symbol_arg())["result"]["jobId"];
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  EXPECT_EQ(progress_until_end().back()["message"], "scale: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU");  // the canned probe's
  EXPECT_EQ(job_status(id)["state"], "measured");
}

TEST_F(SymbolJobsTest, ARefusedSettingIsAnsweredAndShownNamingTheAcceptedValues) {
  json options = settings(llm.base_url());
  options["worker"]["device"] = "tpu";
  start(full_capabilities(), options);
  const std::string message =
      "hiera.profileSymbol: hiera settings: worker.device must be \"gpu\" (a GPU worker, the default) or \"cpu\" (a CPU run), "
      "not \"tpu\"";
  EXPECT_EQ(command("hiera.profileSymbol", symbol_arg())["error"], (json{{"code", -32602}, {"message", message}}));
  EXPECT_EQ(wait_method("window/showMessage")["params"], (json{{"type", 2}, {"message", "hiera: " + message}}));
}

TEST_F(SymbolJobsTest, JobsReuseTheServersWorkerPool) {
  start();
  for (int i = 0; i < 2; ++i) {
    command("hiera.profileSymbol", symbol_arg());
    answer(wait_method("window/workDoneProgress/create"), nullptr);
    const auto progress = progress_until_end();
    EXPECT_EQ(progress.back()["message"], "scale: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU");
  }
  EXPECT_EQ(facade->pools_started(), 1);  // one pool, started by the first job, kept for the second
  EXPECT_EQ(command("hiera.showSpec", symbol_arg())["result"]["problems"], json::array());
  EXPECT_EQ(facade->pools_started(), 1);
}

TEST_F(SymbolJobsTest, ANewMeasurementAsksTheClientToRefreshItsLenses) {
  json caps = full_capabilities();
  caps["workspace"]["codeLens"] = {{"refreshSupport", true}};
  start(caps);
  command("hiera.profileSymbol", symbol_arg());
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  progress_until_end();
  const json refresh = wait_method("workspace/codeLens/refresh");
  EXPECT_TRUE(refresh.contains("id"));  // a request, answered by the client
  EXPECT_TRUE(store->get(uri, "scale"));
}

// sbatch, squeue, scancel and srun as scripts first on PATH, for the server's
// own `slurm` worker spec: the holding job 42 pends once (Resources), then
// runs; its one step is the fake worker. Each tool logs its arguments.
class FakeSlurmOnPath {
 public:
  explicit FakeSlurmOnPath(const fs::path& dir) : bin_(dir / "slurm-bin"), old_path_(std::getenv("PATH")) {
    fs::create_directories(bin_);
    const std::string states = (bin_ / "states").string();
    std::ofstream(states) << "PENDING|Resources\nRUNNING|None\n";
    tool("sbatch", "echo '42;cluster'\n");
    tool("squeue", "head -n 1 " + states + "\nif [ $(wc -l < " + states + ") -gt 1 ]; then sed -i 1d " + states + "; fi\n");
    tool("scancel", "");
    tool("srun", std::string("exec ") + ::hiera::testing::fake_worker_bin() + " --candidate-ms 0.05\n");
    ::setenv("PATH", (bin_.string() + ":" + old_path_).c_str(), 1);
  }
  ~FakeSlurmOnPath() { ::setenv("PATH", old_path_.c_str(), 1); }
  std::string log(const std::string& tool) const { return hiera::testing::read_text(bin_ / (tool + ".log")); }

 private:
  void tool(const std::string& name, const std::string& body) {
    const fs::path path = bin_ / name;
    std::ofstream(path) << "#!/bin/sh\necho \"$*\" >> " << (bin_ / (name + ".log")).string() << "\n" << body;
    fs::permissions(path, fs::perms::owner_all);
  }
  fs::path bin_;
  std::string old_path_;
};

TEST_F(SymbolJobsTest, APendingSlurmAllocationIsShownInProgressAndLoggedOnce) {
  FakeSlurmOnPath slurm(dir.path());
  llm.enqueue_json(200, chat_reply(kFaster));
  json options = settings(llm.base_url());
  options["worker"] = {{"command", {"slurm,mem=4G"}}};
  start(full_capabilities(), options);
  command("hiera.optimizeSymbol", symbol_arg());
  answer(wait_method("window/workDoneProgress/create"), nullptr);
  answer(wait_method("workspace/applyEdit"), {{"applied", true}});
  const auto progress = progress_until_end();
  EXPECT_EQ(progress.back()["message"].get<std::string>().rfind("scale: 2.00x faster on Fake GPU, verified; report: ", 0), 0u)
      << progress.back().dump();

  // While the job pends, the report says so (no plan step runs yet: 0 %);
  // after it runs, the optimizer's own messages again.
  const std::string waiting = "waiting: Slurm job 42 is pending (Resources); workers start when it runs";
  std::size_t last_wait = 0;
  for (std::size_t i = 0; i < progress.size(); ++i) {
    if (progress[i].value("message", "") == waiting) last_wait = i;
  }
  ASSERT_GT(last_wait, 0u) << json(progress).dump(1);
  EXPECT_EQ(progress[last_wait], (json{{"kind", "report"}, {"cancellable", true}, {"message", waiting}, {"percentage", 0}}));
  ASSERT_LT(last_wait + 2, progress.size());
  EXPECT_EQ(progress[last_wait + 1]["kind"], "report");
  for (std::size_t i = last_wait + 1; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i].value("message", "").rfind("waiting:", 0), std::string::npos) << progress[i].dump();
  }
  bool saw_step = false;
  for (std::size_t i = last_wait + 1; i < progress.size(); ++i) {
    saw_step = saw_step || progress[i].value("message", "").rfind("S3 / fake_kernel: ", 0) == 0;
  }
  EXPECT_TRUE(saw_step) << json(progress).dump(1);

  // Each notice once, in the log the editor shows (Info).
  std::vector<std::string> logged;
  for (const auto& m : transport.drain()) {
    if (m.value("method", "") != "window/logMessage") continue;
    const std::string line = m["params"]["message"];
    if (line.find("Slurm job") != std::string::npos) {
      EXPECT_EQ(m["params"]["type"], 3) << line;
      logged.push_back(line);
    }
  }
  EXPECT_EQ(logged, (std::vector<std::string>{
                        "hiera: submitted Slurm job 42 to hold 1 worker(s); it is cancelled when the run ends",
                        "hiera: Slurm job 42 is pending (Resources); workers start when it runs",
                        "hiera: Slurm job 42 is running",
                        "hiera: cancelled Slurm job 42: its resources are released",
                    }));
  // mem= reached sbatch; the step shares it (--mem=0).
  EXPECT_EQ(slurm.log("sbatch"), "--parsable --job-name=hiera-workers --output=/dev/null --nodes=1 --ntasks=1 "
                                 "--cpus-per-task=1 --mem=4G --wrap exec sleep infinity\n");
  EXPECT_EQ(slurm.log("srun").rfind("--jobid=42 --job-name=hiera-worker-0 --nodes=1 --ntasks=1 --cpus-per-task=1 --mem=0 --exact ", 0), 0u)
      << slurm.log("srun");
  EXPECT_EQ(slurm.log("scancel"), "42\n");
}

TEST_F(SymbolJobsTest, ShowSpecAnswersTheMarkdownAndShowsTheWrittenFile) {
  json caps = full_capabilities();
  caps["window"]["showDocument"] = {{"support", true}};
  start(caps);
  const auto reply = command("hiera.showSpec", symbol_arg())["result"];
  const fs::path file = dir.path() / "runs" / "specs" / "scale.cu.scale.md";
  EXPECT_EQ(reply["path"], file.string());
  EXPECT_EQ(reply["problems"], json::array());
  const std::string markdown = reply["markdown"];
  EXPECT_EQ(markdown.rfind("# Task spec: scale.cu::scale\n\n", 0), 0u) << markdown;
  EXPECT_NE(markdown.find("interface.launch"), std::string::npos) << markdown;
  EXPECT_EQ(hiera::testing::read_text(file), markdown);
  const json show = wait_method("window/showDocument");
  EXPECT_EQ(show["params"], (json{{"uri", "file://" + file.string()}, {"takeFocus", true}}));
}

TEST_F(SymbolJobsTest, ShowSpecFallsBackToAMessageWithThePath) {
  start();
  const auto reply = command("hiera.showSpec", symbol_arg())["result"];
  const json shown = wait_method("window/showMessage");
  EXPECT_EQ(shown["params"], (json{{"type", 3}, {"message", "hiera: task spec of scale.cu::scale: " + reply["path"].get<std::string>()}}));
}

}  // namespace
}  // namespace hiera::server
