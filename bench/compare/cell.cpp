// spinwise-cell: one cell of the revision-against-revision grid, for bench/compare.sh.
//
// compare.sh compiles this one file against each revision's headers (include/ and arch/ of a
// temporary worktree: the locks are header-only), so the same harness measures both and only the
// locks differ. It therefore uses nothing but public lock names, std, and oneTBB as a peer: the
// locks of the tools' catalogue (../spinwise_locks.hpp, of this checkout) that the revision
// declares, and the policy variants that compare.sh's macros say the revision has.
//
//   spinwise-cell --list                       the locks and cells this build has, one per line
//   spinwise-cell --lock L --cell C --ms N     one run: a JSON line on stdout, exit 0; a broken
//                                              lock (an overlap, a lost count) exits 1
//   spinwise-cell --relax-ns                   one relax's ns on this CPU, as the locks convert it
//
// Cells (the grid of docs/benchmarks.md, "Comparing two revisions"):
//   uncontended    one thread, lock+unlock, in a process that has started a thread
//   2t_cs4         2 threads, a critical section of 4 words, no work outside it
//   2t_cs16        2 threads, 16 words
//   8t_cs16_l64    8 threads (4x a 2-CPU machine), 16 words, 64 steps of local work between
//   32t_cs16_l64   32 threads (16x), the same
//   handoff        2 threads pinned to two CPUs pass the lock: the waiter is inside lock() for
//                  ~2 us before the holder stamps the clock and unlocks; the median of the waiter's
//                  stamp minus the holder's
// Metrics: mops (acquisitions per us), cpu_ns_per_op (process CPU time per acquisition, user +
// system: what spinning costs), jain (Jain's index of the per-thread acquisition counts, 1 = every
// thread the same, 1/n = one thread took all), kept (the share of acquisitions made by the thread
// that held the lock last: near 0 for a FIFO lock while the others wait, an order measure),
// handoff_ns.

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../spinwise_locks.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"
#if __has_include("spinwise/relax_table.hpp")
#include "spinwise/relax_table.hpp"
#else
#include "spinwise/relax_time.hpp"  // a revision older than the name relax_table.hpp
#endif
#if defined(SPINWISE_CELL_HAS_ADAPTIVE)
#include "spinwise/adaptive_policy.hpp"
#endif
#if defined(SPINWISE_CELL_HAS_TBB)
#include <tbb/spin_mutex.h>
#endif

