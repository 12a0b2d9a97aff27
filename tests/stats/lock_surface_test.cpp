// One typed suite over every spinwise lock: the same std surface on each (Lockable, TimedLockable,
// and SharedLockable / SharedTimedLockable on the shared ones), a lock site accepted by every
// acquiring call and passed on to lock tracking (the hold it lists, and the wait of a thread that
// had to wait), and `with_stats` keeping the policy and the size. Locks are one algorithm in one
// shell (detail/lock_shell.hpp); a lock whose shell lost a call or dropped a site fails here.
// No timing is asserted: a waiter is released once its wait is listed.

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "spinwise/guard.hpp"
#include "spinwise/runtime/lock_watch.hpp"
#include "spinwise/spinwise.hpp"

namespace sw = spinwise;

namespace {

struct surface_class {
  static constexpr std::string_view name = "test.surface";
};

template <class M, class = void>
struct is_shared : std::false_type {};
template <class M>
struct is_shared<M, std::void_t<decltype(std::declval<M&>().lock_shared(sw::lock_site{}))>> : std::true_type {
};

// Every call a spinwise lock answers, with and without a site, as an expression that must compile.
template <class M>
constexpr bool has_exclusive_surface() {
  using namespace std::chrono;
  M* m = nullptr;
  const sw::lock_site site{};
  const milliseconds rel{1};
  static_assert(std::is_same_v<decltype(m->lock()), void>);
  static_assert(std::is_same_v<decltype(m->lock(site)), void>);
  static_assert(std::is_same_v<decltype(m->try_lock()), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock(site)), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_for(milliseconds(1))), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_for(milliseconds(1), site)), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_until(steady_clock::now())), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_until(system_clock::now(), site)), bool>);
  static_assert(std::is_same_v<decltype(m->unlock()), void>);
  static_assert(noexcept(m->lock(site))&& noexcept(m->try_lock_for(rel))&& noexcept(m->unlock()));
  return true;
}

template <class M>
constexpr bool has_shared_surface() {
  using namespace std::chrono;
  M* m = nullptr;
  const sw::lock_site site{};
  static_assert(std::is_same_v<decltype(m->lock_shared()), void>);
  static_assert(std::is_same_v<decltype(m->lock_shared(site)), void>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared()), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared(site)), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared_for(milliseconds(1))), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared_for(milliseconds(1), site)), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared_until(steady_clock::now())), bool>);
  static_assert(std::is_same_v<decltype(m->try_lock_shared_until(system_clock::now(), site)), bool>);
  static_assert(std::is_same_v<decltype(m->unlock_shared()), void>);
  return true;
}

pid_t this_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

std::string site_text(const sw::lock_site& s) { return std::string(s.file) + ":" + std::to_string(s.line); }

std::vector<sw::tracked_lock> holds_of(const void* lock) {
  std::vector<sw::tracked_lock> out;
  for (const sw::tracked_lock& h : sw::take_lock_graph().holds) {
    if (h.lock == reinterpret_cast<std::uintptr_t>(lock)) out.push_back(h);
  }
  return out;
}

// Yields until the lock graph lists a wait of thread `tid` on `lock`, and returns it.
sw::tracked_lock await_wait(const std::atomic<pid_t>& tid, const void* lock) {
  for (;;) {
    if (const pid_t t = tid.load(); t != 0) {
      for (const sw::tracked_lock& w : sw::take_lock_graph().waits) {
        if (w.tid == static_cast<std::uint64_t>(t) && w.lock == reinterpret_cast<std::uintptr_t>(lock))
          return w;
      }
    }
    std::this_thread::yield();
  }
}

// One hold taken by `take` (true: taken) lists `site`, and its release unlists it.
template <class M, class Take, class Release>
void expect_hold_at(M& m, const sw::lock_site& site, Take take, Release release, const char* call) {
  ASSERT_TRUE(take()) << call;
  const std::vector<sw::tracked_lock> h = holds_of(&m);
  ASSERT_EQ(h.size(), 1u) << call;
  EXPECT_EQ(h[0].site, site_text(site)) << call << " dropped its site";
  release();
  EXPECT_TRUE(holds_of(&m).empty()) << call;
}

// The caller holds `m`; `take` runs in a thread and must wait, and `give_back` releases what it
// took in that thread. Its listed wait names `site`; `release` then ends the caller's hold.
template <class M, class Take, class GiveBack, class Release>
void expect_wait_at(M& m, const sw::lock_site& site, Take take, GiveBack give_back, Release release,
                    const char* call) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    tid.store(this_tid());
    const bool ok = take();
    if (ok) give_back();
    got.store(ok);
  });
  const sw::tracked_lock w = await_wait(tid, &m);
  EXPECT_EQ(w.site, site_text(site)) << call << " did not pass its site to its wait";
  release();
  waiter.join();
  EXPECT_TRUE(got.load()) << call;
}

template <class M>
class LockSurface : public ::testing::Test {
 protected:
  void SetUp() override { sw::class_stats<surface_class>::set_tracking(true); }
  void TearDown() override { sw::class_stats<surface_class>::set_tracking(false); }
};

using AllLocks =
    ::testing::Types<sw::tas_mutex, sw::ttas_mutex, sw::ticket_mutex, sw::mcs_mutex, sw::hybrid_mutex,
                     sw::spin_shared_mutex, sw::hybrid_shared_mutex, sw::sx_lock>;
