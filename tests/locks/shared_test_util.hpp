#pragma once
// Helpers for the shared-lock tests (shared_*_test.cpp): waiting for an event with a generous
// bound (a broken lock fails the test instead of hanging it), a rendezvous that proves two
// threads were inside at once, an oversubscribed run (and its check of a pair of counters), and
// the mode vocabulary of the S/SX/X tests.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "lock_test_util.hpp"
#include "spinwise/arch.hpp"

namespace spinwise_test {

// Long enough that only a bug (a lost wake-up, a starved waiter) runs into it, on a loaded
// 2-vCPU VM under TSan or qemu; short enough to fail well inside ctest's timeout.
inline constexpr std::chrono::seconds kBound{20};

// Polls pred (yielding, then sleeping 1 ms) until it holds or `bound` passes. Returns pred().
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound = kBound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  for (int i = 0; !pred(); ++i) {
    if (std::chrono::steady_clock::now() >= until) return pred();
    if (i < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

// Ends the process with a message if still armed after `bound`: for the tests in which a bug
// (a lost wake-up) leaves a thread asleep forever, so that they fail with a reason instead of
// stalling until ctest's timeout.
class watchdog {
 public:
  explicit watchdog(const char* what, std::chrono::seconds bound = std::chrono::seconds(60))
      : thread_([this, what, bound] {
          std::unique_lock<std::mutex> g(mu_);
          if (!cv_.wait_for(g, bound, [this] { return disarmed_; })) {
            std::fprintf(stderr, "watchdog: %s: still waiting after %lld s (a thread is stranded)\n", what,
                         static_cast<long long>(bound.count()));
            std::fflush(stderr);
            std::_Exit(3);
          }
        }) {}
  ~watchdog() {
    {
      std::lock_guard<std::mutex> g(mu_);
      disarmed_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

// `n` threads meet: each arrive() returns true once all n have arrived, false if the bound
// passed first. Used to prove that n threads held a shared lock at the same time.
class rendezvous {
 public:
  explicit rendezvous(int n) : n_(n) {}
  bool arrive() {
    arrived_.fetch_add(1);
    return eventually([&] { return arrived_.load() >= n_; });
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
};

// Oversubscription: min(8 x CPUs, 48) threads, each making `iters` calls step(i + t) (t: the
// thread's index, so that the threads stand at different points of a cycle of steps). Returns the
// calls each thread finished, for the caller to check that every thread finished all of them.
template <class Step>
std::vector<int> run_oversubscribed(int iters, Step step) {
  const int threads = static_cast<int>(std::min(8u * cpus(), 48u));
  std::vector<int> done(threads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < iters; ++i) {
        step(i + t);
        ++done[t];  // each thread its own slot
      }
    });
  }
  for (auto& th : ts) th.join();
  return done;
}

// Two counters a writer bumps together under the lock and a reader compares under it: a reader
// that sees them apart (`torn`) ran beside a writer.
struct torn_pair {
  long a = 0, b = 0;
  std::atomic<long> torn{0};
  void write() {
    ++a;
    ++b;
  }
  void read() {
    if (a != b) torn.fetch_add(1, std::memory_order_relaxed);
  }
};

// run_oversubscribed with step(i, pair), whose writes and reads of one torn_pair each hold the
// lock in their mode: every thread must finish all of its calls, with no torn read and no write lost.
template <class Step>
void expect_oversubscribed_progress(int iters, Step step) {
  torn_pair p;
  const std::vector<int> done = run_oversubscribed(iters, [&](int i) { step(i, p); });
  for (std::size_t t = 0; t < done.size(); ++t) EXPECT_EQ(done[t], iters) << "thread " << t;
  EXPECT_EQ(p.torn.load(), 0);
  EXPECT_EQ(p.a, p.b);
}

// The latch modes of sx_lock (S and X also name the modes of any shared lock).
enum class mode { S, SX, X };
inline const char* name(mode m) { return m == mode::S ? "S" : m == mode::SX ? "SX" : "X"; }

template <class L>
void acquire(L& l, mode m) {
  if (m == mode::S) {
    l.lock_shared();
  } else if (m == mode::X) {
    l.lock();
  } else {
    l.lock_sx();
  }
}
template <class L>
bool try_acquire(L& l, mode m) {
  if (m == mode::S) return l.try_lock_shared();
  if (m == mode::X) return l.try_lock();
  return l.try_lock_sx();
}
template <class L>
void release(L& l, mode m) {
  if (m == mode::S) {
    l.unlock_shared();
  } else if (m == mode::X) {
    l.unlock();
  } else {
    l.unlock_sx();
  }
}

// A wait policy for white-box ordering tests of spin_shared_mutex and hybrid_shared_mutex. Its spin
// budget is spent from the start, so a queued reader starts a readers' turn (S) at once, and it
// raises the calling thread's `waiting` flag at the second is_completed() call of a wait. A
// queued reader asks is_completed() once before it sets S (strong CAS: it succeeds in a quiet
// word) and again before it yields, so when the flag rises the reader is queued with S set.
struct signal_policy {
  static inline thread_local std::atomic<bool>* waiting = nullptr;
  static constexpr const char* name() noexcept { return "signal"; }
  class waiter {
   public:
    void snooze() noexcept {}
    bool is_completed() noexcept {
      if (++calls_ == 2 && waiting != nullptr) waiting->store(true);
      return true;
    }
    std::uint32_t rounds() const noexcept { return 0; }
    std::uint64_t relaxes() const noexcept { return 0; }

   private:
    int calls_ = 0;
  };
};

// A Relax that counts its calls. A wait policy calls relax_n once per snooze (one spin round),
// whatever the delay, so this counts the rounds a lock spun through the policy.
struct snooze_counter {
  static inline std::atomic<std::uint64_t> calls{0};
  static void relax_n(std::uint32_t n) noexcept {
    calls.fetch_add(1, std::memory_order_relaxed);
    spinwise::cpu_relax_n(n);
  }
};

// What a blocked acquisition was seen doing while the lock it wanted was held.
struct blocked_wait {
  bool state_known = true;     // false where /proc gives no thread states (qemu-user says '?')
  bool parked = false;         // its thread was seen asleep in the kernel ('S': on the lock's futex)
  bool entered_early = false;  // it got the lock while the caller still held it
};

// The caller holds a lock. `acquire` (take the lock in a mode that hold excludes, then drop it)
// runs in a new thread; once that thread sleeps in the kernel (within kBound), `release` drops the
// caller's hold, and the thread is joined.
template <class Acquire, class Release>
blocked_wait wait_while_held(Acquire acquire, Release release) {
  blocked_wait r;
  r.state_known = thread_state(this_tid()) != '?';
  std::atomic<pid_t> tid{0};
  std::atomic<bool> entered{false};
  std::thread t([&] {
    tid.store(this_tid());
    acquire();
    entered.store(true);
  });
  eventually([&] { return tid.load() != 0; });
  if (r.state_known) {
    r.parked =
        eventually([&] { return entered.load() || thread_state(tid.load()) == 'S'; }) && !entered.load();
  }
  r.entered_early = entered.load();
  release();
  t.join();
  return r;
}

template <class M, class = void>
struct is_shared_timed_lockable : std::false_type {};
template <class M>
struct is_shared_timed_lockable<
    M, std::void_t<decltype(std::declval<M&>().try_lock_shared_for(std::chrono::milliseconds(1))),
                   decltype(std::declval<M&>().try_lock_shared_until(std::chrono::steady_clock::now()))>>
    : std::true_type {};

}  // namespace spinwise_test
