// One typed suite over the shared locks, with std::shared_mutex as the reference: what
// SharedLockable promises, and what spinwise promises on top (writer preference without
// starvation either way, progress when oversubscribed). sx_lock runs here through its S and X
// modes; its SX mode has shared_sx_test.cpp, the timed calls shared_timed_test.cpp.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "shared_test_util.hpp"
#include "spinwise/spinwise.hpp"

// The name the spin rw-lock had before 0.2.0 stays: the same type, template and knobs.
static_assert(std::is_same_v<spinwise::rw_spinlock, spinwise::spin_shared_mutex>);
static_assert(std::is_same_v<spinwise::rw_spinlock_t<spinwise::innodb_policy<>>,
                             spinwise::spin_shared_mutex_t<spinwise::innodb_policy<>>>);
static_assert(
    std::is_same_v<spinwise::rw_spinlock::policy, spinwise::time_policy<spinwise::rw_spinlock_tag>>);

namespace {

using spinwise_test::eventually;
using spinwise_test::expect_oversubscribed_progress;
using spinwise_test::in_other_thread;
using spinwise_test::rendezvous;
using spinwise_test::scale;
using spinwise_test::scaled;
using spinwise_test::torn_pair;

struct variant_tag;

using SharedLockTypes =
    ::testing::Types<std::shared_mutex,  // the reference: every test that is not about a spinwise promise
                                         // runs on it
#if SPINWISE_TEST_POLICY_VARIANTS        // tests/locks/CMakeLists.txt
                     // the algorithms below over other policies
                     spinwise::spin_shared_mutex_t<spinwise::no_backoff_policy<>>,
                     spinwise::spin_shared_mutex_t<spinwise::innodb_policy<>>,
                     // the shared latches' InnoDB replay (their default was innodb_policy up to 0.2.0)
                     spinwise::hybrid_shared_mutex_t<spinwise::innodb_policy<variant_tag>>,
                     spinwise::sx_lock_t<spinwise::innodb_policy<variant_tag>>,
                     spinwise::sx_lock_t<spinwise::exp_backoff_policy<variant_tag>>,
#endif
                     spinwise::spin_shared_mutex, spinwise::hybrid_shared_mutex, spinwise::sx_lock>;

// What each lock promises beyond SharedLockable.
template <class L>
struct promises {
  static constexpr bool ours = false;
  static constexpr bool writer_preference = false;    // a waiting writer blocks new readers
  static constexpr bool readers_never_starve = true;  // glibc's rwlock prefers readers
  static constexpr bool writers_never_starve = false;
};
template <class P>
struct promises<spinwise::spin_shared_mutex_t<P>> {
  static constexpr bool ours = true, writer_preference = true, readers_never_starve = true,
                        writers_never_starve = true;
};
template <class P>
struct promises<spinwise::hybrid_shared_mutex_t<P>> : promises<spinwise::spin_shared_mutex_t<P>> {};
template <class P>
struct promises<spinwise::sx_lock_t<P>> {
  // InnoDB's latch: an X request reserves at once, so readers cannot starve it; a stream of X
  // requests can hold S requests off (InnoDB has the same property).
  static constexpr bool ours = true, writer_preference = true, readers_never_starve = false,
                        writers_never_starve = true;
};

template <class L>
class SharedLock : public ::testing::Test {};
TYPED_TEST_SUITE(SharedLock, SharedLockTypes);

template <class L>
bool other_thread_try_lock(L& l) {
  return in_other_thread([&] {
    const bool ok = l.try_lock();
    if (ok) l.unlock();
    return ok;
  });
}
template <class L>
bool other_thread_try_lock_shared(L& l) {
  return in_other_thread([&] {
    const bool ok = l.try_lock_shared();
    if (ok) l.unlock_shared();
    return ok;
  });
}

// Bug guarded: a lock whose unlocked state is not all-zero bytes (a zero-filled arena or a
// static in .bss would then start locked or corrupt), or whose size drifts.
TYPED_TEST(SharedLock, ZeroBytesAreTheUnlockedState) {
  using L = TypeParam;
  if constexpr (!promises<L>::ours) {
    GTEST_SKIP() << "a property of spinwise's locks";
  } else {
    static_assert(std::is_nothrow_default_constructible_v<L>);
    L fresh;
    unsigned char zero[sizeof(L)] = {};
    EXPECT_EQ(std::memcmp(static_cast<const void*>(&fresh), zero, sizeof(L)), 0);
    // And a used lock, once released, is back to zero (no stale bits that change behaviour).
    fresh.lock();
    fresh.unlock();
    fresh.lock_shared();
    fresh.unlock_shared();
    EXPECT_EQ(std::memcmp(static_cast<const void*>(&fresh), zero, sizeof(L)), 0);
  }
}

// Bug guarded: shared acquisitions that exclude each other (a reader count that is really a flag).
// Both readers must be inside at once to pass the rendezvous; no timing is involved.
TYPED_TEST(SharedLock, ReaderAdmitsReader) {
  TypeParam l;
  rendezvous both(2);
  bool met[2] = {false, false};
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&, i] {
      std::shared_lock<TypeParam> g(l);
      met[i] = both.arrive();
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_TRUE(met[0] && met[1]) << "two readers could not hold the lock at the same time";
}

// Bug guarded: a writer admitted while a reader holds the lock.
TYPED_TEST(SharedLock, ReaderExcludesWriter) {
  TypeParam l;
  l.lock_shared();
  EXPECT_FALSE(other_thread_try_lock(l)) << "try_lock succeeded while a reader held the lock";
  l.unlock_shared();
  EXPECT_TRUE(other_thread_try_lock(l)) << "try_lock failed after the reader left";
}

// Bug guarded: a reader admitted while a writer holds the lock, by try_lock_shared or by a
// blocking lock_shared.
TYPED_TEST(SharedLock, WriterExcludesReader) {
  spinwise_test::watchdog dog("WriterExcludesReader");
  TypeParam l;
  l.lock();
  EXPECT_FALSE(other_thread_try_lock_shared(l)) << "try_lock_shared succeeded under a writer";
  std::atomic<bool> started{false};
  std::atomic<bool> entered{false};
  std::thread reader([&] {
    started.store(true);
    l.lock_shared();
    entered.store(true);
    l.unlock_shared();
  });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // room to misbehave; not a timing assertion
  EXPECT_FALSE(entered.load()) << "lock_shared returned while a writer held the lock";
  l.unlock();
  EXPECT_TRUE(eventually([&] { return entered.load(); })) << "the reader never got in after the writer left";
  reader.join();
}

// Bug guarded: try_lock_shared failing on a free or reader-held lock (readers share), or
// succeeding under a writer; all asked from other threads.
TYPED_TEST(SharedLock, TryLockSharedAcrossThreads) {
  TypeParam l;
  EXPECT_TRUE(other_thread_try_lock_shared(l)) << "free lock";
  l.lock_shared();
  EXPECT_TRUE(other_thread_try_lock_shared(l)) << "reader-held lock";
  EXPECT_FALSE(other_thread_try_lock(l));
  l.unlock_shared();
  ASSERT_TRUE(l.try_lock_shared());
  l.unlock_shared();
  l.lock();
  EXPECT_FALSE(other_thread_try_lock_shared(l)) << "writer-held lock";
  l.unlock();
  EXPECT_TRUE(other_thread_try_lock_shared(l)) << "released lock";
}

// Bug guarded: a reader seeing a writer's half-done update, or a lost write. Writers keep two
// plain fields equal; readers check them under the shared lock (TSan also sees any race).
// Time-bounded, and it asserts that both sides did work.
TYPED_TEST(SharedLock, ReadersAndWritersKeepTheInvariant) {
  using L = TypeParam;
  L l;
  long a = 0, b = 0;  // plain: only the lock orders them
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, writes{0}, torn{0};
  const int readers = 3, writers = 2;
  std::vector<std::thread> ts;
  for (int i = 0; i < readers; ++i) {
    ts.emplace_back([&, i] {
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if ((n + i) % 3 == 0) {
          if (!l.try_lock_shared()) continue;
        } else {
          l.lock_shared();
        }
        if (a != b) torn.fetch_add(1, std::memory_order_relaxed);
        l.unlock_shared();
        ++n;
      }
      reads.fetch_add(n);
    });
  }
  for (int i = 0; i < writers; ++i) {
    ts.emplace_back([&, i] {
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if ((n + i) % 4 == 0) {
          if (!l.try_lock()) continue;
        } else {
          l.lock();
        }
        ++a;
        for (int k = 0; k < 8; ++k) std::atomic_signal_fence(std::memory_order_seq_cst);  // widen the window
        ++b;
        l.unlock();
        ++n;
      }
      writes.fetch_add(n);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(400 * scale()) + 50));
  stop.store(true);
  for (auto& t : ts) t.join();
  EXPECT_EQ(torn.load(), 0) << "a reader saw a half-done write";
  EXPECT_GT(reads.load(), 0) << "no read happened: the test proved nothing";
  EXPECT_GT(writes.load(), 0) << "no write happened: the test proved nothing";
  EXPECT_EQ(a, writes.load()) << "lost writes";
  EXPECT_EQ(b, writes.load());
}

