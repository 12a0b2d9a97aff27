// Timed, untimed and barging waiters on one hybrid lock, 8 threads per CPU (4 at a reduced
// SPINWISE_TEST_SCALE; 8 to 64 in all), with the spin budget moved under them while they wait.
// Mutual exclusion is checked in every critical section, and a thread left asleep on a free lock
// (a lost wake-up) fails the test instead of hanging it.
//
// The work comes in rounds: in each, every thread makes a few attempts of its kind and then
// meets the others at a barrier. A lost wake-up needs a quiet lock to stay lost (any later
// sleeper marks the word again, and the next unlock wakes the oldest sleeper), and the end of
// every round is such a quiet moment: the untimed waiters must all get in before the round can
// end. A main-thread monitor that sees no progress for kStall reports which threads are stuck
// and in which call, whether the lock is free, and whether one extra wake frees them.
//
// Bug guarded (hybrid_mutex): timed waiter A and untimed waiter D are parked (word 2); the
// holder's unlock wakes A; barger C takes the free word (0 -> 1); A's deadline passes and it
// returns false without marking the word 2 again; C's unlock sees 1 and wakes no one: D sleeps
// with the lock free. For hybrid_shared_mutex the same traffic, readers and writers, guards its
// sleep/wake protocol and the bookkeeping of waiters that give up.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include "lock_test_util.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/wait_policy.hpp"

namespace {

namespace sw = spinwise;
using namespace std::chrono;
using spinwise_test::cpus;
using spinwise_test::scale;
using spinwise_test::scaled;

// No progress for this long, with every thread that is not stuck waiting at the round's end,
// means a thread is stranded (a correct lock hands over within microseconds, a timed wait here
// lasts at most ~2 ms).
constexpr seconds kStall{10};

struct stress_tag;  // this file's own knobs: the churn below touches no other test's locks
using mutex_policy = sw::time_policy<stress_tag>;
using shared_policy = sw::innodb_policy<stress_tag>;
struct mutex_class {
  static constexpr std::string_view name = "test.timed_stress.hybrid_mutex";
};
struct shared_class {
  static constexpr std::string_view name = "test.timed_stress.hybrid_shared_mutex";
};
using stress_mutex = sw::hybrid_mutex_t<mutex_policy, sw::class_stats<mutex_class>>;
using stress_shared_mutex = sw::hybrid_shared_mutex_t<shared_policy, sw::class_stats<shared_class>>;

// What a thread does, and which call it is inside (for the report of a stuck thread).
enum class role { untimed_writer, untimed_reader, timed_writer, timed_reader, barger };
const char* name(role r) {
  switch (r) {
    case role::untimed_writer:
      return "untimed writer";
    case role::untimed_reader:
      return "untimed reader";
    case role::timed_writer:
      return "timed writer";
    case role::timed_reader:
      return "timed reader";
    default:
      return "barger";
  }
}
enum : int { kRunning, kInLock, kInLockShared, kInTimed, kInTimedShared, kAtBarrier, kDone };
const char* doing_name(int d) {
  static const char* const names[] = {
      "running",           "lock()", "lock_shared()", "a timed try_lock", "a timed try_lock_shared",
      "the round barrier", "done"};
  return names[d];
}

struct alignas(sw::kCacheLinePad) worker {
  role r = role::barger;
  std::atomic<int> doing{kRunning};
  std::atomic<long> rounds{0};
  std::atomic<long> ops{0};
};

// Every thread of the run meets here at the end of each round. The last to arrive decides, for
// all, whether another round follows (the monitor asked for the end, or not).
class round_barrier {
 public:
  explicit round_barrier(int n) : n_(n) {}
  bool next_round(const std::atomic<bool>& stop) {
    const long g = gen_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      over_.store(stop.load(), std::memory_order_relaxed);
      gen_.store(g + 1, std::memory_order_release);
    } else {
      for (int i = 0; gen_.load(std::memory_order_acquire) == g; ++i) {
        if (i < 64) {
          std::this_thread::yield();
        } else {
          std::this_thread::sleep_for(microseconds(50));
        }
      }
    }
    return !over_.load(std::memory_order_relaxed);
  }
  long rounds() const { return gen_.load(); }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<long> gen_{0};
  std::atomic<bool> over_{false};
};

