// Per-mode counts, run-time switches, lock tracking and the stuck-wait watchdog, on real locks.
// Every contended wait here is made by construction: the test holds the lock and releases it
// only once the lock graph lists the waiter's tracked wait. No timing is asserted.
#include "spinwise/runtime/lock_watch.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/spinwise.hpp"
#include "stats_test_util.hpp"

namespace sw = spinwise;
using spinwise_test::find_class;
using spinwise_test::recorded_since;
using spinwise_test::this_tid;

namespace {

SPINWISE_TEST_STATS_CLASS(modes_class, "test.modes");
SPINWISE_TEST_STATS_CLASS(watch_class, "test.watch");
SPINWISE_TEST_STATS_CLASS(toggle_class, "test.toggle");
SPINWISE_TEST_STATS_CLASS(switch_class, "test.switch");
SPINWISE_TEST_STATS_CLASS(first_lock_class, "test.tsan_first_lock");
SPINWISE_TEST_STATS_CLASS(first_try_class, "test.tsan_first_try");
SPINWISE_TEST_STATS_CLASS(first_timed_class, "test.tsan_first_timed");
SPINWISE_TEST_STATS_CLASS(first_shared_class, "test.tsan_first_shared");
SPINWISE_TEST_STATS_CLASS(first_sx_class, "test.tsan_first_sx");
SPINWISE_TEST_STATS_CLASS(listed_class, "test.tsan_listed");

using modes_latch = sw::sx_lock::with_stats<modes_class>;
using watch_latch = sw::sx_lock::with_stats<watch_class>;
using toggle_mutex = sw::hybrid_mutex::with_stats<toggle_class>;
using switch_mutex = sw::hybrid_mutex::with_stats<switch_class>;
using listed_mutex = sw::hybrid_mutex::with_stats<listed_class>;

std::string site_text(const sw::lock_site& s) { return std::string(s.file) + ":" + std::to_string(s.line); }

// Waits (yielding, no time limit but the test's) until the lock graph lists a wait of thread
// `tid` on `lock`; returns it.
sw::tracked_lock await_tracked_wait(const std::atomic<pid_t>& tid, const void* lock) {
  for (;;) {
    const pid_t t = tid.load();
    if (t != 0) {
      for (const sw::tracked_lock& w : sw::take_lock_graph().waits) {
        if (w.tid == static_cast<std::uint64_t>(t) && w.lock == reinterpret_cast<std::uintptr_t>(lock))
          return w;
      }
    }
    std::this_thread::yield();
  }
}

// The holds the lock graph lists for `lock`.
std::vector<sw::tracked_lock> holds_of(const void* lock) {
  std::vector<sw::tracked_lock> out;
  for (const sw::tracked_lock& h : sw::take_lock_graph().holds) {
    if (h.lock == reinterpret_cast<std::uintptr_t>(lock)) out.push_back(h);
  }
  return out;
}

// Runs `take` (which takes and drops the latch) in a thread while the caller holds it in some
// mode, and calls `release` once that thread's wait is listed: one contended acquisition.
template <class Take, class Release>
sw::tracked_lock contend(const void* lock, Take take, Release release) {
  std::atomic<pid_t> tid{0};
  std::thread t([&] {
    tid = this_tid();
    take();
  });
  const sw::tracked_lock w = await_tracked_wait(tid, lock);
  release();
  t.join();
  return w;
}

// Takes the latch in mode m; drops it.
void take(modes_latch& l, sw::lock_mode m) {
  switch (m) {
    case sw::lock_mode::x:
      return l.lock();
    case sw::lock_mode::s:
      return l.lock_shared();
    case sw::lock_mode::sx:
      return l.lock_sx();
  }
}
void drop(modes_latch& l, sw::lock_mode m) {
  switch (m) {
    case sw::lock_mode::x:
      return l.unlock();
    case sw::lock_mode::s:
      return l.unlock_shared();
    case sw::lock_mode::sx:
      return l.unlock_sx();
  }
}

// A request in mode `want` behind the caller's hold in mode `held`: the wait the lock graph listed.
sw::tracked_lock wait_behind(modes_latch& l, sw::lock_mode held, sw::lock_mode want) {
  take(l, held);
  return contend(
      &l,
      [&] {
        take(l, want);
        drop(l, want);
      },
      [&] { drop(l, held); });
}

const sw::lock_stats_counts& mode_of(const sw::lock_class_stats& c, sw::lock_mode m) {
  return c.totals.mode(m);
}

}  // namespace

