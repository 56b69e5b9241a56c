// EvaluationClient over a pool of fake workers: typed results in, failed jobs
// folded into failed evaluations.
#include "engine/eval/evaluation_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "build_paths.h"

namespace hiera::engine::eval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

WorkerPoolOptions fakes(std::size_t n) {
  WorkerPoolOptions options;
  for (std::size_t i = 0; i < n; ++i)
    options.commands.push_back({::hiera::testing::fake_worker_bin(), "--device", std::to_string(i)});
  options.handshake_timeout = 30s;
  return options;
}

json task(const std::string& behave) {
  return json{{"kind", "cuda"}, {"behave", behave}};
}

TEST(EvaluationClientTest, PassedEvaluationIsParsed) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  EvaluateOptions options;
  options.trials = 6;
  options.seed = 7;
  const Evaluation evaluation = client.evaluate(task("ok"), options);
  ASSERT_FALSE(evaluation.job_failure) << evaluation.job_failure->message;
  EXPECT_TRUE(evaluation.passed());
  ASSERT_EQ(evaluation.trials.size(), 6u);
  EXPECT_EQ(evaluation.trials[0].seed, 7);
  EXPECT_EQ(evaluation.trials[1].distribution, "normal");
  EXPECT_EQ(evaluation.trials[0].sizes.at("N"), 1024);
  ASSERT_TRUE(evaluation.timing);
  EXPECT_DOUBLE_EQ(evaluation.timing->speedup, 2.0);
  EXPECT_DOUBLE_EQ(evaluation.timing->candidate.median_ms, 0.05);
  EXPECT_EQ(evaluation.timing->reference.trials, 50);
  EXPECT_EQ(evaluation.speed_of_light_ms, 0.01);
  EXPECT_EQ(evaluation.record.worker, 0);
  EXPECT_GT(evaluation.record.worker_pid, 0);
}

TEST(EvaluationClientTest, FailedVerdictKeepsItsFailures) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  json t = task("ok");
  t["reply"] = {{"verdict", "failed"},
                {"failures", {{{"check", "values"}, {"message", "max abs error 0.5 > 1e-4"}}}},
                {"trials", {{{"seed", 1234}, {"distribution", "uniform"}, {"sizes", {{"N", 8}}},
                             {"max_abs_error", 0.5}, {"max_rel_error", 0.25}, {"mismatches", 3}}}}};
  const Evaluation evaluation = client.evaluate(t);
  EXPECT_FALSE(evaluation.passed());
  EXPECT_FALSE(evaluation.job_failure);
  EXPECT_EQ(evaluation.verdict, Verdict::Failed);
  ASSERT_EQ(evaluation.failures.size(), 1u);
  EXPECT_EQ(evaluation.failures[0].check, "values");
  ASSERT_EQ(evaluation.trials.size(), 1u);
  EXPECT_EQ(evaluation.trials[0].mismatches, 3);
  EXPECT_DOUBLE_EQ(evaluation.trials[0].max_abs_error, 0.5);
  EXPECT_FALSE(evaluation.timing);
}

TEST(EvaluationClientTest, TimeoutBecomesAFailedEvaluation) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  EvaluateOptions options;
  options.timeout = 300ms;
  const Evaluation evaluation = client.evaluate(task("hang"), options);
  EXPECT_FALSE(evaluation.passed());
  ASSERT_EQ(evaluation.failures.size(), 1u);
  EXPECT_EQ(evaluation.failures[0].check, "timeout");
  EXPECT_THAT(evaluation.failures[0].message, HasSubstr("timed out after 300 ms during evaluate"));
  ASSERT_TRUE(evaluation.job_failure);
  EXPECT_EQ(evaluation.job_failure->kind, WorkerFailureKind::Timeout);
  // The pool replaced the worker; the next evaluation runs.
  EXPECT_TRUE(client.evaluate(task("ok")).passed());
}

TEST(EvaluationClientTest, CrashBecomesARuntimeFailure) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  const Evaluation evaluation = client.evaluate(task("segv"));
  EXPECT_FALSE(evaluation.passed());
  ASSERT_EQ(evaluation.failures.size(), 1u);
  EXPECT_EQ(evaluation.failures[0].check, "runtime");
  EXPECT_THAT(evaluation.failures[0].message, HasSubstr("signal 11"));
  EXPECT_THAT(evaluation.failures[0].message, HasSubstr("segfault on request"));
}

TEST(EvaluationClientTest, MalformedResultBecomesARuntimeFailure) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  json t = task("ok");
  t["reply"] = {{"verdict", "probably"}};
  const Evaluation evaluation = client.evaluate(t);
  EXPECT_FALSE(evaluation.passed());
  ASSERT_EQ(evaluation.failures.size(), 1u);
  EXPECT_EQ(evaluation.failures[0].check, "runtime");
  EXPECT_THAT(evaluation.failures[0].message, HasSubstr("evaluation.verdict"));
  EXPECT_EQ(evaluation.job_failure->kind, WorkerFailureKind::Protocol);
}

TEST(EvaluationClientTest, CancelledEvaluationSaysSo) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  EvaluateOptions options;
  options.cancel.cancel();
  const Evaluation evaluation = client.evaluate(task("ok"), options);
  ASSERT_EQ(evaluation.failures.size(), 1u);
  EXPECT_EQ(evaluation.failures[0].check, "cancelled");
}

TEST(EvaluationClientTest, EvaluationsRunConcurrently) {
  WorkerPool pool(fakes(2));
  EvaluationClient client(pool);
  std::vector<std::future<Evaluation>> futures;
  for (int i = 0; i < 4; ++i) futures.push_back(client.submit_evaluate(task("slow:50")));
  for (auto& future : futures) EXPECT_TRUE(future.get().passed());
}