struct tallies {
  std::atomic<long> untimed{0};
  std::atomic<long> timed_ok{0};
  std::atomic<long> timed_failed{0};
  std::atomic<long> barged{0};
  std::atomic<long> barge_failed{0};
  std::atomic<long> shared_entries{0};
  std::atomic<long> violations{0};
  std::atomic<long> knob_changes{0};
};

sw::lock_stats_totals totals_of(std::string_view cls) {
  sw::lock_stats_totals t;
  sw::for_each_stats_class([&](std::string_view n, const sw::lock_stats_totals& c) {
    if (n == cls) t = c;
  });
  return t;
}

// One run on lock type L (Shared: it has shared calls) with Policy's spin_loops churned.
template <class L, class Policy, bool Shared>
class stress_run {
 public:
  explicit stress_run(std::string_view stats_class) : stats_class_(stats_class) {}

  void run() {
    const unsigned per_cpu = scale() >= 1.0 ? 8 : 4;
    const int n = static_cast<int>(std::clamp(cpus() * per_cpu, 8u, 64u));
    workers_ = std::vector<worker>(static_cast<std::size_t>(n));
    assign_roles(n);
    const sw::lock_stats_totals before = totals_of(stats_class_);
    const std::uint32_t loops0 = Policy::spin_loops();

    round_barrier barrier(n);
    std::atomic<bool> stop{false};
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i) {
      ts.emplace_back([this, i, &barrier, &stop] { work(i, barrier, stop); });
    }
    std::thread churn([this, &stop] { churn_knobs(stop); });

    // Monitor: ask for the end after run_for; fail on no progress for kStall.
    const auto run_for = milliseconds(scaled(2500, 300));
    const auto t0 = steady_clock::now();
    long last = -1;
    auto last_change = t0;
    bool stuck = false;
    for (;;) {
      std::this_thread::sleep_for(milliseconds(5));
      const auto now = steady_clock::now();
      if (now - t0 >= run_for) stop = true;
      if (finished(n)) break;
      const long p = progress() + barrier.rounds();
      if (p != last) {
        last = p;
        last_change = now;
      } else if (now - last_change >= kStall) {
        stuck = true;
        break;
      }
    }
    stop = true;
    if (stuck) report_and_rescue(n);  // ends the binary unless the stuck threads got free
    for (auto& t : ts) t.join();
    churn.join();
    Policy::set_spin_loops(loops0).ok();