TYPED_TEST_SUITE(LockSurface, AllLocks);

TYPED_TEST(LockSurface, TheSameStdCallsOnEveryLockAndWithStatsKeepsPolicyAndSize) {
  using M = TypeParam;
  using S = typename M::template with_stats<surface_class>;
  static_assert(has_exclusive_surface<M>() && has_exclusive_surface<S>());
  if constexpr (is_shared<M>::value) static_assert(has_shared_surface<M>() && has_shared_surface<S>());
  static_assert(std::is_same_v<typename S::policy, typename M::policy>);
  static_assert(std::is_same_v<typename S::stats, sw::class_stats<surface_class>>);
  static_assert(std::is_same_v<typename M::stats, sw::no_stats>);
  static_assert(sizeof(S) == sizeof(M), "statistics live outside the lock");
  static_assert(std::is_nothrow_default_constructible_v<M>);
  static_assert(!std::is_copy_constructible_v<M> && !std::is_copy_assignable_v<M>);
  static_assert(!std::is_move_constructible_v<M> && !std::is_move_assignable_v<M>);
  // The std wrappers take every lock, timed ones included.
  M m;
  {
    std::unique_lock<M> u(m, std::defer_lock);
    EXPECT_TRUE(u.try_lock_for(std::chrono::seconds(10)));
    EXPECT_TRUE(u.owns_lock());
  }
  {
    std::unique_lock<M> u(m, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    EXPECT_TRUE(u.owns_lock());
  }
  if constexpr (is_shared<M>::value) {
    std::shared_lock<M> s(m, std::chrono::seconds(10));
    EXPECT_TRUE(s.owns_lock());
  }
}

TYPED_TEST(LockSurface, EveryAcquiringCallListsItsSiteAndItsReleaseUnlistsIt) {
  using M = typename TypeParam::template with_stats<surface_class>;
  M m;
  const sw::lock_site a = SPINWISE_SITE, b = SPINWISE_SITE, c = SPINWISE_SITE, d = SPINWISE_SITE;
  const auto unlock = [&] { m.unlock(); };
  expect_hold_at(
      m, a, [&] { return m.lock(a), true; }, unlock, "lock(site)");
  expect_hold_at(
      m, b, [&] { return m.try_lock(b); }, unlock, "try_lock(site)");
  expect_hold_at(
      m, c, [&] { return m.try_lock_for(std::chrono::seconds(10), c); }, unlock, "try_lock_for(site)");
  expect_hold_at(
      m, d, [&] { return m.try_lock_until(std::chrono::system_clock::now() + std::chrono::seconds(10), d); },
      unlock, "try_lock_until(site)");
  {
    const sw::lock_site g = SPINWISE_SITE;
    sw::lock_guard<M> guard(m, g);
    ASSERT_EQ(holds_of(&m).size(), 1u);
    EXPECT_EQ(holds_of(&m)[0].site, site_text(g));
  }
  EXPECT_TRUE(holds_of(&m).empty());
  if constexpr (is_shared<M>::value) {
    const auto unlock_shared = [&] { m.unlock_shared(); };
    expect_hold_at(
        m, a, [&] { return m.lock_shared(a), true; }, unlock_shared, "lock_shared(site)");
    expect_hold_at(
        m, b, [&] { return m.try_lock_shared(b); }, unlock_shared, "try_lock_shared(site)");
    expect_hold_at(
        m, c, [&] { return m.try_lock_shared_for(std::chrono::seconds(10), c); }, unlock_shared,
        "try_lock_shared_for(site)");
    expect_hold_at(
        m, d,
        [&] {
          return m.try_lock_shared_until(std::chrono::steady_clock::now() + std::chrono::seconds(10), d);
        },
        unlock_shared, "try_lock_shared_until(site)");
  }
}

// The slow paths get the site too: a thread that has to wait is listed waiting at its site, for
// lock(site) and for the timed form (a wait that polls, on the locks whose queue cannot be left).
TYPED_TEST(LockSurface, AWaitIsListedAtTheSiteOfTheCallThatWaits) {
  using M = typename TypeParam::template with_stats<surface_class>;
  M m;
  const sw::lock_site a = SPINWISE_SITE, b = SPINWISE_SITE;
  const auto unlock = [&] { m.unlock(); };
  m.lock();
  expect_wait_at(
      m, a, [&] { return m.lock(a), true; }, unlock, unlock, "lock(site)");
  m.lock();
  expect_wait_at(
      m, b, [&] { return m.try_lock_for(std::chrono::hours(1), b); }, unlock, unlock, "try_lock_for(site)");
  if constexpr (is_shared<M>::value) {
    const auto unlock_shared = [&] { m.unlock_shared(); };
    m.lock();
    expect_wait_at(
        m, a, [&] { return m.lock_shared(a), true; }, unlock_shared, unlock, "lock_shared(site)");
    m.lock();
    expect_wait_at(
        m, b, [&] { return m.try_lock_shared_for(std::chrono::hours(1), b); }, unlock_shared, unlock,
        "try_lock_shared_for(site)");
  }
  EXPECT_TRUE(holds_of(&m).empty());
}

}  // namespace
