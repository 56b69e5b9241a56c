// DocumentScheduler on its own: a loop thread, a counting build, and the
// guarantees the server relies on (coalescing, commits only for the newest
// snapshot, readers answered at the build, the deadline or the supersession).
#include "server/documents/document_scheduler.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

namespace hiera::server {
namespace {

using namespace std::chrono_literals;
using Snapshot = DocumentStore::Snapshot;

Snapshot doc(const std::string& uri, std::int64_t version) {
  return std::make_shared<const TextDocument>(uri, "cuda-cpp", version, "v" + std::to_string(version));
}

class DocumentSchedulerTest : public ::testing::Test {
 protected:
  boost::asio::io_context loop;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{boost::asio::make_work_guard(loop)};
  std::thread thread;
  std::unique_ptr<DocumentScheduler> scheduler;

  std::mutex mutex;
  std::vector<std::int64_t> built;      // versions the build ran for
  std::vector<std::int64_t> committed;  // versions whose commit ran (on the loop)
  std::chrono::milliseconds build_time{0};

  void start(std::chrono::milliseconds debounce) {
    scheduler = std::make_unique<DocumentScheduler>(
        loop,
        [this](const Snapshot& snapshot, const engine::CancellationToken&) -> DocumentScheduler::Commit {
          {
            std::lock_guard lock(mutex);
            built.push_back(snapshot->version());
          }
          std::this_thread::sleep_for(build_time);
          return [this, version = snapshot->version()] {
            std::lock_guard lock(mutex);
            committed.push_back(version);
          };
        },
        DocumentScheduler::Options{debounce, 1});
    thread = std::thread([this] { loop.run(); });
  }
  // Runs `work` on the loop and waits for it.
  void on_loop(const std::function<void()>& work) {
    std::promise<void> done;
    boost::asio::post(loop, [&] {
      work();
      done.set_value();
    });
    done.get_future().wait();
  }
  bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard lock(mutex);
        if (condition()) return true;
      }
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }
  void TearDown() override {
    if (scheduler) on_loop([this] { scheduler->stop(); });
    if (scheduler) scheduler->join();
    guard.reset();
    if (thread.joinable()) thread.join();
  }
};

TEST_F(DocumentSchedulerTest, AStormOfUpdatesBuildsFewTimesAndCommitsOnlyTheLast) {
  start(50ms);
  build_time = 5ms;
  constexpr int kEdits = 200;
  for (int v = 1; v <= kEdits; ++v) {
    on_loop([&, v] { scheduler->update(doc("file:///a.cu", v)); });
    if (v % 20 == 0) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(wait_until([&] { return !committed.empty() && committed.back() == kEdits; }));
  std::this_thread::sleep_for(150ms);  // nothing else comes
  std::lock_guard lock(mutex);
  EXPECT_EQ(committed, (std::vector<std::int64_t>{kEdits}));
  EXPECT_LT(built.size(), static_cast<std::size_t>(kEdits));
  EXPECT_EQ(scheduler->stats().commits, 1u);
  EXPECT_EQ(scheduler->stats().updates, static_cast<std::uint64_t>(kEdits));
}

TEST_F(DocumentSchedulerTest, ASupersededRunningBuildIsNotCommitted) {
  start(0ms);
  build_time = 100ms;
  on_loop([&] { scheduler->update(doc("file:///a.cu", 1)); });
  ASSERT_TRUE(wait_until([&] { return built.size() == 1; }));  // version 1 is running
  on_loop([&] { scheduler->update(doc("file:///a.cu", 2)); });
  ASSERT_TRUE(wait_until([&] { return !committed.empty(); }));
  std::this_thread::sleep_for(50ms);
  std::lock_guard lock(mutex);
  EXPECT_EQ(built, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(committed, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(scheduler->stats().discarded, 1u);
}

TEST_F(DocumentSchedulerTest, AReaderStartsThePendingBuildAndHearsWhenItIsCommitted) {
  start(10s);  // the debounce alone would never start it during the test
  const auto v1 = doc("file:///a.cu", 1);
  std::promise<bool> ready;
  on_loop([&] {
    scheduler->update(v1);
    scheduler->when_built(v1, std::nullopt, [&](bool current) { ready.set_value(current); });
  });
  auto future = ready.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(future.get());
  std::lock_guard lock(mutex);
  EXPECT_EQ(committed, (std::vector<std::int64_t>{1}));
}

TEST_F(DocumentSchedulerTest, AReaderIsAnsweredAtItsDeadlineOrWhenSuperseded) {
  start(0ms);
  build_time = 300ms;
  const auto v1 = doc("file:///a.cu", 1);
  std::promise<bool> deadline;
  const auto asked = std::chrono::steady_clock::now();
  on_loop([&] {
    scheduler->update(v1);
    scheduler->when_built(v1, 20ms, [&](bool current) { deadline.set_value(current); });
  });
  auto at_deadline = deadline.get_future();
  ASSERT_EQ(at_deadline.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(at_deadline.get());
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 250ms);  // not the build's 300 ms

  const auto v2 = doc("file:///a.cu", 2);
  std::promise<bool> superseded;
  on_loop([&] {
    scheduler->update(v2);
    scheduler->when_built(v2, std::nullopt, [&](bool current) { superseded.set_value(current); });
    scheduler->update(doc("file:///a.cu", 3));  // v2 is superseded before it is built
  });
  auto answered = superseded.get_future();
  ASSERT_EQ(answered.wait_for(1s), std::future_status::ready);
  EXPECT_FALSE(answered.get());
  ASSERT_TRUE(wait_until([&] { return !committed.empty(); }));
  std::lock_guard lock(mutex);
  EXPECT_EQ(committed, (std::vector<std::int64_t>{3}));
}

TEST_F(DocumentSchedulerTest, CloseDropsPendingWorkAndItsCommit) {
  start(0ms);
  build_time = 100ms;
  on_loop([&] { scheduler->update(doc("file:///a.cu", 1)); });
  ASSERT_TRUE(wait_until([&] { return built.size() == 1; }));
  on_loop([&] { scheduler->close("file:///a.cu"); });
  std::this_thread::sleep_for(200ms);
  std::lock_guard lock(mutex);
  EXPECT_TRUE(committed.empty());
  EXPECT_EQ(scheduler->stats().discarded, 1u);
}

}  // namespace
}  // namespace hiera::server