    const sw::lock_stats_totals after = totals_of(stats_class_);
    const long acquisitions = t_.untimed + t_.timed_ok + t_.barged;
    std::printf(
        "%d threads, %ld rounds, %ld ms: %ld untimed, %ld timed ok, %ld timed failed, %ld barged in "
        "(%ld failed), %ld shared, %ld knob changes; stats: %llu contended, %llu parks\n",
        n, barrier.rounds(), static_cast<long>(duration_cast<milliseconds>(steady_clock::now() - t0).count()),
        t_.untimed.load(), t_.timed_ok.load(), t_.timed_failed.load(), t_.barged.load(),
        t_.barge_failed.load(), t_.shared_entries.load(), t_.knob_changes.load(),
        static_cast<unsigned long long>(after.contended - before.contended),
        static_cast<unsigned long long>(after.parks - before.parks));
    EXPECT_EQ(t_.violations.load(), 0) << "mutual exclusion broken";
    EXPECT_EQ(guarded_, exclusive_entries_.load()) << "the guarded counter lost updates";
    // It did work, of every kind, and the waits did time out and did sleep.
    EXPECT_GT(barrier.rounds(), 0);
    EXPECT_GT(acquisitions, 0);
    EXPECT_GT(t_.untimed.load(), 0);
    EXPECT_GT(t_.timed_ok.load(), 0);
    EXPECT_GT(t_.timed_failed.load(), 0)
        << "no timed wait ever timed out: the test proved nothing about timeouts";
    EXPECT_GT(t_.barged.load(), 0);
    if constexpr (Shared) {
      EXPECT_GT(t_.shared_entries.load(), 0);
    }
    EXPECT_GT(t_.knob_changes.load(), 0);
    EXPECT_GT(after.contended - before.contended, 0u);
#if defined(__linux__)
    EXPECT_GT(after.parks - before.parks, 0u)
        << "no wait ever slept in the kernel: the futex paths did not run";
#endif
    // Free and usable at the end.
    EXPECT_TRUE(l_.try_lock());
    l_.unlock();
  }

 private:
  void assign_roles(int n) {
    for (int i = 0; i < n; ++i) {
      role r;
      if constexpr (Shared) {
        static constexpr role kCycle[] = {role::untimed_writer, role::timed_writer,   role::barger,
                                          role::timed_reader,   role::untimed_reader, role::timed_writer,
                                          role::barger,         role::timed_reader};
        r = kCycle[i % 8];
      } else {
        static constexpr role kCycle[] = {role::untimed_writer, role::timed_writer,   role::barger,
                                          role::timed_writer,   role::untimed_writer, role::timed_writer,
                                          role::barger,         role::barger};
        r = kCycle[i % 8];
      }
      workers_[static_cast<std::size_t>(i)].r = r;
    }
  }

  // Writers' critical section: alone, with no reader; sometimes held across a yield, so that
  // waiters run out of budget and park behind it.
  void exclusive_section(std::minstd_rand& rng) {
    if (inside_.fetch_add(1, std::memory_order_acquire) != 0 ||
        readers_.load(std::memory_order_relaxed) != 0) {
      t_.violations.fetch_add(1);
    }
    ++guarded_;
    exclusive_entries_.fetch_add(1, std::memory_order_relaxed);
    hold(rng);
    inside_.fetch_sub(1, std::memory_order_release);
  }
  void shared_section(std::minstd_rand& rng) {
    readers_.fetch_add(1, std::memory_order_acquire);
    if (inside_.load(std::memory_order_relaxed) != 0) t_.violations.fetch_add(1);
    volatile long seen = guarded_;  // a read under the shared lock (TSan checks it)
    (void)seen;
    t_.shared_entries.fetch_add(1, std::memory_order_relaxed);
    hold(rng);
    readers_.fetch_sub(1, std::memory_order_release);
  }
  static void hold(std::minstd_rand& rng) {
    const unsigned h = rng() % 16;
    if (h == 0) {
      std::this_thread::yield();
    } else {
      sw::cpu_relax_n(h * 8);
    }
  }

  // A timed attempt with a random deadline: expired (zero, negative, in the past) or short.
  template <bool SharedCall>
  bool timed_attempt(std::minstd_rand& rng) {
    const unsigned k = rng() % 8;
    const auto us = microseconds(rng() % 200);
    if constexpr (SharedCall) {
      switch (k) {
        case 0:
          return l_.try_lock_shared_for(nanoseconds(0));
        case 1:
          return l_.try_lock_shared_for(microseconds(-1));
        case 2:
          return l_.try_lock_shared_until(steady_clock::now() - milliseconds(1));
        case 3:
        case 4:
          return l_.try_lock_shared_for(us);
        case 5:
          return l_.try_lock_shared_for(us * 10);
        case 6:
          return l_.try_lock_shared_until(steady_clock::now() + us);
        default:
          return l_.try_lock_shared_until(system_clock::now() + us);
      }
    } else {
      switch (k) {
        case 0:
          return l_.try_lock_for(nanoseconds(0));
        case 1:
          return l_.try_lock_for(microseconds(-1));
        case 2:
          return l_.try_lock_until(steady_clock::now() - milliseconds(1));
        case 3:
        case 4:
          return l_.try_lock_for(us);
        case 5:
          return l_.try_lock_for(us * 10);
        case 6:
          return l_.try_lock_until(steady_clock::now() + us);
        default:
          return l_.try_lock_until(system_clock::now() + us);
      }
    }
  }

  void work(int i, round_barrier& barrier, const std::atomic<bool>& stop) {
    worker& w = workers_[static_cast<std::size_t>(i)];
    std::minstd_rand rng(0x5eed0000u + static_cast<unsigned>(i));
    do {
      switch (w.r) {
        case role::untimed_writer:
          for (int k = 0; k < 2; ++k) {
            w.doing = kInLock;
            l_.lock();
            w.doing = kRunning;
            exclusive_section(rng);
            l_.unlock();
            t_.untimed.fetch_add(1, std::memory_order_relaxed);
            w.ops.fetch_add(1, std::memory_order_relaxed);
          }
          break;
        case role::untimed_reader:
          if constexpr (Shared) {
            for (int k = 0; k < 2; ++k) {
              w.doing = kInLockShared;
              l_.lock_shared();
              w.doing = kRunning;
              shared_section(rng);
              l_.unlock_shared();
              t_.untimed.fetch_add(1, std::memory_order_relaxed);
              w.ops.fetch_add(1, std::memory_order_relaxed);
            }
          }
          break;
        case role::timed_writer:
          for (int k = 0; k < 3; ++k) {
            w.doing = kInTimed;
            const bool got = timed_attempt<false>(rng);
            w.doing = kRunning;
            if (got) {
              exclusive_section(rng);
              l_.unlock();
            }
            (got ? t_.timed_ok : t_.timed_failed).fetch_add(1, std::memory_order_relaxed);
            w.ops.fetch_add(1, std::memory_order_relaxed);
          }
          break;
        case role::timed_reader:
          if constexpr (Shared) {
            for (int k = 0; k < 3; ++k) {
              w.doing = kInTimedShared;
              const bool got = timed_attempt<true>(rng);
              w.doing = kRunning;
              if (got) {
                shared_section(rng);
                l_.unlock_shared();
              }
              (got ? t_.timed_ok : t_.timed_failed).fetch_add(1, std::memory_order_relaxed);
              w.ops.fetch_add(1, std::memory_order_relaxed);
            }
          }
          break;
        case role::barger:
          // A tight loop of fast-path attempts: takes the word whenever it is free for an instant.
          for (int k = 0; k < 32; ++k) {
            bool got;
            if constexpr (Shared) {
              if (k % 2 == 1) {
                got = l_.try_lock_shared();
                if (got) {
                  shared_section(rng);
                  l_.unlock_shared();
                }
                (got ? t_.barged : t_.barge_failed).fetch_add(1, std::memory_order_relaxed);
                continue;
              }
            }
            got = l_.try_lock();
            if (got) {
              exclusive_section(rng);
              l_.unlock();
            }
            (got ? t_.barged : t_.barge_failed).fetch_add(1, std::memory_order_relaxed);
          }
          w.ops.fetch_add(1, std::memory_order_relaxed);
          break;
      }
      w.rounds.fetch_add(1, std::memory_order_relaxed);
      w.doing = kAtBarrier;
    } while (barrier.next_round(stop));
    w.doing = kDone;
  }

  // Moves the spin budget up and down while threads spin and sleep: a waiter reads it at each
  // round, so a woken waiter may find a long budget (and time out spinning) or none (and park).
  void churn_knobs(const std::atomic<bool>& stop) {
    static constexpr std::uint32_t kLoops[] = {0, 1, 0, 3, 30, 0, 300, 2};
    for (std::size_t k = 0; !stop.load(); ++k) {
      if (Policy::set_spin_loops(kLoops[k % 8]).ok()) t_.knob_changes.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(microseconds(300));
    }
  }

  bool finished(int n) const {
    for (int i = 0; i < n; ++i) {
      if (workers_[static_cast<std::size_t>(i)].doing.load() != kDone) return false;
    }
    return true;
  }
  long progress() const {
    long p = 0;
    for (const auto& w : workers_) p += w.ops.load() + w.rounds.load();
    return p;
  }

  bool lock_is_free() {
    if (!l_.try_lock()) return false;
    l_.unlock();
    return true;
  }

  // No progress for kStall. Says who is stuck where, then tries one extra wake: a thread that
  // then gets in was asleep on a free lock (a lost wake-up). Returns only if all got free.
  void report_and_rescue(int n) {
    const bool free_now = lock_is_free();
    std::fprintf(stderr, "STRANDED: no progress for %lld s; the lock is %s. Threads not at the barrier:\n",
                 static_cast<long long>(kStall.count()), free_now ? "FREE" : "held");
    int stuck = 0;
    for (int i = 0; i < n; ++i) {
      const worker& w = workers_[static_cast<std::size_t>(i)];
      const int d = w.doing.load();
      if (d == kAtBarrier || d == kDone) continue;
      ++stuck;
      std::fprintf(stderr, "  thread %d (%s), round %ld, %ld ops: inside %s\n", i, name(w.r), w.rounds.load(),
                   w.ops.load(), doing_name(d));
    }
    std::fflush(stderr);
    ADD_FAILURE() << stuck << " thread(s) made no progress for " << kStall.count() << " s while the lock was "
                  << (free_now ? "free" : "held") << " (see stderr)";
    if (free_now) {
      // A sleeper behind a holder marks the lock contended, and the holder's unlock then wakes.
      l_.lock();
      std::atomic<bool> helped{false};
      std::thread helper([&] {
        l_.lock();
        l_.unlock();
        helped = true;
      });
      std::this_thread::sleep_for(milliseconds(100));
      l_.unlock();
      bool freed = false;
      for (const auto until = steady_clock::now() + seconds(10); !freed && steady_clock::now() < until;) {
        std::this_thread::sleep_for(milliseconds(1));
        freed = helped.load() && finished_or_at_barrier(n);
      }
      std::fprintf(stderr, "after one extra wake: %s\n",
                   freed ? "all got in (they were asleep on a free lock: a lost wake-up)" : "still stuck");
      std::fflush(stderr);
      if (freed) {
        helper.join();
        return;  // the round ends, the threads see the stop and leave; the test has failed
      }
    }
    std::fprintf(stderr, "FATAL: stranded threads cannot be joined; ending the test binary\n");
    std::fflush(stderr);
    std::_Exit(1);
  }
  bool finished_or_at_barrier(int n) const {
    for (int i = 0; i < n; ++i) {
      const int d = workers_[static_cast<std::size_t>(i)].doing.load();
      if (d != kAtBarrier && d != kDone) return false;
    }
    return true;
  }

  std::string_view stats_class_;
  L l_;
  std::vector<worker> workers_;
  tallies t_;
  std::atomic<int> inside_{0};   // writers in their section
  std::atomic<int> readers_{0};  // readers in theirs
  long guarded_ = 0;             // written under the exclusive lock only
  std::atomic<long> exclusive_entries_{0};
};

// hybrid_mutex: untimed lock(), timed try_lock_for / try_lock_until (steady and system clock,
// expired and short deadlines) and try_lock() bargers.
TEST(TimedStress, HybridMutexStrandsNoWaiter) {
  stress_run<stress_mutex, mutex_policy, false>(mutex_class::name).run();
}

// hybrid_shared_mutex: the same for writers, and readers beside them (untimed lock_shared,
// timed shared calls, try_lock_shared bargers).
TEST(TimedStress, HybridSharedMutexStrandsNoWaiter) {
  stress_run<stress_shared_mutex, shared_policy, true>(shared_class::name).run();
}

}  // namespace
