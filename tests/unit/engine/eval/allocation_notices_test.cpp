// The channel that carries worker allocations' news to front ends: every
// observer hears every notice in order, a pending allocation is remembered
// until it runs or ends, and a subscription ended is never called again.
#include "engine/eval/allocation_notices.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hiera::engine::eval {
namespace {

using ::testing::ElementsAre;
using Kind = AllocationNoticeKind;

const AllocationNotice kSubmitted{Kind::Info, "Slurm job 1", "submitted Slurm job 1"};
const AllocationNotice kPending{Kind::Waiting, "Slurm job 1", "Slurm job 1 is pending (Resources)"};
const AllocationNotice kPriority{Kind::Waiting, "Slurm job 1", "Slurm job 1 is pending (Priority)"};
const AllocationNotice kRunning{Kind::Running, "Slurm job 1", "Slurm job 1 is running"};
const AllocationNotice kOtherPending{Kind::Waiting, "Slurm job 2", "Slurm job 2 is pending (Resources)"};
const AllocationNotice kOtherEnded{Kind::Ended, "Slurm job 2", "Slurm job 2 has ended (CANCELLED)"};

TEST(AllocationNoticesTest, EveryObserverHearsEveryNoticeInOrder) {
  AllocationNotices notices;
  std::vector<std::string> first, second;
  auto a = notices.subscribe([&](const AllocationNotice& n) { first.push_back(n.line); });
  auto b = notices.subscribe([&](const AllocationNotice& n) { second.push_back(n.line); });
  const auto post = notices.poster();  // what an allocation is given
  post(kSubmitted);
  post(kPending);
  post(kRunning);
  EXPECT_THAT(first, ElementsAre("submitted Slurm job 1", "Slurm job 1 is pending (Resources)", "Slurm job 1 is running"));
  EXPECT_EQ(second, first);
}

TEST(AllocationNoticesTest, APendingAllocationIsAStateUntilItRunsOrEnds) {
  AllocationNotices notices;
  EXPECT_EQ(notices.waiting(), std::nullopt);
  notices.post(kSubmitted);
  EXPECT_EQ(notices.waiting(), std::nullopt);
  notices.post(kPending);
  EXPECT_EQ(notices.waiting(), "Slurm job 1 is pending (Resources)");
  notices.post(kPriority);  // the same job, a new reason: replaces the line
  EXPECT_EQ(notices.waiting(), "Slurm job 1 is pending (Priority)");
  notices.post(kOtherPending);
  EXPECT_EQ(notices.waiting(), "Slurm job 2 is pending (Resources)");
  notices.post(kOtherEnded);
  EXPECT_EQ(notices.waiting(), "Slurm job 1 is pending (Priority)");  // job 1 still waits
  notices.post(kRunning);
  EXPECT_EQ(notices.waiting(), std::nullopt);
}

TEST(AllocationNoticesTest, ALateObserverFirstHearsWhatWaitsNow) {
  AllocationNotices notices;
  notices.post(kSubmitted);
  notices.post(kPending);
  notices.post(kOtherPending);
  std::vector<AllocationNotice> heard;
  auto subscription = notices.subscribe([&](const AllocationNotice& n) { heard.push_back(n); });
  EXPECT_THAT(heard, ElementsAre(kPending, kOtherPending));
  notices.post(kRunning);
  EXPECT_THAT(heard, ElementsAre(kPending, kOtherPending, kRunning));
}

TEST(AllocationNoticesTest, AnEndedSubscriptionIsNeverCalledAgain) {
  AllocationNotices notices;
  int calls = 0;
  auto subscription = notices.subscribe([&](const AllocationNotice&) { ++calls; });
  notices.post(kSubmitted);
  AllocationNotices::Subscription moved = std::move(subscription);
  notices.post(kSubmitted);
  EXPECT_EQ(calls, 2);
  moved.reset();
  notices.post(kSubmitted);
  {
    auto scoped = notices.subscribe([&](const AllocationNotice&) { ++calls; });
  }
  notices.post(kPending);
  EXPECT_EQ(calls, 2);
}

TEST(AllocationNoticesTest, AThrowingObserverKeepsTheNoticeFromNoOneElse) {
  AllocationNotices notices;
  std::vector<std::string> heard;
  auto failing = notices.subscribe([](const AllocationNotice&) { throw std::runtime_error("the client is gone"); });
  auto working = notices.subscribe([&](const AllocationNotice& n) { heard.push_back(n.line); });
  EXPECT_NO_THROW(notices.post(kPending));
  EXPECT_THAT(heard, ElementsAre("Slurm job 1 is pending (Resources)"));
  EXPECT_EQ(notices.waiting(), "Slurm job 1 is pending (Resources)");
}

TEST(AllocationNoticesTest, CopiesShareOneChannel) {
  AllocationNotices notices;
  const AllocationNotices copy = notices;
  std::vector<std::string> heard;
  auto subscription = notices.subscribe([&](const AllocationNotice& n) { heard.push_back(n.line); });
  copy.post(kPending);
  EXPECT_THAT(heard, ElementsAre("Slurm job 1 is pending (Resources)"));
  EXPECT_EQ(notices.waiting(), copy.waiting());
}

}  // namespace
}  // namespace hiera::engine::eval