// Bug guarded: a reader-preferring lock sold as writer-preferring (writers starve under a
// steady stream of readers). A reader holds the lock, a writer waits: new readers must now
// be refused, and a reader that asks after the writer must enter only after it.
TYPED_TEST(SharedLock, AWaitingWriterBlocksNewReaders) {
  using L = TypeParam;
  if constexpr (!promises<L>::writer_preference) {
    GTEST_SKIP() << "no writer preference promised";
  } else {
    L l;
    l.lock_shared();
    std::atomic<bool> writer_done{false};
    std::thread writer([&] {
      l.lock();
      writer_done.store(true);
      l.unlock();
    });
    // The writer is waiting once try_lock_shared starts failing (it cannot enter: we hold S).
    ASSERT_TRUE(eventually([&] { return !other_thread_try_lock_shared(l); }))
        << "new readers still enter while a writer waits";
    EXPECT_FALSE(writer_done.load());
    bool saw_writer_done = false;
    std::atomic<bool> late_started{false};
    std::thread late_reader([&] {
      late_started.store(true);
      l.lock_shared();
      saw_writer_done = writer_done.load();
      l.unlock_shared();
    });
    ASSERT_TRUE(eventually([&] { return late_started.load(); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let it queue (not asserted)
    l.unlock_shared();
    writer.join();
    late_reader.join();
    EXPECT_TRUE(saw_writer_done) << "a reader that arrived while a writer waited went first";
  }
}

// Bug guarded: writer preference without the readers' turn: with two writers taking turns
// back to back, a reader would rarely see the lock free of writers. spinwise's shared locks
// admit a reader that waited out its spin budget at the next writer's release, so the reader
// finishes its acquisitions.
TYPED_TEST(SharedLock, ReadersDoNotStarveUnderAStreamOfWriters) {
  using L = TypeParam;
  if constexpr (!promises<L>::readers_never_starve) {
    GTEST_SKIP() << "readers can starve under X requests (InnoDB's latch behaves the same)";
  } else {
    L l;
    std::atomic<bool> stop{false};
    std::atomic<long> writes{0};
    std::vector<std::thread> writers;
    for (int i = 0; i < 2; ++i) {
      writers.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) {
          l.lock();
          spinwise::cpu_relax_n(20);  // hold it a little: the other writer is nearly always waiting
          writes.fetch_add(1, std::memory_order_relaxed);
          l.unlock();
        }
      });
    }
    // The stream must be flowing before the reader starts, or there is nothing to starve it.
    ASSERT_TRUE(eventually([&] { return writes.load() >= 100; }));
    const int want = scaled(200, 20);
    std::atomic<int> got{0};
    std::thread reader([&] {
      for (int i = 0; i < want; ++i) {
        l.lock_shared();
        got.fetch_add(1, std::memory_order_relaxed);
        l.unlock_shared();
      }
    });
    const bool finished = eventually([&] { return got.load() == want; });
    stop.store(true);
    reader.join();
    for (auto& t : writers) t.join();
    EXPECT_TRUE(finished) << "the reader got " << got.load() << " of " << want << " acquisitions";
    EXPECT_GT(writes.load(), 0);
  }
}

