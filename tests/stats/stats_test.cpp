// Wait statistics: exact counts, no lost updates, diff and reset semantics, counter wrap.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "spinwise/lock_stats.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "stats_test_util.hpp"

namespace sw = spinwise;
using spinwise_test::find_class;

namespace {

double scale() {
  const char* s = std::getenv("SPINWISE_TEST_SCALE");
  return s ? std::atof(s) : 1.0;
}

struct exact_class {
  static constexpr std::string_view name = "test.exact";
};
struct concurrent_class {
  static constexpr std::string_view name = "test.concurrent";
};
struct wrap_class {
  static constexpr std::string_view name = "test.wrap";
};
struct reset_class {
  static constexpr std::string_view name = "test.reset";
};
struct report_class {
  static constexpr std::string_view name = "test.report \"quoted\"";
};

}  // namespace

static_assert(std::is_empty_v<sw::no_stats>, "statistics off must cost no storage");

TEST(WaitHistogram, BucketsAreLog2) {
  EXPECT_EQ(sw::wait_histogram_bucket(0), 0u);
  EXPECT_EQ(sw::wait_histogram_bucket(1), 0u);
  EXPECT_EQ(sw::wait_histogram_bucket(2), 1u);
  EXPECT_EQ(sw::wait_histogram_bucket(3), 1u);
  EXPECT_EQ(sw::wait_histogram_bucket(4), 2u);
  EXPECT_EQ(sw::wait_histogram_bucket(1023), 9u);
  EXPECT_EQ(sw::wait_histogram_bucket(1024), 10u);
  EXPECT_EQ(sw::wait_histogram_bucket(~std::uint64_t{0}), sw::kWaitHistogramBuckets - 1);
}

// A scripted workload whose every count is known.
TEST(LockStats, ExactCountsFromAScriptedWorkload) {
  using S = sw::class_stats<exact_class>;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  for (int i = 0; i < 100; ++i) S::on_acquire();
  for (int i = 0; i < 7; ++i) {
    sw::wait_record w;
    w.rounds = 3;
    w.relaxes = 150;
    w.spin_ticks = 1000;
    w.yields = i % 2;
    w.parks = i == 6 ? 1 : 0;
    w.wait_ticks = 4096u << i;
    S::on_contended(w);
  }
  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const sw::lock_class_stats* c = find_class(d, "test.exact");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.acquisitions, 100u);
  EXPECT_EQ(c->totals.contended, 7u);
  EXPECT_EQ(c->totals.rounds, 21u);
  EXPECT_EQ(c->totals.relaxes, 1050u);
  EXPECT_EQ(c->totals.spin_ticks, 7000u);
  EXPECT_EQ(c->totals.yields, 3u);
  EXPECT_EQ(c->totals.parks, 1u);
  EXPECT_EQ(c->totals.wait_ticks, 4096u * 127u);
  EXPECT_EQ(c->totals.max_wait_ticks, 4096u << 6);
  for (std::size_t b = 0; b < sw::kWaitHistogramBuckets; ++b) {
    EXPECT_EQ(c->totals.histogram[b], (b >= 12 && b <= 18) ? 1u : 0u) << "bucket " << b;
  }
  const sw::lock_class_summary m = sw::summarize(d, *c);
  EXPECT_DOUBLE_EQ(m.spin_rounds_per_wait, 3.0);
  EXPECT_DOUBLE_EQ(m.contended_share, 0.07);
}

// Sharded counters: N threads record concurrently, including threads that exit before the
// snapshot (their shards are folded into the class), and nothing is lost.
TEST(LockStats, NoLostUpdatesUnderConcurrentRecording) {
  using S = sw::class_stats<concurrent_class>;
  const int threads = 4;
  const int per_thread = static_cast<int>(20000 * scale()) + 100;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  std::atomic<int> done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        S::on_acquire();
        if (i % 10 == 0) {
          sw::wait_record w;
          w.rounds = 2;
          w.wait_ticks = 5;
          S::on_contended(w);
        }
      }
      done.fetch_add(1);
    });
  }
  // A snapshot taken while threads record never sees more than was recorded.
  const sw::stats_snapshot mid = sw::diff_stats(before, sw::take_stats_snapshot());
  if (const auto* c = find_class(mid, "test.concurrent")) {
    EXPECT_LE(c->totals.acquisitions, static_cast<std::uint64_t>(threads) * per_thread);
  }
  for (auto& th : pool) th.join();
  ASSERT_EQ(done.load(), threads);
  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const sw::lock_class_stats* c = find_class(d, "test.concurrent");
  ASSERT_NE(c, nullptr);
  const std::uint64_t contended_per_thread = (per_thread + 9) / 10;
  EXPECT_EQ(c->totals.acquisitions, static_cast<std::uint64_t>(threads) * per_thread);
  EXPECT_EQ(c->totals.contended, threads * contended_per_thread);
  EXPECT_EQ(c->totals.rounds, 2 * threads * contended_per_thread);
  EXPECT_EQ(c->totals.histogram[2], threads * contended_per_thread);
}

