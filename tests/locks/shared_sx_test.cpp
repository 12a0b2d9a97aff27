// sx_lock's three modes: the full S/SX/X compatibility matrix, SX -> X upgrade and X -> SX
// downgrade without releasing, the SX guard, and a stress of every mode at once. Typed over
// the default latch and a variant that never spins (every wait parks on the futex).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "shared_test_util.hpp"
#include "spinwise/guard.hpp"
#include "spinwise/sx_lock.hpp"
#include "spinwise/wait_policy.hpp"

namespace {

using spinwise_test::acquire;
using spinwise_test::eventually;
using spinwise_test::expect_oversubscribed_progress;
using spinwise_test::mode;
using spinwise_test::name;
using spinwise_test::release;
using spinwise_test::scale;
using spinwise_test::scaled;
using spinwise_test::torn_pair;
using spinwise_test::try_acquire;

struct park_now_tag;
using park_now_policy = spinwise::innodb_policy<park_now_tag>;
const bool kParkNowSet = park_now_policy::set_spin_loops(0).ok();

using LatchTypes = ::testing::Types<spinwise::sx_lock, spinwise::sx_lock_t<park_now_policy>>;

template <class L>
class SxLatch : public ::testing::Test {};
TYPED_TEST_SUITE(SxLatch, LatchTypes);

constexpr mode kModes[] = {mode::S, mode::SX, mode::X};

// Whether another thread's try in mode m succeeds now (and then releases at once).
template <class L>
bool other_thread_gets(L& l, mode m) {
  bool got = false;
  std::thread([&] {
    got = try_acquire(l, m);
    if (got) release(l, m);
  }).join();
  return got;
}

// InnoDB's table: S admits S and SX; SX admits S only; X admits nothing.
constexpr bool compatible(mode held, mode wanted) {
  if (held == mode::S) return wanted != mode::X;
  if (held == mode::SX) return wanted == mode::S;
  return false;
}

// Bug guarded: the park-now variant spinning after all (a budget of 0 rounds read as 1, a wait
// that snoozes before it consults the budget, knobs of another Tag), so the typed tests run the
// spin path twice and the park path never starts at once. Each mode, against each hold that
// excludes it: the waiter's Relax counts its rounds (same Tag, so the same knobs as
// park_now_policy), and /proc must show it asleep in the kernel while the latch is held.
TEST(SxLatchSetup, ParkNowVariantNeverSpins) {
  ASSERT_TRUE(kParkNowSet);
  using counted = spinwise::innodb_policy<park_now_tag, spinwise_test::snooze_counter>;
  using L = spinwise::sx_lock_t<counted>;
  ASSERT_EQ(counted::spin_loops(), 0u);
  bool state_known = true;
  for (mode held : kModes) {
    for (mode wanted : kModes) {
      if (compatible(held, wanted)) continue;
      L l;
      acquire(l, held);
      spinwise_test::snooze_counter::calls = 0;
      const spinwise_test::blocked_wait b = spinwise_test::wait_while_held(
          [&] {
            acquire(l, wanted);
            release(l, wanted);
          },
          [&] { release(l, held); });
      EXPECT_FALSE(b.entered_early) << name(wanted) << " requested, " << name(held) << " held";
      EXPECT_EQ(spinwise_test::snooze_counter::calls.load(), 0u)
          << name(wanted) << " requested, " << name(held) << " held: the park-now variant spun";
      if (b.state_known) {
        EXPECT_TRUE(b.parked) << name(wanted) << " requested, " << name(held)
                              << " held: never seen asleep in the kernel while the latch was held";
      }
      state_known = b.state_known;
    }
  }
  if (!state_known) {
    GTEST_SKIP() << "/proc gives no thread states here (qemu-user?): spin rounds checked, parking not";
  }
}

// Bug guarded: any wrong cell of the compatibility matrix. Every ordered pair (so both orders
// of each pair of modes), the second mode requested with try_* from another thread.
TYPED_TEST(SxLatch, CompatibilityMatrixByTryLock) {
  TypeParam l;
  for (mode held : kModes) {
    for (mode wanted : kModes) {
      acquire(l, held);
      bool got = false;
      std::thread([&] {
        got = try_acquire(l, wanted);
        if (got) release(l, wanted);
      }).join();
      EXPECT_EQ(got, compatible(held, wanted)) << name(held) << " held, " << name(wanted) << " requested";
      release(l, held);
    }
  }
  // Released completely: X is free.
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

// With `held` held, another thread's request for `wanted` (enter(): true once it holds it, and
// then it releases) waits, and gets in once `held` is released.
template <class L, class Enter>
void waits_then_enters(L& l, mode held, mode wanted, Enter enter) {
  acquire(l, held);
  std::atomic<bool> started{false}, entered{false};
  std::thread t([&] {
    started.store(true);
    if (enter()) {
      entered.store(true);
      release(l, wanted);
    }
  });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // room to misbehave; not a timing assertion
  EXPECT_FALSE(entered.load()) << name(wanted) << " entered while " << name(held) << " was held";
  release(l, held);
  t.join();
  EXPECT_TRUE(entered.load()) << name(wanted) << " was never admitted after " << name(held) << " left";
}

// Bug guarded: a blocking request of an incompatible mode that gets in anyway, or that is not
// woken when the holder leaves. Every incompatible pair, each request blocking in another thread.
TYPED_TEST(SxLatch, IncompatibleRequestsWaitAndEnterAfterRelease) {
  spinwise_test::watchdog dog("IncompatibleRequestsWaitAndEnterAfterRelease");
  TypeParam l;
  for (mode held : kModes) {
    for (mode wanted : kModes) {
      if (compatible(held, wanted)) continue;
      waits_then_enters(l, held, wanted, [&] {
        acquire(l, wanted);
        return true;
      });
    }
  }
}

// Bug guarded: a timed SX call that takes another mode (the shell's S or X sequence instead of
// SX's), or that does not give up: against each held mode, a timed SX request from another
// thread gets in exactly where try_lock_sx does, whatever the deadline (0, past, a few ms, on
// any clock), and fails no earlier than its deadline otherwise.
TYPED_TEST(SxLatch, TimedSxFollowsTheMatrix) {
  using std::chrono::milliseconds;
  TypeParam l;
  for (mode held : kModes) {
    acquire(l, held);
    const bool want = compatible(held, mode::SX);
    const auto timed = [&](auto call) {
      return spinwise_test::in_other_thread([&] {
        const bool got = call();
        if (got) l.unlock_sx();
        return got;
      });
    };
    EXPECT_EQ(timed([&] { return l.try_lock_sx_for(milliseconds(0)); }), want) << name(held) << " held";
    EXPECT_EQ(timed([&] { return l.try_lock_sx_for(milliseconds(-1)); }), want) << name(held) << " held";
    EXPECT_EQ(timed([&] { return l.try_lock_sx_until(std::chrono::steady_clock::now() - milliseconds(1)); }),
              want)
        << name(held) << " held";
    const auto at = std::chrono::system_clock::now() + milliseconds(3);
    EXPECT_EQ(timed([&] {
                const bool got = l.try_lock_sx_until(at);
                if (!got) {
                  EXPECT_GE(std::chrono::system_clock::now(), at) << "gave up before its deadline";
                }
                return got;
              }),
              want)
        << name(held) << " held";
    EXPECT_EQ(timed([&] { return l.try_lock_sx_for(milliseconds(3)); }), want) << name(held) << " held";
    release(l, held);
  }
  // Nothing left behind: every mode is free.
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

// Bug guarded: a timed SX wait that misses the release it waits for, or enters while SX or X is
// still held. The holder leaves only once the waiter has started; the deadline is far away.
TYPED_TEST(SxLatch, TimedSxEntersAfterRelease) {
  spinwise_test::watchdog dog("TimedSxEntersAfterRelease");
  TypeParam l;
  for (mode held : {mode::SX, mode::X}) {
    waits_then_enters(l, held, mode::SX, [&] {
      const bool got = l.try_lock_sx_for(std::chrono::minutes(5));
      EXPECT_TRUE(got) << "timed SX gave up although " << name(held) << " was released";
      if (got) {
        EXPECT_FALSE(l.try_lock()) << "X free while the timed SX holds";
      }
      return got;
    });
  }
}

// Bug guarded: an upgrade that lets the SX holder write while S holders still read, that lets
// new S holders in while it waits (InnoDB's X request is visible at once: new S requests wait,
// so the upgrade cannot starve), or that lets another SX/X in at any point.
TYPED_TEST(SxLatch, UpgradeWaitsForReadersAndHoldsOffNewOnes) {
  spinwise_test::watchdog dog("UpgradeWaitsForReadersAndHoldsOffNewOnes");
  TypeParam l;
  l.lock_shared();  // the reader the upgrade must wait for
  std::atomic<bool> has_sx{false}, upgraded{false}, may_finish{false};
  std::thread upgrader([&] {
    l.lock_sx();
    has_sx.store(true);
    l.upgrade();
    upgraded.store(true);
    while (!may_finish.load()) std::this_thread::yield();
    l.unlock();
  });
  ASSERT_TRUE(eventually([&] { return has_sx.load(); }));
  auto other_try = [&](mode m) { return other_thread_gets(l, m); };
  // While the upgrade waits: new S refused (once the request is visible), SX and X refused.
  ASSERT_TRUE(eventually([&] { return !other_try(mode::S); }))
      << "new readers still enter during the upgrade";
  EXPECT_FALSE(other_try(mode::SX));
  EXPECT_FALSE(other_try(mode::X));
  EXPECT_FALSE(upgraded.load()) << "upgrade returned while a reader was inside";
  l.unlock_shared();
  ASSERT_TRUE(eventually([&] { return upgraded.load(); })) << "upgrade never completed after the reader left";
  EXPECT_FALSE(other_try(mode::S));
  EXPECT_FALSE(other_try(mode::SX));
  may_finish.store(true);
  upgrader.join();
  EXPECT_TRUE(other_try(mode::X));
}

// Bug guarded: a downgrade that releases too much (admits SX or X) or too little (keeps
// waiting S requests out), and an SX that cannot be released after it.
TYPED_TEST(SxLatch, DowngradeLetsReadersInButNotSxOrX) {
  spinwise_test::watchdog dog("DowngradeLetsReadersInButNotSxOrX");
  TypeParam l;
  l.lock();
  std::atomic<bool> started{false}, reader_in{false}, release_reader{false};
  std::thread reader([&] {
    started.store(true);
    l.lock_shared();  // waits behind X
    reader_in.store(true);
    while (!release_reader.load()) std::this_thread::yield();
    l.unlock_shared();
  });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let it spin out and park (not asserted)
  EXPECT_FALSE(reader_in.load());
  l.downgrade();
  EXPECT_TRUE(eventually([&] { return reader_in.load(); })) << "the waiting reader stayed out after X -> SX";
  bool sx = true, x = true;
  std::thread([&] {
    sx = l.try_lock_sx();
    if (sx) l.unlock_sx();
    x = l.try_lock();
    if (x) l.unlock();
  }).join();
  EXPECT_FALSE(sx) << "SX entered beside a downgraded SX";
  EXPECT_FALSE(x);
  release_reader.store(true);
  reader.join();
  l.unlock_sx();
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

// Bug guarded: the adaptors: std::shared_lock holds S, std::lock_guard / std::unique_lock hold
// X, spinwise::sx_guard holds SX (and releases it).
TYPED_TEST(SxLatch, GuardsHoldTheRightModes) {
  using L = TypeParam;
  L l;
  auto other_try = [&](mode m) { return other_thread_gets(l, m); };
  {
    spinwise::sx_guard<L> g(l);
    EXPECT_TRUE(other_try(mode::S));
    EXPECT_FALSE(other_try(mode::SX));
  }
  {
    std::shared_lock<L> g(l);
    EXPECT_TRUE(other_try(mode::SX));
    EXPECT_FALSE(other_try(mode::X));
  }
  {
    std::lock_guard<L> g(l);
    EXPECT_FALSE(other_try(mode::S));
  }
  {
    std::unique_lock<L> g(l, std::try_to_lock);
    EXPECT_TRUE(g.owns_lock());
  }
  l.lock_sx();
  { spinwise::sx_guard<L> g(l, std::adopt_lock); }
  EXPECT_TRUE(other_try(mode::X)) << "sx_guard(adopt_lock) did not release";
}

// Bug guarded: sx_guard's destructor called unlock_sx() whatever the mode, so a guard upgraded
// and never downgraded released SX while X was held: X stayed set, and the latch was locked for
// good (try_lock and try_lock_shared failed from then on), silently.
TYPED_TEST(SxLatch, GuardUpgradedAndNotDowngradedLeavesTheLatchFree) {
  using L = TypeParam;
  L l;
  {
    spinwise::sx_guard<L> g(l);
    g.upgrade();
    EXPECT_FALSE(other_thread_gets(l, mode::S)) << "the guard's upgrade() did not take X";
  }
  EXPECT_TRUE(l.try_lock()) << "the upgraded guard left X held";
  l.unlock();
  EXPECT_TRUE(l.try_lock_shared());
  l.unlock_shared();
  // The same with an adopted SX, and after an upgrade, downgrade and upgrade again.
  l.lock_sx();
  {
    spinwise::sx_guard<L> g(l, std::adopt_lock);
    g.upgrade();
    g.downgrade();
    g.upgrade();
  }
  EXPECT_TRUE(other_thread_gets(l, mode::X)) << "the adopting guard left the latch held";
}

// Bug guarded: a guard's downgrade() that does not reach the latch (S stays out) or that the
// guard does not record (its destructor would release X that is no longer held).
TYPED_TEST(SxLatch, GuardDowngradeReturnsToSx) {
  using L = TypeParam;
  L l;
  {
    spinwise::sx_guard<L> g(l);
    g.upgrade();
    EXPECT_FALSE(other_thread_gets(l, mode::S));
    g.downgrade();
    EXPECT_TRUE(other_thread_gets(l, mode::S)) << "S stayed out after the guard's downgrade()";
    EXPECT_FALSE(other_thread_gets(l, mode::SX));
    EXPECT_FALSE(other_thread_gets(l, mode::X));
  }
  EXPECT_TRUE(other_thread_gets(l, mode::SX)) << "the downgraded guard did not release SX";
  EXPECT_TRUE(other_thread_gets(l, mode::X));
}

// Bug guarded: a release or change of a mode the caller does not hold, silent: unlock_sx() while
// X is held (the old guard's destructor after an upgrade) left the latch locked for good;
// unlock_shared() with no S inside wraps the S count; upgrade() without SX sets X and SX together.
// The mode checks (sx_lock.hpp) abort instead, naming the call; this binary is built with them
// (tests/locks/CMakeLists.txt), as every build without NDEBUG is.
static_assert(SPINWISE_CHECK_MODES, "spinwise_shared_sx_test is built with SPINWISE_CHECK_MODES=1");

// What a misuse dies with: the check's message, or under ThreadSanitizer its own report, which
// comes first where the latch's mutex annotations already show the wrong mode (halt_on_error).
std::string dies_saying(const std::string& check_message) {
#if defined(SPINWISE_TSAN_HOOKS)
  return check_message + "|ThreadSanitizer: [a-z ]*unlock of a";
#else
  return check_message;
#endif
}

// The death tests fork without re-executing the binary ("fast"): under qemu-user a re-exec of an
// aarch64 binary fails (Exec format error). ctest runs each test in a process of its own, so no
// other thread exists when they fork.
TEST(SxLatchModeChecks, ReleasingAModeNotHeldAborts) {
  GTEST_FLAG_SET(death_test_style, "fast");
  using spinwise::sx_lock;
  EXPECT_DEATH(
      {
        sx_lock l;
        l.lock();
        l.unlock_sx();
      },
      dies_saying("unlock_sx\\(\\) without SX held \\(the latch had X 1, SX 0, S holders 0\\)"));
  EXPECT_DEATH(
      {
        sx_lock l;
        l.lock_sx();
        l.unlock();
      },
      dies_saying("unlock\\(\\) without X held \\(the latch had X 0, SX 1"));
  EXPECT_DEATH(
      {
        sx_lock l;
        l.lock_sx();
        l.unlock_shared();
      },
      dies_saying("unlock_shared\\(\\) without S held \\(the latch had X 0, SX 1, S holders 0\\)"));
  EXPECT_DEATH(
      {
        sx_lock l;
        l.lock_shared();
        l.upgrade();
      },
      dies_saying("upgrade\\(\\) without SX held"));
  EXPECT_DEATH(
      {
        sx_lock l;
        l.lock_sx();
        l.downgrade();
      },
      dies_saying("downgrade\\(\\) without X held \\(the latch had X 0, SX 1"));
}

// The issue's own case: the latch upgraded behind the guard's back, never downgraded; the guard
// releases SX while X is held.
TEST(SxLatchModeChecks, GuardOverALatchUpgradedBehindItsBackAborts) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_DEATH(
      {
        spinwise::sx_lock l;
        spinwise::sx_guard<spinwise::sx_lock> g(l);
        l.upgrade();
      },
      dies_saying("unlock_sx\\(\\) without SX held \\(the latch had X 1"));
}

// Correct releases and changes of mode pass the checks, whatever the other modes held.
TEST(SxLatchModeChecks, CorrectUseDoesNotTrip) {
  spinwise::sx_lock l;
  l.lock_shared();
  l.lock_sx();
  l.lock_shared();
  l.unlock_shared();
  l.unlock_sx();
  l.unlock_shared();
  l.lock_sx();
  l.upgrade();
  l.downgrade();
  l.unlock_sx();
  l.lock();
  l.unlock();
  EXPECT_TRUE(l.try_lock());
  l.unlock();
}

// Bug guarded: any mode admitted against the matrix under load, lost writes, and upgrades or
// downgrades that corrupt the word. a and b are written only under X (kept equal), c under SX
// or X (SX holders exclude each other); S and SX check a == b. Time-bounded; asserts work done.
TYPED_TEST(SxLatch, EveryModeAtOnceKeepsTheInvariants) {
  TypeParam l;
  long a = 0, b = 0, c = 0;  // plain: only the latch orders them
  std::atomic<bool> stop{false};
  std::atomic<long> torn{0}, s_ops{0}, sx_ops{0}, x_ops{0}, up_ops{0};
  std::atomic<long> a_writes{0}, c_writes{0};  // what a and c must add up to
  std::vector<std::thread> ts;
  ts.emplace_back([&] {  // S
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      std::shared_lock<TypeParam> g(l);
      if (a != b) torn.fetch_add(1);
      ++n;
    }
    s_ops += n;
  });
  ts.emplace_back([&] {  // SX, sometimes downgraded from X
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      if (n % 3 == 0) {
        l.lock();
        ++a;
        ++b;
        ++c;
        a_writes.fetch_add(1);
        c_writes.fetch_add(1);
        l.downgrade();
      } else {
        l.lock_sx();
        ++c;
        c_writes.fetch_add(1);
      }
      if (a != b) torn.fetch_add(1);
      l.unlock_sx();
      ++n;
    }
    sx_ops += n;
  });
  ts.emplace_back([&] {  // SX -> X -> SX
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      l.lock_sx();
      ++c;
      c_writes.fetch_add(1);
      l.upgrade();
      ++a;
      std::this_thread::yield();
      ++b;
      a_writes.fetch_add(1);
      l.downgrade();
      if (a != b) torn.fetch_add(1);
      l.unlock_sx();
      ++n;
    }
    up_ops += n;
  });
  ts.emplace_back([&] {  // X
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      if (n % 2 == 0) {
        l.lock();
      } else if (!l.try_lock()) {
        continue;
      }
      ++a;
      ++b;
      ++c;
      a_writes.fetch_add(1);
      c_writes.fetch_add(1);
      l.unlock();
      ++n;
    }
    x_ops += n;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(400 * scale()) + 50));
  stop.store(true);
  for (auto& t : ts) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(s_ops.load(), 0);
  EXPECT_GT(sx_ops.load(), 0);
  EXPECT_GT(up_ops.load(), 0);
  EXPECT_GT(x_ops.load(), 0);
  EXPECT_EQ(a, a_writes.load()) << "lost X writes";
  EXPECT_EQ(b, a);
  EXPECT_EQ(c, c_writes.load()) << "lost SX writes";
}

// Bug guarded: a latch that livelocks or strands a sleeper when threads outnumber CPUs, in any
// mode. 8x more threads than CPUs; every thread must finish its count.
TYPED_TEST(SxLatch, OversubscribedProgressInEveryMode) {
  spinwise_test::watchdog dog("OversubscribedProgressInEveryMode");
  using L = TypeParam;
  L l;
  expect_oversubscribed_progress(scaled(200, 20), [&](int step, torn_pair& p) {
    switch (step % 6) {
      case 0:
        l.lock();
        p.write();
        l.unlock();
        break;
      case 1:
        l.lock_sx();
        l.upgrade();
        p.write();
        l.downgrade();
        l.unlock_sx();
        break;
      case 2:
        l.lock_sx();
        p.read();
        l.unlock_sx();
        break;
      default:
        l.lock_shared();
        p.read();
        l.unlock_shared();
    }
  });
}

}  // namespace