// Bug guarded: writer preference without the readers' turn, shown deterministically. A
// writer holds the lock and a reader that has waited out its spin budget (signal_policy: none)
// queues behind it, which starts a readers' turn. After the release no writer may reserve until
// that reader has entered, so the releasing writer cannot take the lock straight back: a
// try_lock right after unlock fails. A lock that merely prefers writers lets the writer back in
// (and, under a stream of writers, never lets the reader in).
template <class L>
void starving_reader_goes_before_the_next_writer() {
  spinwise_test::watchdog dog("starving_reader_goes_before_the_next_writer");
  L l;
  for (int round = 0; round < 20; ++round) {
    l.lock();
    std::atomic<bool> reader_waiting{false}, reader_in{false}, checked{false};
    std::thread reader([&] {
      spinwise_test::signal_policy::waiting = &reader_waiting;
      l.lock_shared();
      reader_in.store(true);
      while (!checked.load()) std::this_thread::yield();  // hold it until the writer has tried
      l.unlock_shared();
    });
    ASSERT_TRUE(eventually([&] { return reader_waiting.load(); }));
    l.unlock();
    const bool writer_back_first = l.try_lock();
    if (writer_back_first) l.unlock();
    checked.store(true);
    reader.join();
    EXPECT_FALSE(writer_back_first) << "round " << round
                                    << ": the releasing writer took the lock back from a "
                                    << "starving reader";
    EXPECT_TRUE(reader_in.load());
  }
}

