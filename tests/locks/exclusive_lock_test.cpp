// What individual locks promise beyond the conformance suite: constant initialization, FIFO
// order, parking and waking, holding many at once.

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "lock_test_util.hpp"
#include "spinwise/spinwise.hpp"

#if defined(__clang__)
#define SPINWISE_TEST_CONSTINIT [[clang::require_constant_initialization]]
#else
#define SPINWISE_TEST_CONSTINIT __constinit
#endif

namespace {

using spinwise_test::cpus;
using spinwise_test::scaled;

// Bug guarded: a constructor that is not constexpr, so a global lock is initialized at run time
// and can be used (by another static initializer) before that. These fail to compile otherwise.
SPINWISE_TEST_CONSTINIT spinwise::tas_mutex g_tas;
SPINWISE_TEST_CONSTINIT spinwise::ttas_mutex g_ttas;
SPINWISE_TEST_CONSTINIT spinwise::ticket_mutex g_ticket;
SPINWISE_TEST_CONSTINIT spinwise::mcs_mutex g_mcs;
SPINWISE_TEST_CONSTINIT spinwise::hybrid_mutex g_hybrid;

TEST(Layout, GlobalsAreConstantInitializedAndFree) {
  EXPECT_FALSE(g_tas.is_locked());
  EXPECT_FALSE(g_ttas.is_locked());
  EXPECT_FALSE(g_ticket.is_locked());
  EXPECT_FALSE(g_mcs.is_locked());
  EXPECT_FALSE(g_hybrid.is_locked());
  static_assert(sizeof(spinwise::tas_mutex) == 4 && sizeof(spinwise::ttas_mutex) == 4 &&
                sizeof(spinwise::hybrid_mutex) == 4 && sizeof(spinwise::ticket_mutex) == 40 &&
                sizeof(spinwise::mcs_mutex) == 24);
}

// Waits for `done` to reach `n`, or fails the whole binary: a lost wake-up must fail with a
// message, not hang until ctest's timeout.
void await_or_die(const std::atomic<int>& done, int n, const char* what) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (done.load() < n) {
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "FATAL: %s: %d of %d threads finished after 120 s (lost wake-up?)\n", what,
                   done.load(), n);
      std::fflush(stderr);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Bug guarded: a ticket lock that is not FIFO (tickets served out of order). Five waiters on a
// machine of two CPUs are more threads than CPUs, where ticket_mutex stops waiting for a head that
// does not run: the strict variant (patience 0) is the FIFO order itself.
using strict_ticket =
    spinwise::ticket_mutex_t<spinwise::no_backoff_policy<spinwise::ticket_mutex_tag>, spinwise::no_stats, 0>;
TEST(TicketMutex, ServesInArrivalOrder) {
  strict_ticket m;
  constexpr int kThreads = 5;
  std::vector<int> order;
  std::vector<std::thread> ts;
  m.lock();
  for (int i = 0; i < kThreads; ++i) {
    ts.emplace_back([&, i] {
      m.lock();
      order.push_back(i);
      m.unlock();
    });
    while (m.waiting() != static_cast<std::uint32_t>(i + 1)) std::this_thread::yield();  // i has its ticket
  }
  m.unlock();
  for (auto& t : ts) t.join();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kThreads));
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(order[i], i);
  EXPECT_FALSE(m.is_locked());
  EXPECT_EQ(m.waiting(), 0u);
}

// Bug guarded: a FIFO lock that waits for a queue head that does not run (the collapse when
// threads outnumber CPUs). The head is made to stop polling by a signal handler that sleeps until
// the test lets it go; a thread that comes meanwhile must get the lock first. The strict variant
// keeps the order. No timing is asserted: only who got the lock first.
std::atomic<bool> g_head_stalled{false};
std::atomic<bool> g_head_go{false};
extern "C" void stall_until_go(int) {
  g_head_stalled.store(true);
  while (!g_head_go.load()) {
    timespec ts{0, 1'000'000};
    nanosleep(&ts, nullptr);
  }
}

// SIGUSR1 stops the thread it is sent to in stall_until_go() until g_head_go.
void arm_stall() {
  struct sigaction sa {};
  sa.sa_handler = stall_until_go;
  sigemptyset(&sa.sa_mask);
  EXPECT_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
  g_head_stalled = false;
  g_head_go = false;
}
// Stops t and returns once it is stopped.
void stall(std::thread& t) {
  pthread_kill(t.native_handle(), SIGUSR1);
  while (!g_head_stalled.load()) std::this_thread::yield();
}