// Guards against MySQL bug #79703: a counter near its limit wraps, and a diff across the wrap
// is still the true difference; derived ratios never go negative.
TEST(LockStats, DiffAcrossACounterWrapIsExact) {
  using S = sw::class_stats<wrap_class>;
  sw::wait_record big;
  big.rounds = ~std::uint64_t{0} - 10;  // 11 below the wrap
  big.wait_ticks = 1;
  S::on_contended(big);
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  sw::wait_record w;
  w.rounds = 25;  // crosses 2^64
  w.wait_ticks = 1;
  S::on_contended(w);
  const sw::stats_snapshot after = sw::take_stats_snapshot();
  const sw::lock_class_stats* raw = find_class(after, "test.wrap");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->totals.rounds, 14u);  // wrapped
  const sw::stats_snapshot d = sw::diff_stats(before, after);
  const sw::lock_class_stats* c = find_class(d, "test.wrap");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.rounds, 25u);
  EXPECT_EQ(c->totals.contended, 1u);
  EXPECT_GE(sw::summarize(after, *raw).spin_rounds_per_wait, 0.0);
}

TEST(LockStats, ResetCountsFromZeroAgain) {
  using S = sw::class_stats<reset_class>;
  sw::wait_record w;
  w.wait_ticks = 1u << 20;
  for (int i = 0; i < 5; ++i) S::on_acquire();
  S::on_contended(w);
  sw::reset_stats();
  const sw::stats_snapshot z = sw::take_stats_snapshot();
  const sw::lock_class_stats* zero = find_class(z, "test.reset");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->totals.acquisitions, 0u);
  EXPECT_EQ(zero->totals.contended, 0u);
  EXPECT_EQ(zero->totals.max_wait_ticks, 0u);
  S::on_acquire();
  w.wait_ticks = 8;
  S::on_contended(w);
  const sw::stats_snapshot s = sw::take_stats_snapshot();
  const sw::lock_class_stats* c = find_class(s, "test.reset");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.acquisitions, 1u);
  EXPECT_EQ(c->totals.contended, 1u);
  EXPECT_EQ(c->totals.max_wait_ticks, 8u);
}

TEST(LockStats, TextAndJsonReports) {
  using S = sw::class_stats<report_class>;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  S::on_acquire();
  S::on_acquire();
  sw::wait_record w;
  w.rounds = 4;
  w.parks = 1;
  w.spin_ticks = 100;
  w.wait_ticks = 300;
  S::on_contended(w);
  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const std::string text = sw::format_stats_text(d);
  EXPECT_NE(text.find("SEMAPHORES"), std::string::npos);
  EXPECT_NE(text.find("test.report \"quoted\" spin waits 1, rounds 4, OS waits 1"), std::string::npos) << text;
  EXPECT_NE(text.find("Spin rounds per wait: 4.00"), std::string::npos) << text;
  const std::string json = sw::format_stats_json(d);
  EXPECT_EQ(json.rfind("{\"schema\":\"spinwise.lock_stats\",\"version\":1", 0), 0u) << json;
  EXPECT_NE(json.find("\"name\":\"test.report \\\"quoted\\\"\",\"acquisitions\":2,\"contended\":1,\"spin_rounds\":4"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"os_waits\":1"), std::string::npos);
}

namespace {

struct clip_class {
  static constexpr std::string_view name = "test.clip";
};

// A Relax that says each relax costs 10 ns but is descheduled for 5 ms whenever it runs: what a
// spinning thread preempted in the middle of its delay looks like to the counter.
struct preempted_relaxer {
  static constexpr double relax_ns() noexcept { return 10.0; }
  static void relax_n(std::uint32_t) noexcept { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }
};

struct preempted_waiter {
  using relax = preempted_relaxer;
  void snooze() noexcept {
    relax::relax_n(100);
    relaxes_ += 100;
    ++rounds_;
  }
  std::uint32_t rounds() const noexcept { return rounds_; }
  std::uint64_t relaxes() const noexcept { return relaxes_; }

 private:
  std::uint64_t relaxes_ = 0;
  std::uint32_t rounds_ = 0;
};

}  // namespace

TEST(LockStats, PreemptedSnoozeCountsAtItsRelaxCost) {
  using meter = sw::detail::wait_meter<sw::class_stats<clip_class>>;
  const double hz = static_cast<double>(sw::counter_frequency());
  meter m;
  preempted_waiter w;
  m.snooze(w);
  m.snooze(w);
  // Two snoozes of 100 relaxes x 10 ns: 2 us of spinning, not the 10 ms spent asleep.
  const auto expected = static_cast<std::uint64_t>(100 * 10e-9 * hz);
  EXPECT_NEAR(static_cast<double>(m.r.spin_ticks), 2.0 * static_cast<double>(expected), 2.0);
  EXPECT_LT(static_cast<double>(m.r.spin_ticks), 5e-3 * hz);
}

TEST(LockStats, ClipKeepsASnoozeWithinTwiceItsCostPlus50us) {
  using meter = sw::detail::wait_meter<sw::class_stats<clip_class>>;
  const double hz = 1e9;  // 1 tick = 1 ns
  // 1000 relaxes of 2 ticks: expected 2000 ticks, limit 2 x 2000 + 50000.
  EXPECT_EQ(meter::clip_preempted(2000, 1000, 2.0, hz), 2000u);    // as expected
  EXPECT_EQ(meter::clip_preempted(54000, 1000, 2.0, hz), 54000u);  // slow, at the limit: measured
  EXPECT_EQ(meter::clip_preempted(54001, 1000, 2.0, hz), 2000u);   // beyond: preempted, clipped
  EXPECT_EQ(meter::clip_preempted(10'000'000, 0, 2.0, hz), 0u);    // a zero-length round asleep
}
