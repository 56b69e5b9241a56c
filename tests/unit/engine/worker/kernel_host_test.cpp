// The worker's side of a kernel host, with real child processes and no GPU:
// the host's environment is reduced to the allowlist (a secret is absent),
// `hiera-worker --kernel-host` comes up in its sandbox and says "ready" with
// each protection and, without a GPU, why CUDA did not open; a host that does
// not answer is killed at the request's wall-time limit and the request fails
// as a timeout; a host that dies is reported with how it ended.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "engine/worker/kernel_host.h"
#include "engine/worker/kernel_host_sandbox.h"
#include "thrown_message.h"
#include "build_paths.h"

namespace {

using namespace hiera::engine::worker;
using hiera::testing::thrown_message;

class KernelHostTest : public ::testing::Test {
 protected:
  // As in the worker: a host that exited must fail a write, not end the test binary.
  void SetUp() override { previous_ = std::signal(SIGPIPE, SIG_IGN); }
  void TearDown() override { std::signal(SIGPIPE, previous_); }

  static kernel_host::LaunchRequest one_launch() {
    kernel_host::LaunchRequest request;
    request.args.push_back({std::nullopt, std::string(4, '\0')});
    return request;
  }

 private:
  void (*previous_)(int) = nullptr;
};

TEST_F(KernelHostTest, TheEnvironmentKeepsOnlyTheAllowlist) {
  EXPECT_TRUE(kept_in_kernel_host_env("CUDA_VISIBLE_DEVICES"));
  EXPECT_TRUE(kept_in_kernel_host_env("PATH"));
  EXPECT_TRUE(kept_in_kernel_host_env("LC_ALL"));
  EXPECT_FALSE(kept_in_kernel_host_env("HIERA_TEST_API_KEY"));
  EXPECT_FALSE(kept_in_kernel_host_env("ANTHROPIC_API_KEY"));
  EXPECT_FALSE(kept_in_kernel_host_env("HOME"));
  const char* environment[] = {"PATH=/usr/bin", "CUDA_VISIBLE_DEVICES=1", "HIERA_TEST_API_KEY=sk-secret", "HOME=/root",
                               "SSH_AUTH_SOCK=/tmp/agent", nullptr};
  const auto options = kernel_host_spawn_options(environment, "/tmp/scratch");
  EXPECT_EQ(options.remove_env, (std::vector<std::string>{"HIERA_TEST_API_KEY", "HOME", "SSH_AUTH_SOCK"}));
  EXPECT_EQ(options.extra_env.at("HOME"), "/tmp/scratch");
  EXPECT_EQ(options.extra_env.at("TMPDIR"), "/tmp/scratch");
  EXPECT_TRUE(options.own_process_group);
  EXPECT_TRUE(options.die_with_parent);
}

TEST_F(KernelHostTest, ASecretVariableIsAbsentInTheHostProcess) {
  ::setenv("HIERA_TEST_API_KEY", "sk-hiera-test-secret-value", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  std::string env;
  {
    KernelHost host({"/bin/sh", "-c", "env > \"$HOME/env.tmp\" && mv \"$HOME/env.tmp\" \"$HOME/env\" && exec sleep 30"});
    const auto file = host.scratch() / "env";
    for (int i = 0; i < 500 && !std::filesystem::exists(file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    env = text.str();
  }
  ::unsetenv("HIERA_TEST_API_KEY");
  EXPECT_EQ(env.find("sk-hiera-test-secret-value"), std::string::npos) << env;
  EXPECT_EQ(env.find("HIERA_TEST_API_KEY"), std::string::npos) << env;
  EXPECT_NE(env.find("CUDA_VISIBLE_DEVICES=0"), std::string::npos) << env;
  EXPECT_NE(env.find("HOME=" + std::filesystem::temp_directory_path().string()), std::string::npos) << env;
}

TEST_F(KernelHostTest, TheRealHostSaysReadyWithItsProtections) {
  KernelHost host({::hiera::testing::worker_bin(), "--kernel-host", "--parent", std::to_string(::getpid())});
  const auto& ready = host.ready(std::chrono::seconds(60));
  EXPECT_GT(ready.pid, 0);
  for (const char* name : {"dies_with_parent", "no_network", "read_only_user_files", "hidden_secret_places", "resource_limits",
                           "unprivileged_user", "syscall_filter"}) {
    ASSERT_TRUE(ready.protections.count(name)) << name;
    EXPECT_FALSE(ready.protections.at(name).empty()) << name;
  }
  EXPECT_EQ(ready.protections.at("dies_with_parent"), "in force");
  // scripts/setup installs libseccomp's header, and libseccomp.so.2 comes with Debian's apt.
  EXPECT_EQ(ready.protections.at("syscall_filter"),
            std::to_string(hiera::engine::worker::kernel_host::denied_syscalls().size()) +
                " system calls denied (mounts, namespaces, ptrace, the clock, the kernel's modules and keyrings, io_uring)");
  if (::getuid() == 0) {
    EXPECT_EQ(ready.protections.at("unprivileged_user").rfind("runs as nobody (uid ", 0), 0u);
  }
  if (!ready.cuda_error) GTEST_SKIP() << "this machine has a GPU: the no-GPU replies are not seen here";
  // Without a GPU every request is refused with the reason, and the host stays up.
  const std::string error =
      thrown_message<KernelHostError>([&] { host.load("cubin", "kernel", std::chrono::milliseconds(5000)); });
  EXPECT_EQ(error, "loading the candidate in the kernel host: the kernel host has no GPU: " + *ready.cuda_error);
  EXPECT_TRUE(host.usable());
}

TEST_F(KernelHostTest, AHostThatDoesNotAnswerIsKilledAtTheLimitAndTheRequestTimesOut) {
  KernelHost host({"/bin/sleep", "60"});
  const auto started = std::chrono::steady_clock::now();
  KernelHostError::Kind kind = KernelHostError::Kind::Runtime;
  std::string message;
  try {
    host.launch(one_launch(), std::chrono::milliseconds(100), "running the candidate (first run)");
  } catch (const KernelHostError& e) {
    kind = e.kind();
    message = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(kind, KernelHostError::Kind::Timeout);
  EXPECT_EQ(message, "running the candidate (first run): still running after 100 ms (the kernel host was killed)");
  EXPECT_LT(seconds, 10.0);
  EXPECT_FALSE(host.usable());
  // Later requests fail at once with the same reason; nothing waits on a dead host.
  EXPECT_EQ(thrown_message<KernelHostError>([&] { host.map({}, std::chrono::milliseconds(100)); }), message);
}

TEST_F(KernelHostTest, AHostThatIsNotReadyInTimeIsKilled) {
  KernelHost host({"/bin/sleep", "60"});
  EXPECT_EQ(thrown_message<KernelHostError>([&] { host.ready(std::chrono::milliseconds(100)); }),
            "the kernel host was not ready within 100 ms (killed)");
  EXPECT_FALSE(host.usable());
}

TEST_F(KernelHostTest, AHostThatDiesIsReportedWithHowItEnded) {
  KernelHost host({"/bin/sh", "-c", "exit 5"});
  EXPECT_EQ(thrown_message<KernelHostError>([&] { host.ready(std::chrono::seconds(10)); }),
            "the kernel host exited (exit status 5) while starting");
  KernelHost killed({"/bin/sh", "-c", "kill -9 $$"});
  EXPECT_EQ(thrown_message<KernelHostError>([&] { killed.launch(one_launch(), std::chrono::seconds(10), "running the candidate"); }),
            "the kernel host exited (signal 9 SIGKILL) while running the candidate");
}

TEST(KernelHostTiming, AReportLongerThanTheWorkersWallTimeIsImpossible) {
  EXPECT_FALSE(impossible_timing({0.5, 0.9}));
  EXPECT_FALSE(impossible_timing({1.05, 1.0}));  // within the tolerance: clocks of two kinds
  EXPECT_EQ(impossible_timing({5.0, 2.0}),
            std::optional<std::string>("the kernel host reported 5 ms for a timed run that took 2 ms from request to reply "
                                       "(measured by the worker): the report is impossible"));
}

TEST_F(KernelHostTest, ThePoolHandsOutTheSpareAndStartsTheNext) {
  int started = 0;
  KernelHostPool pool([&] {
    ++started;
    return std::make_unique<KernelHost>(std::vector<std::string>{"/bin/sleep", "60"});
  });
  auto first = pool.take();
  EXPECT_EQ(started, 2);  // the one handed out, and the spare
  auto second = pool.take();
  EXPECT_EQ(started, 3);  // the spare handed out, a new spare
  EXPECT_TRUE(second->usable());
  EXPECT_NE(first->scratch(), second->scratch());
  // Handing a host back does not wait for it to exit (these never do: sleep ignores the request).
  const auto handed_back = std::chrono::steady_clock::now();
  pool.give_back(std::move(first));
  pool.give_back(std::move(second));
  pool.give_back(pool.take());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - handed_back).count(), 1.0);
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