template <class Ticket>
std::vector<int> order_with_a_stalled_head() {
  arm_stall();
  Ticket m;
  std::vector<int> order;
  std::atomic<int> done{0};
  std::atomic<bool> b_started{false};
  m.lock();
  std::thread a([&] {
    m.lock();
    order.push_back(0);
    m.unlock();
    done.fetch_add(1);
  });
  while (!m.has_waiters()) std::this_thread::yield();  // a is queued: the head
  stall(a);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a's heartbeat ages past the patience
  std::thread b([&] {
    b_started = true;
    m.lock();
    order.push_back(1);
    m.unlock();
    done.fetch_add(1);
  });
  while (!b_started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // b is inside lock()
  m.unlock();
  if (Ticket::kSkipsStalledHeads)
    await_or_die(done, 1, "a thread that runs got no lock while the head stalled");
  g_head_go = true;
  await_or_die(done, 2, "both waiters");
  a.join();
  b.join();
  signal(SIGUSR1, SIG_DFL);
  EXPECT_FALSE(m.is_locked());
  return order;
}

// Bug guarded: the head's advance carrying into the next-ticket half when the head wraps at 2^32,
// which leaves a phantom ticket queued for good (try_lock refused forever, queued waiters never
// served). The queue word is the lock's first member (standard layout): the test starts it just
// below the wrap and passes four queued acquisitions through it.
TEST(TicketMutex, QueueSurvivesTheTicketWrap) {
  strict_ticket m;
  static_assert(std::is_standard_layout_v<strict_ticket>);
  auto* queue = reinterpret_cast<std::atomic<std::uint64_t>*>(&m);
  queue->store(0xfffffffeull << 32 | 0xfffffffeull);
  ASSERT_FALSE(m.has_waiters());
  for (int i = 0; i < 4; ++i) {
    m.lock();
    std::thread t([&] {
      m.lock();
      m.unlock();
    });
    while (!m.has_waiters()) std::this_thread::yield();
    m.unlock();
    t.join();
    EXPECT_FALSE(m.has_waiters()) << "after queued acquisition " << i;
  }
  EXPECT_EQ(queue->load() >> 32, 2u) << "four tickets from 0xfffffffe";
  EXPECT_TRUE(m.try_lock());
  m.unlock();
}

template <class Base>
struct skips : Base {
  static constexpr bool kSkipsStalledHeads = true;
};
template <class Base>
struct keeps_order : Base {
  static constexpr bool kSkipsStalledHeads = false;
};

TEST(TicketMutex, DoesNotWaitForAHeadThatStopsRunning) {
  EXPECT_EQ(order_with_a_stalled_head<skips<spinwise::ticket_mutex>>(), (std::vector<int>{1, 0}));
}
TEST(TicketMutex, StrictVariantWaitsForItsHead) {
  EXPECT_EQ(order_with_a_stalled_head<keeps_order<strict_ticket>>(), (std::vector<int>{0, 1}));
}
TEST(McsMutex, DoesNotWaitForAHeadThatStopsRunning) {
  EXPECT_EQ(order_with_a_stalled_head<skips<spinwise::mcs_mutex>>(), (std::vector<int>{1, 0}));
}
using strict_mcs =
    spinwise::mcs_mutex_t<spinwise::no_backoff_policy<spinwise::mcs_mutex_tag>, spinwise::no_stats, 0>;
TEST(McsMutex, StrictVariantWaitsForItsHead) {
  EXPECT_EQ(order_with_a_stalled_head<keeps_order<strict_mcs>>(), (std::vector<int>{0, 1}));
}

// Bug guarded: a new queue head with no heartbeat until its own first poll, so that a release
// just after the handoff freed the lock and the releaser took it straight back, ahead of the head
// (ticket_mutex let the releaser overtake in nearly every unlock of a two-thread loop). B waits
// behind A, then is stopped by a signal, so it can show nothing once it is the head; A takes the
// lock from the main thread, lets it go and asks again at once. B ran until it was stopped, and
// the lock must vouch for it with that: A's second request waits behind B. A patience of a second
// keeps every beat B showed fresh, so the order does not depend on the host's scheduling; the
// default patience runs the same code. Each lock says how a second waiter shows in its queue.
constexpr std::uint32_t kSecondUs = 1'000'000;
using patient_ticket = spinwise::ticket_mutex_t<spinwise::no_backoff_policy<spinwise::ticket_mutex_tag>,
                                                spinwise::no_stats, kSecondUs>;
using patient_mcs = spinwise::mcs_mutex_t<spinwise::no_backoff_policy<spinwise::mcs_mutex_tag>,
                                          spinwise::no_stats, kSecondUs>;
// How each lock shows that another thread joined its queue after `last` (what last_queued() said
// then), without touching a waiter's memory (a node lives on its thread's stack, and ThreadSanitizer
// ignores the lock's own accesses there: it cannot see the node published). ticket_mutex counts
// its queue; mcs_mutex's tail (its first member) is the last queued waiter's node, which moves
// when another joins.
const void* last_queued(patient_ticket&) { return nullptr; }
const void* last_queued(patient_mcs& m) {
  static_assert(std::is_standard_layout_v<patient_mcs>);
  return reinterpret_cast<std::atomic<const void*>*>(&m)->load();
}
bool joined_after(patient_ticket& m, const void*) { return m.waiting() == 2; }
bool joined_after(patient_mcs& m, const void* last) {
  const void* tail = last_queued(m);
  return tail != nullptr && tail != last;
}

// Where the test below is, on stderr: it once hung under qemu-aarch64 in CI-like load (the
// aarch64 stage's 300 s timeout, 2026-12-07; not reproduced in 250 runs alone, beside busy loops or
// four at once), and a timed-out test's output is all ctest keeps of it.
void handoff_phase(const char* what) { std::fprintf(stderr, "handoff test: %s\n", what); }

template <class Lock>
std::vector<int> order_after_a_handoff_to_a_stopped_head() {
  arm_stall();
  Lock m;
  std::vector<int> order;  // written under m
  std::atomic<int> got{0};
  std::atomic<bool> a_asks_again{false};
  m.lock();
  std::thread a([&] {
    m.lock();
    order.push_back(0);
    got.fetch_add(1);
    m.unlock();
    a_asks_again = true;
    m.lock();
    order.push_back(2);
    got.fetch_add(1);
    m.unlock();
  });
  while (!m.has_waiters()) std::this_thread::yield();  // a is the head
  handoff_phase("a waits at the head");
  const void* a_queued = last_queued(m);
  std::thread b([&] {
    m.lock();
    order.push_back(1);
    got.fetch_add(1);
    m.unlock();
  });
  while (!joined_after(m, a_queued)) std::this_thread::yield();  // b is behind a
  handoff_phase("b waits behind a");
  const void* b_queued = last_queued(m);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stall(b);
  handoff_phase("b is stopped; the lock handed to a");
  m.unlock();
  // Until a has its second turn (the bug) or waits behind b (queued: b, still stopped, is the head
  // and a behind it).
  while (!(a_asks_again.load() && (got.load() == 2 || joined_after(m, b_queued)))) std::this_thread::yield();
  handoff_phase(got.load() == 2 ? "a took its second turn" : "a waits behind b; b let go");
  g_head_go = true;
  a.join();
  b.join();
  handoff_phase("both done");
  signal(SIGUSR1, SIG_DFL);
  EXPECT_FALSE(m.is_locked());
  return order;
}

TEST(TicketMutex, TheNextHeadKeepsItsTurnFromTheHandoff) {
  EXPECT_EQ(order_after_a_handoff_to_a_stopped_head<patient_ticket>(), (std::vector<int>{0, 1, 2}));
}
TEST(McsMutex, TheNextHeadKeepsItsTurnFromTheHandoff) {
  EXPECT_EQ(order_after_a_handoff_to_a_stopped_head<patient_mcs>(), (std::vector<int>{0, 1, 2}));
}

// Bug guarded: a parked waiter never woken (the lost wake-up of a futex lock that forgets it had
// sleepers: a woken thread that re-takes the lock as 1 instead of 2). Every waiter is seen asleep
// in the kernel before the release, and each reports the park it made.
struct park_now_tag;
using park_now_mutex = spinwise::hybrid_mutex_t<spinwise::time_policy<park_now_tag>>;

struct parks_seen : spinwise::no_stats {
  static constexpr bool enabled = true;
  static inline std::atomic<std::uint64_t> parks{0};
  static void on_contended(const spinwise::wait_record& r, spinwise::lock_mode) noexcept {
    parks.fetch_add(r.parks);
  }
};
using counted_park_now_mutex = spinwise::hybrid_mutex_t<spinwise::time_policy<park_now_tag>, parks_seen>;

TEST(HybridMutex, ParkedWaitersAreAllWoken) {
  ASSERT_TRUE(park_now_mutex::policy::set_spin_loops(0));  // park at once
  counted_park_now_mutex m;
  constexpr int kThreads = 6;
  std::atomic<int> done{0};
  std::atomic<pid_t> tids[kThreads] = {};
  long counter = 0;
  std::vector<std::thread> ts;
  m.lock();
  for (int i = 0; i < kThreads; ++i) {
    ts.emplace_back([&, i] {
      tids[i] = spinwise_test::this_tid();
      m.lock();
      ++counter;
      m.unlock();
      done.fetch_add(1);
    });
  }
  int asleep = 0;
  for (auto& tid : tids) asleep += spinwise_test::await_asleep(tid) ? 1 : 0;
  m.unlock();
  await_or_die(done, kThreads, "ParkedWaitersAreAllWoken");
  for (auto& t : ts) t.join();
  EXPECT_EQ(counter, kThreads);
  EXPECT_FALSE(m.is_locked());
  if (asleep == kThreads) {
    EXPECT_GE(parks_seen::parks.load(), static_cast<std::uint64_t>(kThreads))
        << "each waiter slept once at least";
  } else {
    EXPECT_EQ(asleep, 0) << "/proc showed some threads' states but not others'";
    std::printf("note: /proc does not show thread states here; parking not verified\n");
  }
  park_now_mutex::policy::reset();
}

// The same under churn: every acquisition that finds the lock busy parks, with many threads.
TEST(HybridMutex, ParkingChurnLosesNoWakeUp) {
  ASSERT_TRUE(park_now_mutex::policy::set_spin_loops(0));
  park_now_mutex m;
  const int threads = static_cast<int>(std::min(4u * cpus(), 32u));
  const int iters = scaled(2000, 100);
  std::atomic<int> done{0};
  long counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < iters; ++i) {
        if ((i + t) % 3 == 0) {
          while (!m.try_lock_for(std::chrono::microseconds(50))) {
          }
        } else {
          m.lock();
        }
        ++counter;
        m.unlock();
      }
      done.fetch_add(1);
    });
  }
  await_or_die(done, threads, "ParkingChurnLosesNoWakeUp");
  for (auto& t : ts) t.join();
  EXPECT_EQ(counter, static_cast<long>(threads) * iters);
  park_now_mutex::policy::reset();
}