// InnoDB's RW-shared / RW-sx / RW-excl lines: each mode counts its own acquisitions and waits.
TEST(LockModes, ScriptedSxContentionCountsEachModeExactly) {
  sw::class_stats<modes_class>::set_tracking(true);  // only to see the waits begin
  modes_latch l;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  for (int i = 0; i < 3; ++i) {
    l.lock_shared();
    l.unlock_shared();
  }
  for (int i = 0; i < 2; ++i) {
    l.lock_sx();
    l.unlock_sx();
  }
  l.lock();
  l.unlock();
  // An S request behind X, an SX request behind X, an X request behind S.
  const sw::tracked_lock ws = wait_behind(l, sw::lock_mode::x, sw::lock_mode::s);
  const sw::tracked_lock wsx = wait_behind(l, sw::lock_mode::x, sw::lock_mode::sx);
  const sw::tracked_lock wx = wait_behind(l, sw::lock_mode::s, sw::lock_mode::x);
  sw::class_stats<modes_class>::set_tracking(false);
  EXPECT_EQ(ws.mode, sw::lock_mode::s);
  EXPECT_EQ(wsx.mode, sw::lock_mode::sx);
  EXPECT_EQ(wx.mode, sw::lock_mode::x);
  EXPECT_EQ(ws.lock_class, "test.modes");

  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const sw::lock_class_stats* c = find_class(d, "test.modes");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(mode_of(*c, sw::lock_mode::s).acquisitions, 3u + 1 + 1);  // 3, the waiter, the holder
  EXPECT_EQ(mode_of(*c, sw::lock_mode::sx).acquisitions, 2u + 1);     // 2, the waiter
  EXPECT_EQ(mode_of(*c, sw::lock_mode::x).acquisitions, 1u + 2 + 1);  // 1, two holders, the waiter
  for (sw::lock_mode m : {sw::lock_mode::s, sw::lock_mode::sx, sw::lock_mode::x}) {
    EXPECT_EQ(mode_of(*c, m).contended, 1u) << sw::lock_mode_key(m);
    EXPECT_LE(mode_of(*c, m).spin_won, 1u);
  }
  EXPECT_EQ(c->totals.acquisitions, 12u);
  EXPECT_EQ(c->totals.contended, 3u);
  // The class's counters are its modes' sums, for every counter.
  for (const sw::lock_stats_counter& k : sw::kLockStatsCounters) {
    std::uint64_t sum = 0;
    for (const sw::lock_stats_counts& m : c->totals.modes) sum += m.*k.total;
    EXPECT_EQ(c->totals.*k.total, sum) << k.key;
  }
  // The text report prints InnoDB's three lines for the latch.
  const std::string text = sw::format_stats_text(d);
  for (const char* line : {"RW-shared spin waits 1,", "RW-sx spin waits 1,", "RW-excl spin waits 1,"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(LockTracking, HoldsFollowUpgradeAndDowngradeAndVanishOnRelease) {
  sw::class_stats<modes_class>::set_tracking(true);
  modes_latch l;
  const sw::lock_site site = SPINWISE_SITE;
  l.lock_sx(site);
  std::vector<sw::tracked_lock> h = holds_of(&l);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].mode, sw::lock_mode::sx);
  EXPECT_EQ(h[0].site, site_text(site));
  EXPECT_EQ(h[0].tid, static_cast<std::uint64_t>(this_tid()));
  l.upgrade();
  h = holds_of(&l);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].mode, sw::lock_mode::x);
  l.downgrade();
  ASSERT_EQ(holds_of(&l).size(), 1u);
  EXPECT_EQ(holds_of(&l)[0].mode, sw::lock_mode::sx);
  l.unlock_sx();
  EXPECT_TRUE(holds_of(&l).empty());
  // Several S holds of one thread are listed and unlisted one by one.
  l.lock_shared(SPINWISE_SITE);
  l.lock_shared(SPINWISE_SITE);
  EXPECT_EQ(holds_of(&l).size(), 2u);
  l.unlock_shared();
  EXPECT_EQ(holds_of(&l).size(), 1u);
  l.unlock_shared();
  EXPECT_TRUE(holds_of(&l).empty());
  // An SX holder that takes S too: each release unlists its own mode.
  l.lock_sx(site);
  l.lock_shared(SPINWISE_SITE);
  l.unlock_sx();
  h = holds_of(&l);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].mode, sw::lock_mode::s) << "unlock_sx unlisted the S hold";
  l.unlock_shared();
  EXPECT_TRUE(holds_of(&l).empty());
  // Guards pass their site.
  {
    const sw::lock_site gs = SPINWISE_SITE;
    sw::sx_guard<modes_latch> g(l, gs);
    ASSERT_EQ(holds_of(&l).size(), 1u);
    EXPECT_EQ(holds_of(&l)[0].site, site_text(gs));
  }
  EXPECT_TRUE(holds_of(&l).empty());
  // A hold listed before tracking is switched off is unlisted by its release all the same.
  l.lock_shared(SPINWISE_SITE);
  sw::class_stats<modes_class>::set_tracking(false);
  EXPECT_EQ(holds_of(&l).size(), 1u);
  l.unlock_shared();
  EXPECT_TRUE(holds_of(&l).empty()) << "a hold outlived its release across the switch";
  // Off: nothing is listed.
  l.lock();
  EXPECT_TRUE(holds_of(&l).empty());
  l.unlock();
}