TEST(SharedLockReadersTurn, RwSpinlockAdmitsStarvingReadersBeforeTheNextWriter) {
  starving_reader_goes_before_the_next_writer<spinwise::spin_shared_mutex_t<spinwise_test::signal_policy>>();
}
TEST(SharedLockReadersTurn, HybridSharedMutexAdmitsStarvingReadersBeforeTheNextWriter) {
  starving_reader_goes_before_the_next_writer<
      spinwise::hybrid_shared_mutex_t<spinwise_test::signal_policy>>();
}

// Bug guarded: readers whose overlapping critical sections keep the count above zero forever,
// so that a writer never enters (no writer preference, or a door that does not close).
TYPED_TEST(SharedLock, WritersDoNotStarveUnderAStreamOfReaders) {
  using L = TypeParam;
  if constexpr (!promises<L>::writers_never_starve) {
    GTEST_SKIP() << "glibc's default rwlock prefers readers";
  } else {
    L l;
    std::atomic<bool> stop{false};
    std::atomic<long> reads{0};
    std::atomic<int> streaming{0};  // readers that have read once
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) {
      readers.emplace_back([&] {
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          l.lock_shared();
          std::this_thread::yield();  // hold it across a reschedule: the readers overlap
          if (++n == 1) streaming.fetch_add(1);
          l.unlock_shared();
        }
        reads.fetch_add(n);
      });
    }
    // The writer starts into a stream: on a loaded machine a reader may not have run at all before
    // an unhindered writer is done, and the test then proved nothing (and read 0 reads: it failed
    // 3 times in 60 runs beside six busy loops on 2 CPUs before this wait).
    if (!eventually([&] { return streaming.load() == 3; })) {
      stop.store(true);
      for (auto& t : readers) t.join();
      FAIL() << "the readers never all read";
    }
    const int want = scaled(100, 10);
    std::atomic<int> got{0};
    std::thread writer([&] {
      for (int i = 0; i < want; ++i) {
        l.lock();
        got.fetch_add(1, std::memory_order_relaxed);
        l.unlock();
      }
    });
    const bool finished = eventually([&] { return got.load() == want; });
    stop.store(true);
    writer.join();
    for (auto& t : readers) t.join();
    EXPECT_TRUE(finished) << "the writer got " << got.load() << " of " << want << " acquisitions";
    // (No check that the readers read: the wait above made sure of it before the writer began.)
  }
}

// Bug guarded: a lock that livelocks or collapses when threads outnumber CPUs and holders are
// preempted (unbounded spinning, handing the lock to readers that are not running). 8x more threads than
// CPUs, a quarter of the acquisitions exclusive; every thread must finish all of its work.
TYPED_TEST(SharedLock, OversubscribedProgress) {
  spinwise_test::watchdog dog("OversubscribedProgress");
  using L = TypeParam;
  L l;
  expect_oversubscribed_progress(scaled(300, 20), [&](int step, torn_pair& p) {
    if (step % 4 == 0) {
      std::lock_guard<L> g(l);
      p.write();
    } else {
      std::shared_lock<L> g(l);
      p.read();
    }
  });
}

// Bug guarded: a lock that does not fit the standard adaptors (std::shared_lock, unique_lock,
// scoped_lock with another lock type, which uses try_lock to avoid deadlock) or spinwise's
// annotated guards.
TYPED_TEST(SharedLock, WorksWithStandardAndSpinwiseGuards) {
  using L = TypeParam;
  L l;
  spinwise::spin_shared_mutex other;
  {
    std::shared_lock<L> g(l);
    EXPECT_TRUE(g.owns_lock());
    EXPECT_TRUE(other_thread_try_lock_shared(l));
    EXPECT_FALSE(other_thread_try_lock(l));
  }
  {
    std::unique_lock<L> g(l);
    EXPECT_FALSE(other_thread_try_lock_shared(l));
  }
  const int rounds = scaled(2000, 100);
  long counter = 0;
  std::thread t([&] {
    for (int i = 0; i < rounds; ++i) {
      std::scoped_lock g(other, l);
      ++counter;
    }
  });
  for (int i = 0; i < rounds; ++i) {
    std::scoped_lock g(l, other);
    ++counter;
  }
  t.join();
  EXPECT_EQ(counter, 2L * rounds);
  {
    spinwise::shared_lock_guard<L> g(l);
    EXPECT_FALSE(other_thread_try_lock(l));
  }
  {
    spinwise::lock_guard<L> g(l);
    EXPECT_FALSE(other_thread_try_lock_shared(l));
  }
  EXPECT_TRUE(other_thread_try_lock(l));
}

}  // namespace
