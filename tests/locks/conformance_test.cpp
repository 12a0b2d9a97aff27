// One typed suite over every exclusive lock (and std::mutex as the reference): what Lockable and
// TimedLockable promise, and what spinwise promises on top (progress when oversubscribed).
//
// To run a shared lock's exclusive side through it, add the type to ExclusiveLockTypes below.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include "lock_test_util.hpp"
#include "spinwise/spinwise.hpp"

namespace {

using spinwise_test::cpus;
using spinwise_test::is_timed_lockable;
using spinwise_test::scaled;

struct policy_variant_tag;

using ExclusiveLockTypes = ::testing::Types<
    std::mutex,  // the reference: every test must pass on it too
    spinwise::tas_mutex, spinwise::ttas_mutex, spinwise::ticket_mutex, spinwise::mcs_mutex,
    spinwise::hybrid_mutex,
#if SPINWISE_TEST_POLICY_VARIANTS  // tests/locks/CMakeLists.txt
    // the same algorithms over other policies (InnoDB-exact, no backoff, backoff on a FIFO lock)
    spinwise::ttas_mutex_t<spinwise::innodb_policy<>>, spinwise::hybrid_mutex_t<spinwise::innodb_policy<>>,
    spinwise::tas_mutex_t<spinwise::no_backoff_policy<>>,
    spinwise::mcs_mutex_t<spinwise::exp_backoff_policy<policy_variant_tag>>,
#endif
    // the shared locks' exclusive side (their shared side: shared_lock_test.cpp)
    spinwise::spin_shared_mutex, spinwise::hybrid_shared_mutex, spinwise::sx_lock>;

template <class M>
class ExclusiveLock : public ::testing::Test {};
TYPED_TEST_SUITE(ExclusiveLock, ExclusiveLockTypes);

// Bug guarded: two threads inside the critical section at once (a lost or reordered acquire /
// release). The counter is a plain int, so a broken lock also loses increments (and TSan sees the
// race); `inside` catches the overlap itself. All entry points (lock, try_lock loop, timed) mix.
TYPED_TEST(ExclusiveLock, MutualExclusionWithPlainCounter) {
  using M = TypeParam;
  constexpr int kThreads = 4;
  const int iters = scaled(20000, 500);
  M m;
  long counter = 0;  // deliberately not atomic
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < iters; ++i) {
        const int how = (i + t) % 4;
        if (how == 1) {
          while (!m.try_lock()) std::this_thread::yield();
        } else if (how == 2 && is_timed_lockable<M>::value) {
          if constexpr (is_timed_lockable<M>::value) {
            while (!m.try_lock_for(std::chrono::milliseconds(100))) {
            }
          }
        } else {
          m.lock();
        }
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0)
          overlaps.fetch_add(1, std::memory_order_relaxed);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
        m.unlock();
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, static_cast<long>(kThreads) * iters);
}

// Bug guarded: try_lock that succeeds on a lock another thread holds, or fails on a free one.
TYPED_TEST(ExclusiveLock, TryLockAcrossThreads) {
  TypeParam m;
  ASSERT_TRUE(m.try_lock());  // free -> ours
  bool other = true;
  std::thread([&] { other = m.try_lock(); }).join();
  EXPECT_FALSE(other) << "try_lock succeeded while another thread held the lock";
  m.unlock();
  std::thread([&] {
    other = m.try_lock();
    if (other) m.unlock();
  }).join();
  EXPECT_TRUE(other) << "try_lock failed on a free lock";
  // And the lock is usable afterwards.
  m.lock();
  m.unlock();
}

// Bug guarded: a holder's writes not visible to the next owner (missing acquire/release pairing).
TYPED_TEST(ExclusiveLock, HandoffPublishesWrites) {
  TypeParam m;
  const int rounds = scaled(2000, 100);
  long shared = 0;  // plain: only the lock orders it
  std::atomic<int> turn{0};
  std::thread t([&] {
    for (int i = 0; i < rounds; ++i) {
      while (turn.load(std::memory_order_relaxed) != 1) std::this_thread::yield();
      m.lock();
      EXPECT_EQ(shared, 2L * i + 1);
      ++shared;
      m.unlock();
      turn.store(0, std::memory_order_relaxed);
    }
  });
  for (int i = 0; i < rounds; ++i) {
    while (turn.load(std::memory_order_relaxed) != 0) std::this_thread::yield();
    m.lock();
    EXPECT_EQ(shared, 2L * i);
    ++shared;
    m.unlock();
    turn.store(1, std::memory_order_relaxed);
  }
  t.join();
  EXPECT_EQ(shared, 2L * rounds);
}