// Tracking switched on and off while threads lock: every acquisition counted, no hold left behind
// (under AddressSanitizer: nothing leaked either).
TEST(LockTracking, SwitchingAtRunTimeLosesAndLeaksNothing) {
  toggle_mutex mu;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  const int per_thread = spinwise_test::scaled(20000, 2000);
  std::atomic<bool> go{false};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  long counter = 0;  // guarded by mu
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < per_thread; ++i) {
        mu.lock(SPINWISE_SITE);
        ++counter;
        mu.unlock();
      }
      ++done;
    });
  }
  go = true;
  int flips = 0;
  int mine = 0;
  for (; done.load() < 2 || flips <= 1000; ++flips) {
    sw::class_stats<toggle_class>::set_tracking(flips % 2 == 0);
    mu.lock();  // the main thread's own holds, taken and released across switches
    ++counter;
    ++mine;
    if (flips % 3 == 0) sw::class_stats<toggle_class>::set_tracking(flips % 2 != 0);
    mu.unlock();
  }
  for (std::thread& t : threads) t.join();
  sw::class_stats<toggle_class>::set_tracking(false);
  EXPECT_EQ(counter, 2L * per_thread + mine);
  EXPECT_TRUE(holds_of(&mu).empty()) << "a hold outlived its release";
  EXPECT_EQ(recorded_since(before, "test.toggle").totals.acquisitions, static_cast<std::uint64_t>(counter))
      << "tracking must not lose a count";
  EXPECT_GT(flips, 1000);
}