// A timed waiter that times out while parked (no wake-up consumed) leaves a waiter behind it
// that stays asleep until the release, then gets the lock. Both are seen asleep first. The case
// where the timed waiter was woken and lost the lock to a barging thread is forced step by step
// in wakeup_test.cpp (TimedWaiterThatGivesUpAfterAWakeUpPassesItOn).
TEST(HybridMutex, TimedOutParkerDoesNotStrandOthers) {
  ASSERT_TRUE(park_now_mutex::policy::set_spin_loops(0));
  park_now_mutex m;
  std::atomic<int> done{0};
  std::atomic<pid_t> quitter_tid{0}, stayer_tid{0};
  std::atomic<bool> quitter_asleep{false};
  m.lock();
  std::thread quitter([&] {
    quitter_tid = spinwise_test::this_tid();
    EXPECT_FALSE(m.try_lock_for(std::chrono::milliseconds(300)));
    done.fetch_add(1);
  });
  std::thread stayer([&] {
    stayer_tid = spinwise_test::this_tid();
    m.lock();
    m.unlock();
    done.fetch_add(1);
  });
  quitter_asleep = spinwise_test::await_asleep(quitter_tid);
  const bool stayer_asleep = spinwise_test::await_asleep(stayer_tid);
  quitter.join();  // timed out while the lock was held
  m.unlock();
  await_or_die(done, 2, "TimedOutParkerDoesNotStrandOthers");
  stayer.join();
  EXPECT_TRUE(m.try_lock());
  m.unlock();
  if (!(quitter_asleep && stayer_asleep)) std::printf("note: not both seen asleep (no /proc states here)\n");
  park_now_mutex::policy::reset();
}

