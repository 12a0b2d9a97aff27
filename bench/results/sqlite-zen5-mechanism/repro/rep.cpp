// The serialized-SQLite loss of the default kind, reproduced without SQLite (../README.md): THREADS
// threads each `lock; CS ns of work; unlock; LOCAL ns of work` on one lock for SECONDS; prints the
// operations per second and the process's voluntary context switches per operation as JSON.
//   rep ARM THREADS CS_NS LOCAL_NS SECONDS     (STATS=1: the lock class's statistics on stderr)
// An experiment's program, not a test or a tool of the project.
#include <linux/futex.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/park_behind_sleepers.hpp"
struct cls {
  static constexpr std::string_view name = "rep.cls";
};
using namespace spinwise;

long futex(std::atomic<uint32_t>* w, int op, uint32_t v) {
  return syscall(SYS_futex, w, op | FUTEX_PRIVATE_FLAG, v, nullptr, nullptr, 0);
}
std::atomic<uint32_t> g_sleepers{0};

// The futex locks written out, one protocol (0 free, 1 held, 2 a waiter may sleep) and its waits:
//   kBare  glibc's: CAS 0 -> 1, else xchg(2) until it returned 0, a futex wait between
//   kFirst glibc's after one load and CAS 0 -> 1 in the slow path (h2)
//   kLoop  hybrid_mutex's loop, parking at once: load; free: CAS 0 -> take; else xchg(2), sleep,
//          take = 2 (h1)
//   kCount kLoop with a class count of sleepers read at each step and changed around a sleep (h3)
//   kCold  kCount with its slow path `cold` as well as noinline, as SPINWISE_COLD makes the
//          library's (h3c)
//   kWaiter   kCount making the default kind's spin waiter at the start and after each sleep (h3w)
//   kLibFutex kCount sleeping through the library's futex_wait (h3f)
enum wait_shape { kBare, kFirst, kLoop, kCount, kCold, kWaiter, kLibFutex };
template <wait_shape Shape>
struct futex_lock {
  std::atomic<uint32_t> w{0};
  void lock() {
    uint32_t c = 0;
    if (w.compare_exchange_strong(c, 1, std::memory_order_acquire)) return;
    if constexpr (Shape == kCold)
      slow_cold();
    else
      slow();
  }
  __attribute__((cold, noinline)) void slow_cold() { body(); }
  __attribute__((noinline)) void slow() { body(); }
  __attribute__((always_inline)) inline void body() {
    if constexpr (Shape == kBare || Shape == kFirst) {
      if constexpr (Shape == kFirst) {
        uint32_t c = w.load(std::memory_order_relaxed);
        if (c == 0 && w.compare_exchange_strong(c, 1, std::memory_order_acquire)) return;
      }
      while (w.exchange(2, std::memory_order_acquire) != 0) futex(&w, FUTEX_WAIT, 2);
    } else {
      uint32_t take = 1;
      [[maybe_unused]] typename hybrid_mutex::policy::waiter wt;
      if constexpr (Shape == kWaiter) asm volatile("" ::"r"(&wt) : "memory");
      for (;;) {
        uint32_t c = w.load(std::memory_order_relaxed);
        if (c == 0) {
          if (w.compare_exchange_weak(c, take, std::memory_order_acquire, std::memory_order_relaxed)) break;
          continue;
        }
        if (Shape >= kCount && g_sleepers.load(std::memory_order_relaxed) == 12345) continue;  // a read
        if (w.exchange(2, std::memory_order_acquire) == 0) break;
        if (Shape >= kCount) g_sleepers.fetch_add(1, std::memory_order_relaxed);
        if constexpr (Shape == kLibFutex)
          spinwise::detail::futex_wait(w, 2);
        else
          futex(&w, FUTEX_WAIT, 2);
        if (Shape >= kCount) g_sleepers.fetch_sub(1, std::memory_order_relaxed);
        if constexpr (Shape == kWaiter) {
          wt = typename hybrid_mutex::policy::waiter{};
          asm volatile("" ::"r"(&wt) : "memory");
        }
        take = 2;
      }
    }
  }
  void unlock() {
    if (w.exchange(0, std::memory_order_release) == 2) futex(&w, FUTEX_WAKE, 1);
  }
};
using bare = futex_lock<kBare>;
using h1 = futex_lock<kLoop>;
using h2 = futex_lock<kFirst>;
using h3 = futex_lock<kCount>;
using h3c = futex_lock<kCold>;
using h3w = futex_lock<kWaiter>;
using h3f = futex_lock<kLibFutex>;
struct pth {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  void lock() { pthread_mutex_lock(&m); }
  void unlock() { pthread_mutex_unlock(&m); }
};
using hyb = hybrid_mutex_t<park_behind_sleepers<hybrid_mutex::policy, cls>, class_stats<cls>>;
using hybns = hybrid_mutex_t<park_behind_sleepers<hybrid_mutex::policy, cls>, no_stats>;
using hybplain = hybrid_mutex_t<hybrid_mutex::policy, no_stats>;
static double tps;
static inline void work(uint64_t ticks) {
  uint64_t t = __rdtsc();
  while (__rdtsc() - t < ticks) {
  }
}
std::atomic<bool> stop{false}, go{false};
template <class L>
double run(int threads, double secs, uint64_t cs, uint64_t local, double* vol) {
  static L l;
  std::vector<std::thread> ts;
  std::vector<uint64_t> ops(threads * 16);
  for (int i = 0; i < threads; ++i)
    ts.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        l.lock();
        work(cs);
        l.unlock();
        work(local);
        ++n;
      }
      ops[i * 16] = n;
    });
  rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  auto t0 = std::chrono::steady_clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(secs));
  stop = true;
  for (auto& t : ts) t.join();
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_SELF, &r1);
  uint64_t tot = 0;
  for (int i = 0; i < threads; ++i) tot += ops[i * 16];
  *vol = double(r1.ru_nvcsw - r0.ru_nvcsw) / tot;
  return tot / el;
}
int main(int argc, char** argv) {
  std::string k = argv[1];
  int th = atoi(argv[2]);
  double cs_ns = atof(argv[3]), loc_ns = atof(argv[4]), secs = atof(argv[5]);
  auto t0 = __rdtsc();
  auto c0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  tps = (__rdtsc() - t0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count() / 1e9;
  uint64_t cs = cs_ns * tps, lo = loc_ns * tps;
  double vol = 0, ops = 0;
  // hybL0 / hybD0: the default kind with spin_loops 0 (no round, one yield where no sleeper is) or
  // spin_wait_delay 0 (rounds of no delay). hybP: a sleeper that never wakes, counted, so that every
  // wait of the default kind parks at its first step through the whole wait core, as h3 does
  // without it.
  if (k == "hybL0" && !hybrid_mutex::policy::set_spin_loops(0).ok()) return 1;
  if (k == "hybD0" && !hybrid_mutex::policy::set_spin_wait_delay(0).ok()) return 1;
  if (k == "hybP") detail::sleepers<park_behind_sleepers<hybrid_mutex::policy, cls>>.fetch_add(1);
  const auto arm = [&](auto lock) { ops = run<decltype(lock)>(th, secs, cs, lo, &vol); };
  if (k == "bare")
    arm(bare{});
  else if (k == "pth")
    arm(pth{});
  else if (k == "hyb" || k == "hybL0" || k == "hybD0" || k == "hybP")
    arm(hyb{});
  else if (k == "hybns")
    arm(hybns{});
  else if (k == "h1")
    arm(h1{});
  else if (k == "h2")
    arm(h2{});
  else if (k == "h3")
    arm(h3{});
  else if (k == "h3c")
    arm(h3c{});
  else if (k == "h3w")
    arm(h3w{});
  else if (k == "h3f")
    arm(h3f{});
  else if (k == "hybplain")
    arm(hybplain{});
  else {
    fprintf(stderr, "unknown arm %s\n", k.c_str());
    return 2;
  }
  if (getenv("STATS"))
    spinwise::for_each_stats_class([](auto name, const auto& t) {
      fprintf(stderr, "%.*s acq %llu cont %llu won %llu rounds %llu yields %llu parks %llu\n",
              (int)name.size(), name.data(), (unsigned long long)t.acquisitions,
              (unsigned long long)t.contended, (unsigned long long)t.spin_won, (unsigned long long)t.rounds,
              (unsigned long long)t.yields, (unsigned long long)t.parks);
    });
  printf("{\"kind\":\"%s\",\"ops\":%.0f,\"vol\":%.4f}\n", k.c_str(), ops, vol);
}