// The statistics run where ThreadSanitizer sees them: on_acquire after the lock's TSan pre/post
// window, the wait's hooks stepped out of it (detail/tsan.hpp). Under TSan each test fails by a
// race report when they do not; elsewhere they check what was recorded. The handshakes that must
// not order anything for TSan are relaxed.
//
// Bug guarded: on_acquire ran inside the window, where TSan ignores synchronization, so a thread
// whose first acquisition of a class found the class's record there was, for TSan, unordered after
// the record's construction: its exit hook's lock of the record's mutex was reported as a race.
// A thread started before the record of `Class` is made (by this thread) takes a `Lock` of the
// class for the first time through `take`: it finds the record and attaches a shard in the
// acquisition's hook, and its exit hook locks the record's mutex. One acquisition is recorded.
template <class Class, class Lock, class Take>
void first_use_after_the_record(Take take) {
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  std::atomic<bool> made{false};
  std::thread t([&] {
    while (!made.load(std::memory_order_relaxed)) std::this_thread::yield();
    Lock mu;
    take(mu);
  });
  sw::class_stats<Class>::set_counting(true);  // the record, made after the thread started
  made.store(true, std::memory_order_relaxed);
  t.join();
  EXPECT_EQ(recorded_since(before, Class::name).totals.acquisitions, 1u);
}

TEST(StatsUnderTsan, AThreadsFirstAcquisitionIsOrderedAfterTheClassRecord) {
  first_use_after_the_record<first_lock_class, sw::ttas_mutex::with_stats<first_lock_class>>([](auto& mu) {
    mu.lock();
    mu.unlock();
  });
  first_use_after_the_record<first_try_class, sw::ttas_mutex::with_stats<first_try_class>>([](auto& mu) {
    ASSERT_TRUE(mu.try_lock());
    mu.unlock();
  });
  first_use_after_the_record<first_timed_class, sw::ttas_mutex::with_stats<first_timed_class>>([](auto& mu) {
    ASSERT_TRUE(mu.try_lock_for(std::chrono::seconds(1)));
    mu.unlock();
  });
  first_use_after_the_record<first_shared_class, sw::spin_shared_mutex::with_stats<first_shared_class>>(
      [](auto& mu) {
        mu.lock_shared();
        mu.unlock_shared();
      });
  first_use_after_the_record<first_sx_class, sw::sx_lock::with_stats<first_sx_class>>([](auto& l) {
    l.lock_sx();
    l.upgrade();
    l.unlock();
  });
}

// Bug guarded: the wait's hooks ran inside the window, so what the tracked wait's record ordered
// (the waiter's sequence stores) was lost to TSan: a reader that found the wait in the lock graph
// was not ordered after what the waiter wrote before it waited.
TEST(StatsUnderTsan, WhatAWaiterWroteBeforeItsTrackedWaitIsOrderedBeforeTheGraphListingIt) {
  listed_mutex mu;
  sw::class_stats<listed_class>::set_tracking(true);
  int before = 0;  // the waiter's, written once its tid is published (that store orders nothing after)
  mu.lock();
  contend(
      &mu,
      [&] {
        before = 42;
        mu.lock();
        mu.unlock();
      },
      [&] {
        EXPECT_EQ(before, 42);  // the lock graph listed the wait that followed the write
        mu.unlock();
      });
  sw::class_stats<listed_class>::set_tracking(false);
}

TEST(StatsSwitches, CountingOffCountsNothingAndOnAgainCounts) {
  switch_mutex mu;
  mu.lock();  // the class is in use: its name is known
  mu.unlock();
  const sw::stats_snapshot s0 = sw::take_stats_snapshot();
  ASSERT_FALSE(sw::set_stats_counting("test.switch", false));
  EXPECT_FALSE(sw::class_stats<switch_class>::counting());
  for (int i = 0; i < 100; ++i) {
    mu.lock();
    mu.unlock();
  }
  const sw::stats_snapshot s1 = sw::take_stats_snapshot();
  ASSERT_FALSE(sw::apply_stats_switches("test.switch=on"));
  for (int i = 0; i < 7; ++i) {
    mu.lock();
    mu.unlock();
  }
  const sw::stats_snapshot s2 = sw::take_stats_snapshot();
  EXPECT_EQ(find_class(sw::diff_stats(s0, s1), "test.switch")->totals.acquisitions, 0u);
  EXPECT_EQ(find_class(sw::diff_stats(s1, s2), "test.switch")->totals.acquisitions, 7u);
}