// Bug guarded: an MCS lock whose queue node is tied to one lock per thread (a thread-local node
// reused while still queued elsewhere). Holding several at once, contended, must work.
TEST(McsMutex, ManyHeldAtOnceUnderContention) {
  constexpr int kLocks = 6;
  spinwise::mcs_mutex locks[kLocks];
  long counters[kLocks] = {};
  const int iters = scaled(3000, 100);
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < iters; ++i) {
        for (auto& l : locks) l.lock();  // one global order: no deadlock
        for (long& c : counters) ++c;
        for (int k = kLocks - 1; k >= 0; --k) locks[k].unlock();
      }
    });
  }
  for (auto& t : ts) t.join();
  for (long c : counters) EXPECT_EQ(c, 3L * iters);
  for (auto& l : locks) EXPECT_FALSE(l.is_locked());
}

// The annotated guards work at run time too (their compile-time side is the thread-safety test).
TEST(Guards, LockGuardAndAdoptLock) {
  spinwise::ttas_mutex m;
  {
    spinwise::lock_guard<spinwise::ttas_mutex> g(m);
    EXPECT_TRUE(m.is_locked());
  }
  EXPECT_FALSE(m.is_locked());
  m.lock();
  { spinwise::lock_guard<spinwise::ttas_mutex> g(m, std::adopt_lock); }
  EXPECT_FALSE(m.is_locked());
}

}  // namespace