TEST(EvaluationClientTest, CompileReportsDiagnosticsInCandidateLines) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  const CompileResult good = client.compile("__global__ void k() {}\n");
  ASSERT_FALSE(good.job_failure);
  EXPECT_TRUE(good.ok);
  EXPECT_THAT(good.key, HasSubstr("fake-"));
  EXPECT_TRUE(good.diagnostics.empty());

  CompileOptions options;
  options.line_offset = 2;
  options.options = {"-O3"};
  options.arch = "sm_90";
  const CompileResult bad = client.compile("// prelude\n// prelude\n\n#error nope\n", options);
  EXPECT_FALSE(bad.ok);
  EXPECT_FALSE(bad.job_failure);
  ASSERT_EQ(bad.diagnostics.size(), 1u);
  EXPECT_EQ(bad.diagnostics[0].line, 2);
  EXPECT_EQ(bad.diagnostics[0].severity, "error");
  EXPECT_THAT(bad.log, HasSubstr("#error"));
}

TEST(EvaluationClientTest, BaselinesAreSentOnlyWhenAskedFor) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  const Evaluation plain = client.evaluate(task("ok"));
  ASSERT_TRUE(plain.timing);
  EXPECT_TRUE(plain.timing->baselines.empty());  // the fake answers baselines only to a "baselines" parameter
  EXPECT_TRUE(plain.timing->baseline_errors.empty());

  EvaluateOptions options;
  options.baselines = {"compile", "eager-cudagraphs"};
  const Evaluation evaluation = client.evaluate(task("ok"), options);
  ASSERT_TRUE(evaluation.passed());
  ASSERT_TRUE(evaluation.timing);
  ASSERT_EQ(evaluation.timing->baselines.count("compile"), 1u);
  EXPECT_DOUBLE_EQ(evaluation.timing->baselines.at("compile").median_ms, 0.08);
  EXPECT_EQ(evaluation.timing->baselines.at("compile").trials, 50);
  EXPECT_EQ(evaluation.timing->baseline_errors.at("eager-cudagraphs"), "the fake worker has no baseline eager-cudagraphs");
}

TEST(EvaluationClientTest, CaptureReturnsTheGraph) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  const CaptureResult captured = client.capture(json{{"kind", "pytorch"}, {"reference", {{"source", "class Model: ..."}}}});
  ASSERT_TRUE(captured.ok()) << captured.job_failure->message;
  ASSERT_TRUE(captured.graph.is_object());
  EXPECT_EQ(captured.graph["method"].get<std::string>(), "fx");
  ASSERT_EQ(captured.graph["nodes"].size(), 4u);
  EXPECT_EQ(captured.graph["nodes"][1]["code"].get<std::string>(), "self.conv(x)");
  EXPECT_EQ(captured.record.worker, 0);

  EXPECT_TRUE(client.capture(json{{"kind", "cuda"}}).graph.is_null());
}

TEST(EvaluationClientTest, CaptureSendsTheSeed) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  EvaluateOptions options;
  options.seed = 99;
  const CaptureResult captured = client.capture(json{{"kind", "pytorch"}}, options);
  ASSERT_TRUE(captured.ok()) << captured.job_failure->message;
  EXPECT_EQ(captured.graph["seed"], 99);  // the fake's graph records the seed it was sent
  EXPECT_EQ(client.capture(json{{"kind", "pytorch"}}).graph["seed"], 1234);
}

TEST(EvaluationClientTest, FailedCaptureKeepsTheReason) {
  WorkerPool pool(fakes(1));
  EvaluationClient client(pool);
  const CaptureResult refused = client.capture(json{{"kind", "pytorch"}, {"behave", "error"}});
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(refused.graph.is_null());
  EXPECT_THAT(refused.job_failure->message, HasSubstr("bad parameters on request"));

  json malformed = {{"kind", "pytorch"}};
  malformed["reply"] = {{"graph", 7}};
  const CaptureResult bad = client.capture(malformed);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.job_failure->kind, WorkerFailureKind::Protocol);
  EXPECT_THAT(bad.job_failure->message, HasSubstr("malformed capture result: capture.graph must be an object or null"));

  EvaluateOptions options;
  options.timeout = 300ms;
  const CaptureResult late = client.capture(json{{"kind", "pytorch"}, {"behave", "hang"}}, options);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.job_failure->kind, WorkerFailureKind::Timeout);
}

TEST(EvaluationClientTest, ProbeReadsTheDevice) {
  WorkerPool pool(fakes(2));
  EvaluationClient client(pool);
  const DeviceProbe probe = client.probe();
  ASSERT_TRUE(probe.ok()) << probe.job_failure->message;
  EXPECT_EQ(probe.name, "Fake GPU");
  EXPECT_EQ(probe.sm_count, 132);
  EXPECT_EQ(probe.memory_bytes, 150754820096LL);
  EXPECT_DOUBLE_EQ(probe.copy_gbs, 4300.0);
  EXPECT_DOUBLE_EQ(probe.gemm_tflops.at("float32"), 51.0);
  EXPECT_EQ(probe.gemm_tflops.count("tf32"), 0u);  // null: not measured
  EXPECT_EQ(probe.driver, "570.86");

  const std::vector<DeviceProbe> all = client.probe_all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].record.worker, 0);
  EXPECT_EQ(all[1].record.worker, 1);
}

}  // namespace
}  // namespace hiera::engine::eval