TEST(StatsSwitches, BadSwitchesApplyNothing) {
  switch_mutex mu;
  mu.lock();
  mu.unlock();
  EXPECT_EQ(sw::set_lock_tracking("no.such.class", true), sw::errc::unknown_stats_class);
  EXPECT_EQ(sw::set_stats_counting("", false), sw::errc::unknown_stats_class);
  std::string bad;
  // The first entry is good, the second names no class: neither is applied.
  EXPECT_EQ(sw::apply_stats_switches("test.switch=off, no.such.class=track", &bad),
            sw::errc::unknown_stats_class);
  EXPECT_EQ(bad, "no.such.class=track");
  EXPECT_TRUE(sw::class_stats<switch_class>::counting()) << "half a batch was applied";
  for (const char* spec :
       {"test.switch", "test.switch=maybe", "=on", "test.switch=on,,", "test.switch=on=off"}) {
    EXPECT_EQ(sw::apply_stats_switches(spec, &bad), sw::errc::knob_syntax) << spec;
    EXPECT_TRUE(sw::class_stats<switch_class>::counting()) << spec;
  }
  EXPECT_EQ(sw::apply_stats_switches("test.switch=on,,test.switch=off", &bad), sw::errc::knob_syntax);
  EXPECT_EQ(bad, "(empty entry 2)");
  EXPECT_TRUE(sw::class_stats<switch_class>::counting());
  EXPECT_FALSE(sw::apply_stats_switches("  "));                 // an empty batch changes nothing
  EXPECT_FALSE(sw::apply_stats_switches("test.switch=off\n"));  // a line read from a file
  EXPECT_FALSE(sw::class_stats<switch_class>::counting());
  EXPECT_FALSE(sw::apply_stats_switches("test.switch=on"));
  EXPECT_FALSE(sw::apply_stats_switches("test.switch=track, test.switch=untrack"));
  EXPECT_FALSE(sw::class_stats<switch_class>::tracking());
}