namespace {

using clock_type = std::chrono::steady_clock;

// The data a critical section works on, on its own lines, and the checks that the lock did its
// job: `inside` is raised by whoever holds the lock, so an entrant that finds it raised counts an
// overlap; `count` is bumped under the lock and must equal the acquisitions the threads made.
// `kept` counts the acquisitions made by the thread that held the lock last (a turn kept).
struct alignas(128) guarded {
  std::uint64_t words[16] = {};
  std::uint64_t count = 0, kept = 0;
  int last = -1;
  std::atomic<std::uint32_t> inside{0};
};

inline void critical_section(guarded& g, int words, std::atomic<std::uint64_t>& overlaps, int me) {
  if (g.inside.exchange(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < words; ++i) g.words[i] = g.words[i] * 6364136223846793005ull + 1;
  ++g.count;
  g.kept += g.last == me ? 1 : 0;
  g.last = me;
  g.inside.store(0, std::memory_order_relaxed);
}

// Dependent arithmetic the compiler cannot fold: `steps` multiply-adds in a chain.
inline std::uint64_t local_work(std::uint64_t x, int steps) {
  for (int i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// The process's CPU time, read as spinwise::detail::process_cpu_ns (detail/cpu_time.hpp) reads it,
// so that the harness's CPU per acquisition divides by the same total as the library's figures.
// Written out here: the harness compiles against older revisions' headers, which lack that one.
std::uint64_t process_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct result {
  double mops = 0, cpu_ns_per_op = 0, jain = 0, kept = 0, handoff_ns = 0;
  std::uint64_t ops = 0, overlaps = 0;
  bool counts_agree = true;
};

struct cell {
  const char* name;
  int threads;  // 0: handoff
  int words;
  int local;
};
constexpr cell kCells[] = {
    {"uncontended", 1, 4, 0},   {"2t_cs4", 2, 4, 0},          {"2t_cs16", 2, 16, 0},
    {"8t_cs16_l64", 8, 16, 64}, {"32t_cs16_l64", 32, 16, 64}, {"handoff", 0, 4, 0},
};

template <class L>
result run_threads(const cell& c, int ms) {
  auto lock = std::make_unique<L>();
  auto data = std::make_unique<guarded>();
  std::atomic<std::uint64_t> overlaps{0};
  std::atomic<int> ready{0};
  std::atomic<int> phase{0};          // 0 wait, 1 run, 2 stop
  std::atomic<bool> acquired{false};  // some worker has finished an acquisition
  std::vector<std::uint64_t> ops(static_cast<std::size_t>(c.threads), 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < c.threads; ++t) {
    ts.emplace_back([&, t] {
      std::uint64_t x = static_cast<std::uint64_t>(t) + 1, n = 0;
      ready.fetch_add(1);
      while (phase.load(std::memory_order_acquire) == 0) std::this_thread::yield();
      while (phase.load(std::memory_order_relaxed) == 1) {
        lock->lock();
        critical_section(*data, c.words, overlaps, t);
        lock->unlock();
        if (++n == 1) acquired.store(true, std::memory_order_relaxed);
        if (c.local > 0) x = local_work(x, c.local);
      }
      ops[static_cast<std::size_t>(t)] = n;
      asm volatile("" : : "r"(x));
    });
  }
  while (ready.load() < c.threads) std::this_thread::yield();
  const std::uint64_t cpu0 = process_cpu_ns();
  const auto t0 = clock_type::now();
  phase.store(1, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  // The window ends after `ms` and after an acquisition: on a machine so busy that no worker ran
  // within it (10 ms beside other work), a run would have measured nothing and said 0 ops
  // (bench.cell_smoke failed so on a 2-vCPU AMD EPYC Zen 4 guest running other work).
  while (!acquired.load(std::memory_order_relaxed)) std::this_thread::yield();
  phase.store(2, std::memory_order_relaxed);
  const auto t1 = clock_type::now();
  for (auto& th : ts) th.join();
  const std::uint64_t cpu1 = process_cpu_ns();
  result r;
  double sum = 0, sum2 = 0;
  for (std::uint64_t n : ops) {
    r.ops += n;
    sum += static_cast<double>(n);
    sum2 += static_cast<double>(n) * static_cast<double>(n);
  }
  // The threads run a little past t1 until they see the stop; the few extra acquisitions are
  // a fraction of a millisecond's worth.
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  r.mops = static_cast<double>(r.ops) / us;
  r.cpu_ns_per_op = r.ops > 0 ? static_cast<double>(cpu1 - cpu0) / static_cast<double>(r.ops) : 0;
  r.jain = sum2 > 0 ? sum * sum / (static_cast<double>(c.threads) * sum2) : 0;
  r.kept = r.ops > 0 ? static_cast<double>(data->kept) / static_cast<double>(r.ops) : 0;
  r.overlaps = overlaps.load();
  r.counts_agree = data->count == r.ops;
  return r;
}

// The two threads alternate: the waiter announces that it is about to lock, the holder waits
// for that plus ~2 us (the waiter is then inside lock(), spinning or parked as its policy says),
// stamps the clock and unlocks; the waiter stamps on return. Roles swap every handoff; a thread
// that stops (the time is up) stops as the waiter, holding the lock, and releases it, and the
// other, waiting for its intent or its acquisition, sees the stop.
template <class L>
result run_handoff(int ms) {
  auto lock = std::make_unique<L>();
  struct alignas(128) slot {
    std::atomic<std::uint64_t> v{0};
  };
  auto intent = std::make_unique<slot[]>(2);  // round a thread is about to lock for
  auto stamp = std::make_unique<slot[]>(2);   // the holder's release stamp, per round parity
  slot taken;                                 // the last round whose waiter has the lock, + 1
  std::atomic<bool> stop{false}, first_held{false};
  std::vector<double> lat;
  lat.reserve(1 << 20);
  const auto ns_now = [] {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count());
  };
  const unsigned cpus = std::thread::hardware_concurrency();
  std::atomic<std::uint64_t> rounds{0};
  const auto deadline = clock_type::now() + std::chrono::milliseconds(ms);
  // Thread `me` holds in even rounds if me == 0, odd if me == 1.
  auto body = [&](int me) {
    if (cpus >= 2) pin_to(me);
    if (me == 0) {  // thread 0 holds first; thread 1 may not lock before it has
      lock->lock();
      first_held.store(true, std::memory_order_release);
    } else {
      while (!first_held.load(std::memory_order_acquire)) {
      }
    }
    for (std::uint64_t r = 0;; ++r) {
      const bool holder = static_cast<int>(r & 1) == me;
      if (holder) {
        // Wait for the other to announce round r, then let it get into lock().
        while (intent[1 - me].v.load(std::memory_order_acquire) != r + 1) {
          if (stop.load(std::memory_order_relaxed)) {
            lock->unlock();
            return;
          }
        }
        const std::uint64_t until = ns_now() + 2000;
        while (ns_now() < until) {
        }
        stamp[r & 1].v.store(ns_now(), std::memory_order_relaxed);
        lock->unlock();
        // An unfair lock would let us take it straight back in our next round and strand the
        // waiter: wait until it has the lock.
        while (taken.v.load(std::memory_order_acquire) != r + 1) {
          if (stop.load(std::memory_order_relaxed)) return;
        }
      } else {
        intent[me].v.store(r + 1, std::memory_order_release);
        lock->lock();
        const std::uint64_t t = ns_now();
        taken.v.store(r + 1, std::memory_order_release);
        // Pushed while holding the lock, so the two threads never push at once.
        const std::uint64_t s = stamp[r & 1].v.load(std::memory_order_relaxed);
        if (t > s) lat.push_back(static_cast<double>(t - s));
        rounds.fetch_add(1, std::memory_order_relaxed);
        if (clock_type::now() >= deadline) {
          stop.store(true, std::memory_order_relaxed);
          lock->unlock();
          return;
        }
      }
    }
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  result r;
  if (!lat.empty()) {
    std::nth_element(lat.begin(), lat.begin() + static_cast<long>(lat.size() / 2), lat.end());
    r.handoff_ns = lat[lat.size() / 2];
  }
  r.ops = rounds.load();
  return r;
}

template <class L>
result run(const cell& c, int ms) {
  if (c.threads == 0) return run_handoff<L>(ms);
  if (c.threads == 1) {
    // glibc skips the LOCK prefix until a process starts its first thread: start one first.
    std::thread([] {}).join();
  }
  return run_threads<L>(c, ms);
}

// The locks of this harness: the catalogue's default aliases (those the revision declares), a few
// named policy variants where the revision has them, and the peers.
template <class F>
void each_lock(F&& f) {
  spinwise::bench_catalog::each_lock([&](auto row) {
    using R = decltype(row);
    using L = typename R::type;
    if constexpr (spinwise::bench_catalog::declared<L>) f(R::name, static_cast<L*>(nullptr));
  });
#if defined(SPINWISE_CELL_HAS_ADAPTIVE)
  struct cell_adaptive_tag;
  f("hybrid_mutex_adaptive",
    static_cast<spinwise::hybrid_mutex_t<spinwise::adaptive_policy<cell_adaptive_tag>>*>(nullptr));
  f("ttas_mutex_adaptive",
    static_cast<spinwise::ttas_mutex_t<spinwise::adaptive_policy<cell_adaptive_tag>>*>(nullptr));
#endif
#if defined(SPINWISE_CELL_HAS_PROMPT)
  struct cell_prompt_tag;
  f("hybrid_mutex_prompt",
    static_cast<spinwise::hybrid_mutex_t<spinwise::prompt_time_policy<cell_prompt_tag>>*>(nullptr));
  f("ttas_mutex_prompt",
    static_cast<spinwise::ttas_mutex_t<spinwise::prompt_time_policy<cell_prompt_tag>>*>(nullptr));
#endif
  f("std_mutex", static_cast<std::mutex*>(nullptr));
#if defined(SPINWISE_CELL_HAS_TBB)
  f("tbb_spin_mutex", static_cast<tbb::spin_mutex*>(nullptr));
#endif
}

int usage(const char* why) {
  std::fprintf(
      stderr,
      "spinwise-cell: %s\nusage: spinwise-cell --list | --relax-ns | --lock NAME --cell NAME --ms N\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string lock_name, cell_name;
  int ms = 300;
  bool list = false, relax = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--list") {
      list = true;
    } else if (a == "--relax-ns") {
      relax = true;
    } else if (a == "--lock" && has_value) {
      lock_name = argv[++i];
    } else if (a == "--cell" && has_value) {
      cell_name = argv[++i];
    } else if (a == "--ms" && has_value) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || v < 10 || v > 60'000) return usage("--ms takes 10..60000");
      ms = static_cast<int>(v);
    } else {
      return usage(("unknown or incomplete argument '" + std::string(a) + "'").c_str());
    }
  }
  if (list) {
    each_lock([](const char* n, auto*) { std::printf("lock %s\n", n); });
    for (const cell& c : kCells) std::printf("cell %s\n", c.name);
    return 0;
  }
  if (relax) {
    std::printf("%.3f\n", spinwise::relax_ns_here());
    return 0;
  }
  const cell* c = nullptr;
  for (const cell& k : kCells) {
    if (cell_name == k.name) c = &k;
  }
  if (c == nullptr) return usage(("unknown cell '" + cell_name + "' (--list names them)").c_str());
  bool found = false;
  result r;
  each_lock([&](const char* n, auto* tag) {
    using L = std::remove_pointer_t<decltype(tag)>;
    if (lock_name == n) {
      found = true;
      r = run<L>(*c, ms);
    }
  });
  if (!found) return usage(("unknown lock '" + lock_name + "' (--list names them)").c_str());
  std::printf(
      "{\"lock\": \"%s\", \"cell\": \"%s\", \"ms\": %d, \"ops\": %llu, \"mops\": %.6g, \"cpu_ns_per_op\": "
      "%.6g, "
      "\"jain\": %.6g, \"kept\": %.6g, \"handoff_ns\": %.6g}\n",
      lock_name.c_str(), c->name, ms, static_cast<unsigned long long>(r.ops), r.mops, r.cpu_ns_per_op, r.jain,
      r.kept, r.handoff_ns);
  if (r.overlaps != 0 || !r.counts_agree) {
    std::fprintf(stderr, "spinwise-cell: %s broke mutual exclusion in %s (%llu overlaps, counts %s)\n",
                 lock_name.c_str(), c->name, static_cast<unsigned long long>(r.overlaps),
                 r.counts_agree ? "agree" : "disagree");
    return 1;
  }
  return 0;
}
