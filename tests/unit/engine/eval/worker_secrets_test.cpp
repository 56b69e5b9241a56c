// The configured secrets at the engine/eval boundary, against hiera-fake-worker
// (real processes): a worker starts without them in its environment, and
// nothing it says (a result, its stderr, a failure message) comes out of the
// pool with a secret's value in it.
#include <cstdlib>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/common/child_process.h"
#include "engine/eval/evaluation_client.h"
#include "engine/eval/redacted_json.h"
#include "engine/eval/worker_pool.h"
#include "engine/eval/worker_process.h"
#include "build_paths.h"

namespace hiera::engine::eval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kLong = 30s;
const std::string kName = "HIERA_TEST_LLM_KEY";
const std::string kSecret = "sk-test-0123456789abcdef";
const std::string kRedacted = "[redacted $HIERA_TEST_LLM_KEY]";

SecretRedactor secrets() {
  SecretRedactor s;
  s.add(kName, kSecret);
  return s;
}

// The fake worker behind a shell that first writes the secret to stderr (as a
// candidate printing it would), then becomes the worker.
std::vector<std::string> leaking_worker() {
  return {"/bin/sh", "-c", "echo \"startup: key " + kSecret + "\" >&2; exec \"$0\"",
          ::hiera::testing::fake_worker_bin()};
}

WorkerPoolOptions pool_options() {
  WorkerPoolOptions options;
  options.commands = {leaking_worker()};
  options.handshake_timeout = kLong;
  options.max_requeues = 0;  // one run, one message
  options.secrets = secrets();
  return options;
}

TEST(RedactedJson, EveryStringAndKeyIsRedacted) {
  json value = {{"message", "KeyError: " + kSecret},
                {"list", {kSecret + kSecret, 1, nullptr, json{{"deep", "x" + kSecret}}}},
                {"sizes", {{kSecret, 3}}}};
  redact_strings(value, secrets());
  EXPECT_EQ(value, (json{{"message", "KeyError: " + kRedacted},
                         {"list", {kRedacted + kRedacted, 1, nullptr, json{{"deep", "x" + kRedacted}}}},
                         {"sizes", {{kRedacted, 3}}}}));
}

TEST(WorkerSecrets, AResultQuotingASecretComesOutRedacted) {
  WorkerPool pool(pool_options());
  EvaluationClient client(pool);
  const json reply = {{"verdict", "failed"},
                      {"failures", {{{"check", "runtime"}, {"message", "KeyError: '" + kSecret + "'"}}}},
                      {"trials", {{{"seed", 1}, {"distribution", "uniform " + kSecret}}}}};
  EvaluateOptions options;
  options.timeout = kLong;
  const Evaluation e = client.evaluate(json{{"reply", reply}}, options);
  EXPECT_FALSE(e.job_failure);
  ASSERT_EQ(e.failures.size(), 1u);
  EXPECT_EQ(e.failures[0].check, "runtime");
  EXPECT_EQ(e.failures[0].message, "KeyError: '" + kRedacted + "'");
  ASSERT_EQ(e.trials.size(), 1u);
  EXPECT_EQ(e.trials[0].distribution, "uniform " + kRedacted);
}

TEST(WorkerSecrets, AFailureMessageAndStderrTailComeOutRedacted) {
  WorkerPool pool(pool_options());
  EvaluationClient client(pool);
  EvaluateOptions options;
  options.timeout = kLong;
  const Evaluation e = client.evaluate(json{{"behave", "die"}}, options);
  ASSERT_TRUE(e.job_failure);
  EXPECT_EQ(e.job_failure->message, "worker died (exit status 1) during evaluate: startup: key " + kRedacted +
                                        "\nfake worker: dying on request during evaluate");
  EXPECT_EQ(e.job_failure->stderr_tail,
            "startup: key " + kRedacted + "\nfake worker: dying on request during evaluate\n");
  ASSERT_EQ(e.failures.size(), 1u);
  EXPECT_EQ(e.failures[0].message, e.job_failure->message);
}

TEST(WorkerSecrets, AWorkerStartsWithoutTheSecretsInItsEnvironment) {
  ::setenv(kName.c_str(), kSecret.c_str(), 1);
  ::setenv("HIERA_TEST_VISIBLE", "yes", 1);
  WorkerConfig config;
  config.command = {"/bin/sh", "-c", "env | grep ^HIERA_TEST_ | sort >&2; exec \"$0\"",
                    ::hiera::testing::fake_worker_bin()};
  config.handshake_timeout = kLong;
  config.secrets.add_from_environment(kName);
  WorkerProcess worker(config);
  const auto failure = worker.start();
  ::unsetenv(kName.c_str());
  ::unsetenv("HIERA_TEST_VISIBLE");
  ASSERT_FALSE(failure) << failure->message;
  // The shell wrote before the worker answered hello, but on another pipe: wait for it.
  const auto deadline = std::chrono::steady_clock::now() + kLong;
  while (worker.stderr_tail().empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(worker.stderr_tail(), "HIERA_TEST_VISIBLE=yes\n");
}

TEST(WorkerSecrets, ChildProcessesLeaveOutTheNamedVariables) {
  ::setenv("HIERA_TEST_REMOVED", "secret-value-1234", 1);
  ::setenv("HIERA_TEST_KEPT", "kept", 1);
  SpawnOptions options;
  options.remove_env = {"HIERA_TEST_REMOVED", "HIERA_TEST_NEVER_SET"};
  const auto run = run_to_completion({"/usr/bin/env"}, "", 10s, options);
  ::unsetenv("HIERA_TEST_REMOVED");
  ::unsetenv("HIERA_TEST_KEPT");
  EXPECT_EQ(run.status.code, 0);
  EXPECT_THAT(run.out, HasSubstr("HIERA_TEST_KEPT=kept\n"));
  EXPECT_THAT(run.out, Not(HasSubstr("HIERA_TEST_REMOVED")));
  EXPECT_THAT(run.out, Not(HasSubstr("secret-value-1234")));
}

}  // namespace
}  // namespace hiera::engine::eval