namespace {

// Watchdog options: a wait is stuck after `stuck_after_ms`, polled every `poll_ms`, reported to
// `on_stuck`.
template <class OnStuck>
sw::watchdog_options watch_options(std::uint32_t stuck_after_ms, std::uint32_t poll_ms, OnStuck on_stuck) {
  sw::watchdog_options o;
  o.stuck_after_ms = stuck_after_ms;
  o.poll_ms = poll_ms;
  o.on_stuck = std::move(on_stuck);
  return o;
}

struct collected {
  std::mutex mu;
  std::vector<sw::stuck_wait_report> reports;
  // Watchdog options whose callback keeps every report here.
  sw::watchdog_options options(std::uint32_t stuck_after_ms, std::uint32_t poll_ms) {
    return watch_options(stuck_after_ms, poll_ms, [this](const sw::stuck_wait_report& r) {
      std::lock_guard<std::mutex> g(mu);
      reports.push_back(r);
    });
  }
  std::size_t size() {
    std::lock_guard<std::mutex> g(mu);
    return reports.size();
  }
};

// Polls the watchdog's reports until there are `n` (the watchdog polls every few ms).
void await_reports(collected& c, std::size_t n) {
  while (c.size() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST(Watchdog, ReportsAStalledHolderOnceWithItsSite) {
  sw::class_stats<watch_class>::set_tracking(true);
  watch_latch l;
  collected got;
  const sw::watchdog_options o = got.options(50, 2);
  ASSERT_FALSE(sw::start_watchdog(o));
  EXPECT_TRUE(sw::watchdog_running());
  const sw::lock_site hold_site = SPINWISE_SITE;
  const sw::lock_site wait_site = SPINWISE_SITE;
  l.lock_sx(hold_site);  // the stalled holder: this thread, until the report is in
  std::atomic<pid_t> tid{0};
  std::thread waiter([&] {
    tid = this_tid();
    l.lock(wait_site);
    l.unlock();
  });
  await_reports(got, 1);
  // The lock graph shows the same, InnoDB's way.
  const std::string graph = sw::format_lock_graph_text(sw::take_lock_graph());
  EXPECT_NE(graph.find("--Thread " + std::to_string(tid.load()) + " has waited at " + site_text(wait_site)),
            std::string::npos)
      << graph;
  EXPECT_NE(graph.find("held by thread " + std::to_string(this_tid()) + " in SX mode, locked at " +
                       site_text(hold_site)),
            std::string::npos)
      << graph;
  // Many more polls of the same wait: still one report.
  const std::uint64_t made = sw::watchdog_reports();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(sw::watchdog_reports(), made);
  l.unlock_sx();
  waiter.join();
  sw::stop_watchdog();
  EXPECT_FALSE(sw::watchdog_running());
  sw::class_stats<watch_class>::set_tracking(false);

  ASSERT_EQ(got.size(), 1u);
  const sw::stuck_wait_report& r = got.reports[0];
  EXPECT_EQ(r.waiter.tid, static_cast<std::uint64_t>(tid.load()));
  EXPECT_EQ(r.waiter.mode, sw::lock_mode::x);
  EXPECT_EQ(r.waiter.site, site_text(wait_site));
  EXPECT_EQ(r.waiter.lock_class, "test.watch");
  EXPECT_EQ(r.waiter.lock, reinterpret_cast<std::uintptr_t>(&l));
  EXPECT_GE(r.waiter.ms, 50.0) << "reported before the threshold";
  ASSERT_EQ(r.holders.size(), 1u);
  EXPECT_EQ(r.holders[0].tid, static_cast<std::uint64_t>(this_tid()));
  EXPECT_EQ(r.holders[0].mode, sw::lock_mode::sx);
  EXPECT_EQ(r.holders[0].site, site_text(hold_site));
  const std::string line = sw::format_stuck_report(r);
  EXPECT_NE(line.find("an X lock on test.watch"), std::string::npos) << line;
  EXPECT_NE(line.find("held by thread " + std::to_string(this_tid()) + " in SX at " + site_text(hold_site)),
            std::string::npos)
      << line;
}

TEST(Watchdog, AWaitBelowTheThresholdIsNotReported) {
  sw::class_stats<watch_class>::set_tracking(true);
  watch_latch l;
  collected got;
  // A minute: the wait below lasts as long as a few polls.
  const sw::watchdog_options o = got.options(60'000, 1);
  ASSERT_FALSE(sw::start_watchdog(o));
  l.lock();
  contend(
      &l,
      [&] {
        l.lock_shared();
        l.unlock_shared();
      },
      [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // ~20 polls see the wait
        l.unlock();
      });
  sw::stop_watchdog();
  sw::class_stats<watch_class>::set_tracking(false);
  EXPECT_EQ(got.size(), 0u);
}

TEST(Watchdog, ACallbackThatThrowsIsReportedAndTheLockKeepsWorking) {
  sw::class_stats<watch_class>::set_tracking(true);
  watch_latch l;
  std::atomic<int> calls{0};
  const sw::watchdog_options o = watch_options(5, 1, [&](const sw::stuck_wait_report&) {
    ++calls;
    throw std::runtime_error("the engine's logger is down");
  });
  const std::uint64_t errors = sw::watchdog_callback_errors();
  ASSERT_FALSE(sw::start_watchdog(o));
  for (int round = 1; round <= 2; ++round) {  // the watchdog goes on after a throw
    l.lock();
    std::atomic<pid_t> tid{0};
    std::thread waiter([&] {
      tid = this_tid();
      l.lock_sx();
      l.unlock_sx();
    });
    while (calls.load() < round) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    l.unlock();
    waiter.join();
  }
  EXPECT_TRUE(sw::watchdog_running());
  sw::stop_watchdog();
  sw::class_stats<watch_class>::set_tracking(false);
  EXPECT_EQ(sw::watchdog_callback_errors(), errors + 2);
  l.lock();  // and the latch works
  l.unlock();
}

// A callback may stop the watchdog (it cannot join itself: it leaves after the callback), and a
// later start runs a new one.
TEST(Watchdog, ACallbackThatStopsItLetsItLeaveAndStartAgain) {
  sw::class_stats<watch_class>::set_tracking(true);
  watch_latch l;
  std::atomic<int> calls{0};
  sw::watchdog_options o = watch_options(5, 1, [&](const sw::stuck_wait_report&) {
    ++calls;
    sw::stop_watchdog();
  });
  ASSERT_FALSE(sw::start_watchdog(o));
  l.lock();
  std::thread waiter([&] {
    l.lock_shared();
    l.unlock_shared();
  });
  while (calls.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (sw::watchdog_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  l.unlock();
  waiter.join();
  EXPECT_EQ(calls.load(), 1);
  o.on_stuck = nullptr;
  ASSERT_FALSE(sw::start_watchdog(o)) << "a watchdog that stopped itself blocks a new start";
  EXPECT_TRUE(sw::watchdog_running());
  sw::stop_watchdog();
  EXPECT_FALSE(sw::watchdog_running());
  sw::class_stats<watch_class>::set_tracking(false);
}

// An upgrade waits for the S holders while it holds the latch: its report names them, not itself.
TEST(Watchdog, AnUpgradeWaitingForReadersNamesTheReaders) {
  sw::class_stats<watch_class>::set_tracking(true);
  watch_latch l;
  collected got;
  const sw::watchdog_options o = got.options(5, 1);
  const sw::lock_site reader_site = SPINWISE_SITE;
  l.lock_shared(reader_site);  // the reader the upgrade drains: this thread
  ASSERT_FALSE(sw::start_watchdog(o));
  std::atomic<pid_t> tid{0};
  std::thread upgrader([&] {
    tid = this_tid();
    l.lock_sx(SPINWISE_SITE);
    l.upgrade();
    l.unlock();
  });
  await_reports(got, 1);
  l.unlock_shared();
  upgrader.join();
  sw::stop_watchdog();
  sw::class_stats<watch_class>::set_tracking(false);
  const sw::stuck_wait_report& r = got.reports.at(0);
  EXPECT_EQ(r.waiter.tid, static_cast<std::uint64_t>(tid.load()));
  EXPECT_EQ(r.waiter.mode, sw::lock_mode::x);
  ASSERT_EQ(r.holders.size(), 1u) << sw::format_stuck_report(r);
  EXPECT_EQ(r.holders[0].tid, static_cast<std::uint64_t>(this_tid()));
  EXPECT_EQ(r.holders[0].mode, sw::lock_mode::s);
  EXPECT_EQ(r.holders[0].site, site_text(reader_site));
  EXPECT_TRUE(holds_of(&l).empty());
}

TEST(Watchdog, BadOptionsStartNothing) {
  sw::watchdog_options o;
  o.stuck_after_ms = 0;
  EXPECT_EQ(sw::start_watchdog(o), sw::errc::knob_out_of_range);
  o.stuck_after_ms = sw::kMaxStuckAfterMs + 1;
  EXPECT_EQ(sw::start_watchdog(o), sw::errc::knob_out_of_range);
  o.stuck_after_ms = 100;
  o.poll_ms = 60'001;
  EXPECT_EQ(sw::start_watchdog(o), sw::errc::knob_out_of_range);
  EXPECT_FALSE(sw::watchdog_running());
  o.poll_ms = 0;
  ASSERT_FALSE(sw::start_watchdog(o));
  EXPECT_EQ(sw::start_watchdog(o), sw::errc::watchdog_running);
  EXPECT_TRUE(sw::watchdog_running()) << "a refused second start stopped the first";
  sw::stop_watchdog();
  sw::stop_watchdog();  // twice: nothing
  EXPECT_FALSE(sw::watchdog_running());
}

// A watchdog left running when the process exits stops with it (its thread is joined at exit):
// the child exits with its own status, not a crash or std::terminate. A plain fork, not a gtest
// death test: the "threadsafe" style re-executes the binary, which qemu-user cannot.
TEST(Watchdog, StopsCleanlyWithTheProcess) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sw::watchdog_options o;
    o.stuck_after_ms = 1;
    o.poll_ms = 1;
    if (sw::start_watchdog(o)) std::_Exit(3);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::exit(7);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit normally: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 7);
}
