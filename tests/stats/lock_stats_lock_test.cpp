// Statistics recorded by real locks: exact counts for a scripted contended acquisition, and the
// same lock sizes with statistics on as off.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/spinwise.hpp"
#include "stats_test_util.hpp"

namespace sw = spinwise;
using spinwise_test::await_asleep;
using spinwise_test::contend_once;
using spinwise_test::flag_relaxer;
using spinwise_test::recorded_since;
using spinwise_test::this_tid;

namespace {

SPINWISE_TEST_STATS_CLASS(ttas_class, "test.ttas");
SPINWISE_TEST_STATS_CLASS(hybrid_class, "test.hybrid");
struct ttas_tag;
struct hybrid_tag;

}  // namespace

// Statistics off and on: the same bytes per lock (an engine embeds thousands of them).
static_assert(sizeof(sw::tas_mutex_t<sw::exp_backoff_policy<>, sw::class_stats<ttas_class>>) ==
              sizeof(sw::tas_mutex));
static_assert(sizeof(sw::ttas_mutex_t<sw::time_policy<>, sw::class_stats<ttas_class>>) ==
              sizeof(sw::ttas_mutex));
static_assert(sizeof(sw::ticket_mutex_t<sw::no_backoff_policy<>, sw::class_stats<ttas_class>>) ==
              sizeof(sw::ticket_mutex));
static_assert(sizeof(sw::mcs_mutex_t<sw::no_backoff_policy<>, sw::class_stats<ttas_class>>) ==
              sizeof(sw::mcs_mutex));
static_assert(sizeof(sw::hybrid_mutex_t<sw::time_policy<>, sw::class_stats<ttas_class>>) ==
              sizeof(sw::hybrid_mutex));

TEST(LockStatsOnLocks, TtasCountsOneScriptedContendedAcquisition) {
  using policy = sw::innodb_policy<ttas_tag, flag_relaxer>;
  ASSERT_TRUE(policy::set_spin_wait_delay(4).ok());
  using lock_t = sw::ttas_mutex_t<policy, sw::class_stats<ttas_class>>;
  lock_t mu;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  for (int i = 0; i < 10; ++i) {
    std::lock_guard<lock_t> g(mu);  // 10 uncontended
  }
  mu.lock();  // 11
  flag_relaxer::issued = 0;
  contend_once(
      [&] {
        mu.lock();  // 12: contended
        mu.unlock();
      },
      [&] { mu.unlock(); });
  const sw::lock_class_stats c = recorded_since(before, "test.ttas");
  EXPECT_EQ(c.totals.acquisitions, 12u);
  EXPECT_EQ(c.totals.contended, 1u);
  EXPECT_GE(c.totals.rounds, 1u);
  EXPECT_EQ(c.totals.relaxes, flag_relaxer::issued.load());
  EXPECT_EQ(c.totals.parks, 0u);  // a spin lock never parks
  std::uint64_t in_histogram = 0;
  for (std::uint64_t b : c.totals.histogram) in_histogram += b;
  EXPECT_EQ(in_histogram, 1u);
  policy::reset();
}

TEST(LockStatsOnLocks, HybridCountsAParkedWaiter) {
  using policy = sw::time_policy<hybrid_tag>;
  ASSERT_TRUE(policy::set_spin_loops(0).ok());  // no spinning: yield, then park
  using lock_t = sw::hybrid_mutex_t<policy, sw::class_stats<hybrid_class>>;
  lock_t mu;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  mu.lock();
  std::atomic<pid_t> tid{0};
  std::thread waiter([&] {
    tid = this_tid();
    mu.lock();
    mu.unlock();
  });
  const bool saw_park = await_asleep(tid);  // asleep in the futex; false where /proc cannot tell
  mu.unlock();
  waiter.join();
  const sw::lock_class_stats c = recorded_since(before, "test.hybrid");
  EXPECT_EQ(c.totals.acquisitions, 2u);
  EXPECT_EQ(c.totals.contended, 1u);
  EXPECT_EQ(c.totals.rounds, 0u);
  EXPECT_GE(c.totals.yields, 1u);
  if (saw_park) {
    EXPECT_GE(c.totals.parks, 1u);
  }
  policy::reset();
}