// Bug guarded: a timed wait that gives up before its deadline, or never succeeds once the lock
// is released. Only the order of events is asserted (the deadline has passed when it returns
// false), never how long after.
TYPED_TEST(ExclusiveLock, TimedWaitsTimeOutAfterTheDeadlineAndSucceedAfterRelease) {
  using M = TypeParam;
  if constexpr (!is_timed_lockable<M>::value) {
    GTEST_SKIP() << "not TimedLockable";
  } else {
    M m;
    m.lock();
    std::thread([&] {
      using steady = std::chrono::steady_clock;
      const auto t0 = steady::now();
      EXPECT_FALSE(m.try_lock_for(std::chrono::milliseconds(20)));
      EXPECT_GE(steady::now() - t0, std::chrono::milliseconds(20));

      const auto d1 = steady::now() + std::chrono::milliseconds(10);
      EXPECT_FALSE(m.try_lock_until(d1));
      EXPECT_GE(steady::now(), d1);

      const auto d2 = std::chrono::system_clock::now() + std::chrono::milliseconds(10);
      EXPECT_FALSE(m.try_lock_until(d2));
      EXPECT_GE(std::chrono::system_clock::now(), d2);

      EXPECT_FALSE(m.try_lock_for(std::chrono::nanoseconds(0)));
      EXPECT_FALSE(m.try_lock_until(steady::now() - std::chrono::seconds(1)));
    }).join();

    // Succeeds once the holder lets go (the generous timeout only stops a broken lock hanging).
    std::atomic<bool> waiting{false};
    bool got = false;
    std::thread waiter([&] {
      waiting.store(true);
      got = m.try_lock_for(std::chrono::seconds(60));
      if (got) m.unlock();
    });
    while (!waiting.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let it spin out and park (not asserted)
    m.unlock();
    waiter.join();
    EXPECT_TRUE(got);

    // A past deadline on a free lock behaves as try_lock.
    EXPECT_TRUE(m.try_lock_until(std::chrono::steady_clock::now() - std::chrono::seconds(1)));
    m.unlock();
  }
}

// Bug guarded: a lock that livelocks or collapses when threads outnumber CPUs and holders get
// preempted (unbounded spinning, a FIFO handoff to a thread that never runs). 8x more threads
// than CPUs; every thread must finish all its acquisitions (ctest's timeout catches a hang).
TYPED_TEST(ExclusiveLock, OversubscribedProgress) {
  const int threads = static_cast<int>(std::min(8u * cpus(), 64u));
  const int iters = scaled(400, 20);
  TypeParam m;
  long counter = 0;
  std::vector<int> done(threads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < iters; ++i) {
        std::lock_guard<TypeParam> g(m);
        ++counter;
        ++done[t];  // each thread writes its own slot, under the lock anyway
      }
    });
  }
  for (auto& th : ts) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(done[t], iters) << "thread " << t;
  EXPECT_EQ(counter, static_cast<long>(threads) * iters);
}

// Bug guarded: a lock that does not compose with std::scoped_lock / std::lock (which rely on
// try_lock to avoid deadlock) when two different lock types are taken in opposite orders.
TYPED_TEST(ExclusiveLock, ScopedLockWithAnotherLockType) {
  using M = TypeParam;
  using Other = std::conditional_t<std::is_same_v<M, spinwise::ttas_mutex>, spinwise::hybrid_mutex,
                                   spinwise::ttas_mutex>;
  M a;
  Other b;
  const int iters = scaled(5000, 200);
  long both = 0;
  std::thread t1([&] {
    for (int i = 0; i < iters; ++i) {
      std::scoped_lock g(a, b);
      ++both;
    }
  });
  std::thread t2([&] {
    for (int i = 0; i < iters; ++i) {
      std::scoped_lock g(b, a);
      ++both;
    }
  });
  t1.join();
  t2.join();
  EXPECT_EQ(both, 2L * iters);
  // std::lock and unique_lock's deferred / try-to-lock forms.
  std::unique_lock<M> ua(a, std::defer_lock);
  std::unique_lock<Other> ub(b, std::defer_lock);
  std::lock(ua, ub);
  EXPECT_TRUE(ua.owns_lock());
  EXPECT_TRUE(ub.owns_lock());
  ua.unlock();
  std::unique_lock<M> again(a, std::try_to_lock);
  EXPECT_TRUE(again.owns_lock());
}

// spinwise layout promises: default construction is constant initialization of all-zero bytes
// (an engine can embed thousands in zeroed memory), nothrow, and the lock starts free.
TYPED_TEST(ExclusiveLock, ConstructionIsAllZeroAndFree) {
  using M = TypeParam;
  if constexpr (std::is_same_v<M, std::mutex>) {
    GTEST_SKIP() << "std::mutex makes no layout promise";
  } else {
    static_assert(std::is_nothrow_default_constructible_v<M>);
    static_assert(!std::is_copy_constructible_v<M> && !std::is_move_constructible_v<M>);
    static_assert(noexcept(std::declval<M&>().lock())&& noexcept(std::declval<M&>().unlock())&& noexcept(
        std::declval<M&>().try_lock()));
    alignas(M) unsigned char buf[sizeof(M)];
    std::memset(buf, 0xa5, sizeof buf);
    M* m = new (buf) M;
    unsigned char zero[sizeof(M)] = {};
    EXPECT_EQ(std::memcmp(buf, zero, sizeof(M)), 0) << "the constructor must write all zeros";
    EXPECT_TRUE(m->try_lock());
    m->unlock();
    m->~M();
  }
}

}  // namespace
