#pragma once
// The benchmark bodies, each a template over the lock type.
//
//   uncontended  lock+unlock (or lock_shared+unlock_shared) on one thread, in a process that has
//                already started a thread (glibc skips the LOCK prefix until then)
//   contended    abseil's BM_Contended shape: a critical section of cs_ns of dependent work on
//                data the lock guards, then local_ns of dependent work outside it, on N threads,
//                real time; acquisitions/s, fairness, CPU and context switches per acquisition
//   rw           the same with a read share: reads take the lock shared, writes exclusive
//   handoff      two pinned threads pass the lock back and forth; the releaser stamps the cycle
//                counter just before unlock, the waiter (already waiting) just after lock returns.
//                Its floor, the one-way core-to-core latency between the same two CPUs, is
//                spinwise::measure_c2c()'s, taken once per run (bench_main.cpp)
//
// Every contended body also checks the lock did its job and fails the benchmark if not (a fast
// broken lock must not make it into a table): a writer marks the data as being written while it
// holds the lock, and anyone who finds the mark on entering (or, reading, on leaving) counts an
// overlap; and the writes counted under the lock must add up to those the threads made.

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cs_loop.hpp"
#include "peers.hpp"
#include "run_record.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/c2c.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise::bench {

// ---------------------------------------------------------------------------------------------
template <class L>
void run_uncontended(benchmark::State& state) {
  auto m = std::make_unique<L>();
  for (auto _ : state) {
    exclusive_guard<L> g(*m);
  }
}

template <class L>
void run_uncontended_shared(benchmark::State& state) {
  auto m = std::make_unique<L>();
  for (auto _ : state) {
    shared_guard<L> g(*m);
  }
}

// ---------------------------------------------------------------------------------------------
// A lock whose policy learns (adaptive_policy) starts each benchmark from scratch, so that a cell
// does not inherit what the previous one taught its class.
template <class L, class = void>
struct policy_learns : std::false_type {};
template <class L>
struct policy_learns<L, std::void_t<decltype(L::policy::relearn())>> : std::true_type {};

template <class L>
struct contended_arena {
  explicit contended_arena(int threads) : record(threads) {
    if constexpr (policy_learns<L>::value) L::policy::relearn();
  }

  alignas(kCacheLinePad) L lock;
  // Guarded by `lock`; on its own line so the critical section moves one line besides the lock's.
  alignas(kCacheLinePad) std::uint64_t value = 1;
  std::uint64_t count = 0;
  // 1 while a writer is inside. Atomic (relaxed: plain moves on x86 and a few cycles elsewhere) only
  // so that a broken lock is a reported overlap rather than a data race.
  std::atomic<std::uint32_t> writing{0};
  alignas(kCacheLinePad) std::atomic<std::uint64_t> overlaps{0};
  alignas(kCacheLinePad) std::atomic<bool> expired{false};  // run_cap() passed: stop working
  run_record record;
};

// One per registered benchmark; thread 0 rebuilds the arena before each run, the others reach it
// only inside the loop, after Google Benchmark's start barrier.
template <class L>
struct arena_holder {
  std::unique_ptr<contended_arena<L>> arena;
};

// The shared part of the contended and rw bodies: bookkeeping around `op`, which takes the lock
// once and returns whether it was a write.
template <class L, class Op>
void contended_loop(benchmark::State& state, arena_holder<L>& holder, std::uint64_t local_iterations, Op op) {
  const int me = state.thread_index();
  if (state.threads() > kMaxThreads) {
    state.SkipWithError(("at most " + std::to_string(kMaxThreads) + " threads").c_str());
    return;
  }
  std::unique_ptr<run_deadline> deadline;
  if (me == 0) {
    holder.arena = std::make_unique<contended_arena<L>>(state.threads());
    deadline = std::make_unique<run_deadline>(holder.arena->expired);
  }
  contended_arena<L>* a = nullptr;
  thread_slot* slot = nullptr;
  std::uint64_t local = static_cast<std::uint64_t>(me) + 1;
  std::uint64_t n = 0;
  std::uint64_t writes = 0;
  bool done = false;
  const auto last = static_cast<std::uint64_t>(state.max_iterations);
  for (auto _ : state) {
    if (SPINWISE_UNLIKELY(done)) continue;  // past the time cap: the remaining iterations are empty
    if (SPINWISE_UNLIKELY(n == 0)) {
      a = holder.arena.get();
      slot = &a->record.slot(me);
      run_record::publish_cpu_clock(*slot);
      slot->usage_begin = read_thread_usage();
      slot->begin_ns = now_ns();
      a->record.started();
    }
    writes += op(*a, local) ? 1 : 0;
    local = dependent_work(local, local_iterations);
    slot->acquisitions.store(++n, std::memory_order_relaxed);
    if (SPINWISE_UNLIKELY(n == last || a->expired.load(std::memory_order_relaxed))) {
      slot->end_ns = now_ns();
      slot->usage_end = read_thread_usage();
      slot->extra = writes;
      a->record.finished();
      done = true;
    }
  }
  benchmark::DoNotOptimize(local);
  deadline.reset();
  if (me != 0 || a == nullptr) return;
  run_record::summary s = a->record.summarize();
  s.capped = s.total < static_cast<double>(last) * state.threads();  // someone stopped at the cap
  if (static_cast<double>(a->count) != s.extra) {
    state.SkipWithError(("lock lost updates: " + std::to_string(a->count) + " writes seen under the lock, " +
                         std::to_string(static_cast<std::uint64_t>(s.extra)) + " made")
                            .c_str());
    return;
  }
  if (const auto o = a->overlaps.load(std::memory_order_relaxed)) {
    state.SkipWithError(
        ("lock broke mutual exclusion: " + std::to_string(o) + " acquisitions found a writer inside")
            .c_str());
    return;
  }
  publish(state, s);
}

// The two critical sections. A write moves the guarded line (value, count, writing) as real
// critical sections move their data; a read only shares it.
template <class L>
void write_section(contended_arena<L>& a, std::uint64_t cs_iterations) {
  if (a.writing.load(std::memory_order_relaxed) != 0) a.overlaps.fetch_add(1, std::memory_order_relaxed);
  a.writing.store(1, std::memory_order_relaxed);
  a.value = dependent_work(a.value, cs_iterations);
  ++a.count;
  a.writing.store(0, std::memory_order_relaxed);
}

template <class L>
std::uint64_t read_section(contended_arena<L>& a, std::uint64_t cs_iterations) {
  const std::uint64_t v = dependent_work(a.value, cs_iterations);
  if (a.writing.load(std::memory_order_relaxed) != 0) a.overlaps.fetch_add(1, std::memory_order_relaxed);
  return v;
}

template <class L>
void run_contended(benchmark::State& state, arena_holder<L>& holder, std::uint64_t cs_iterations,
                   std::uint64_t local_iterations) {
  contended_loop(state, holder, local_iterations, [cs_iterations](contended_arena<L>& a, std::uint64_t&) {
    exclusive_guard<L> g(a.lock);
    write_section(a, cs_iterations);
    return true;
  });
}

template <class L>
void run_rw(benchmark::State& state, arena_holder<L>& holder, std::uint64_t cs_iterations,
            std::uint64_t local_iterations, unsigned read_permille) {
  xorshift64 coin{0x9e3779b97f4a7c15ull * (static_cast<std::uint64_t>(state.thread_index()) + 1)};
  contended_loop(state, holder, local_iterations,
                 [&coin, cs_iterations, read_permille](contended_arena<L>& a, std::uint64_t& local) {
                   if (coin.next() % 1000 < read_permille) {
                     shared_guard<L> g(a.lock);
                     if (a.writing.load(std::memory_order_relaxed) != 0) {
                       a.overlaps.fetch_add(1, std::memory_order_relaxed);
                     }
                     local ^= read_section(a, cs_iterations);
                     return false;
                   }
                   exclusive_guard<L> g(a.lock);
                   write_section(a, cs_iterations);
                   return true;
                 });
}

// ---------------------------------------------------------------------------------------------
// Handoff. One benchmark iteration = two handoffs: main -> helper, helper -> main. Before each
// release the owner waits until the other thread has announced it is about to lock, then lets
// `delay` of work pass so that thread is really inside lock() (spinning, or parked if the lock
// parks that soon), stamps the counter, and unlocks; then it waits until the other thread says it
// holds the lock before it asks for it again (otherwise a lock that allows barging hands it back
// to the releaser, and the sample would time a release and re-acquire on one CPU).
struct handoff_samples {
  static constexpr std::size_t kCap = std::size_t{1} << 20;  // per direction; later handoffs are not kept
  std::vector<std::uint64_t> ticks;
  handoff_samples() { ticks.reserve(1024); }
  void add(std::uint64_t t) {
    if (ticks.size() < kCap) ticks.push_back(t);
  }
};

template <class L>
struct handoff_arena {
  // The stamp shares the lock's line (for locks of up to 56 bytes), so writing it before the
  // release costs no extra line transfer; the new owner also writes it at once (below) so the line
  // is already exclusive by the time it stamps its own release.
  struct alignas(kCacheLinePad) {
    L lock;
    std::atomic<std::uint64_t> stamp{0};
  } l;
  alignas(kCacheLinePad) std::atomic<int> waiting0{0};
  alignas(kCacheLinePad) std::atomic<int> waiting1{0};
  alignas(kCacheLinePad) std::atomic<bool> stop{false};
  std::atomic<bool> expired{false};  // run_cap() passed: no more handoffs
};

// The handoff latencies of both directions as counters, in ns.
inline void publish_latency(benchmark::State& state, const handoff_samples& mine,
                            const handoff_samples& theirs) {
  using benchmark::Counter;
  const std::uint64_t hz = counter_frequency();
  std::vector<double> ns;
  ns.reserve(mine.ticks.size() + theirs.ticks.size());
  for (const handoff_samples* s : {&mine, &theirs}) {
    for (auto t : s->ticks) ns.push_back(runtime::ticks_to_ns(static_cast<double>(t), hz));
  }
  state.counters["p50_ns"] = Counter(runtime::quantile_in_place(ns, 0.50));
  state.counters["p90_ns"] = Counter(runtime::quantile_in_place(ns, 0.90));
  state.counters["p99_ns"] = Counter(runtime::quantile_in_place(ns, 0.99));
  state.counters["p999_ns"] = Counter(runtime::quantile_in_place(ns, 0.999));
  state.counters["samples"] = Counter(static_cast<double>(ns.size()));
}

// The two CPUs a handoff runs on, and the one-way latency is measured between: the first two this
// process may use. False when it may use fewer.
inline bool handoff_cpus(int& a, int& b) {
  const std::vector<int> cpus = runtime::allowed_cpus();
  if (cpus.size() < 2) return false;
  a = cpus[0];
  b = cpus[1];
  return true;
}

// The one-way core-to-core latency between two CPUs now: the run's figure at its start (the
// context) and each handoff repetition's, taken right after it (c2c_ns), because on a VM the host
// may place the two vCPUs elsewhere between repetitions. On a 2-vCPU AMD EPYC KVM guest
// (2026-12-03) the run's one figure at its start read 42 ns, 20 measurements minutes later read
// 171-205 ns, and every lock's handoff p50, peers included, came out ~60 ns in some repetitions
// and ~260 ns in others. A few milliseconds.
inline c2c_result measure_oneway(int a, int b) {
  c2c_options o;
  o.cpus = {a, b};
  return measure_c2c(o);
}
// Its latency in ns, or 0 when the pair could not be measured.
inline double oneway_ns(const c2c_result& r) { return r.errors.empty() && r.at(0, 1) > 0 ? r.at(0, 1) : 0.0; }

template <class L>
void run_handoff(benchmark::State& state, std::uint64_t delay_iterations) {
  int cpu_main = 0, cpu_helper = 0;
  if (!handoff_cpus(cpu_main, cpu_helper)) {
    state.SkipWithError("needs two CPUs to pin to");
    return;
  }
  runtime::scoped_pin pin(cpu_main);
  if (!pin.ok()) {
    state.SkipWithError("could not pin the benchmark thread");
    return;
  }
  auto a = std::make_unique<handoff_arena<L>>();
  handoff_samples mine, theirs;
  exclusive_holder<L> held(a->l.lock);
  held.acquire();
  std::atomic<bool> helper_pinned{true};

  run_deadline deadline(a->expired);
  std::thread helper([&] {
    runtime::scoped_pin hp(cpu_helper);
    if (!hp.ok()) helper_pinned.store(false, std::memory_order_relaxed);
    exclusive_holder<L> h(a->l.lock);
    a->waiting1.store(1, std::memory_order_release);
    h.acquire();
    for (;;) {
      const std::uint64_t t = read_counter();
      const std::uint64_t s =
          a->l.stamp.load(std::memory_order_relaxed);  // published by the release we acquired
      a->waiting1.store(0, std::memory_order_relaxed);
      if (a->stop.load(std::memory_order_relaxed)) break;
      theirs.add(t > s ? t - s : 0);  // a counter that is not synchronized across CPUs reads 0
      a->l.stamp.store(0, std::memory_order_relaxed);  // take the line exclusive now, not at release
      while (a->waiting0.load(std::memory_order_acquire) == 0) cpu_relax();
      benchmark::DoNotOptimize(dependent_work(t, delay_iterations));
      a->l.stamp.store(read_counter(), std::memory_order_relaxed);
      h.release();
      // Wait for the new owner to take it, or we could barge back in before it.
      while (a->waiting0.load(std::memory_order_acquire) != 0) cpu_relax();
      a->waiting1.store(1, std::memory_order_release);
      h.acquire();
    }
    h.release();
  });

  // The helper's start-up (a thread creation, and on a loaded machine a wait for a CPU) stays out
  // of the timed loop, or Google Benchmark may size the run from it.
  while (a->waiting1.load(std::memory_order_acquire) == 0) cpu_relax();
  std::uint64_t handoffs = 0;
  for (auto _ : state) {
    if (SPINWISE_UNLIKELY(a->expired.load(std::memory_order_relaxed))) continue;  // we hold the lock here
    ++handoffs;
    while (a->waiting1.load(std::memory_order_acquire) == 0) cpu_relax();
    benchmark::DoNotOptimize(dependent_work(mine.ticks.size(), delay_iterations));
    a->l.stamp.store(read_counter(), std::memory_order_relaxed);
    held.release();
    while (a->waiting1.load(std::memory_order_acquire) != 0) cpu_relax();  // no barging back in
    a->waiting0.store(1, std::memory_order_release);
    held.acquire();
    const std::uint64_t t = read_counter();
    const std::uint64_t s = a->l.stamp.load(std::memory_order_relaxed);
    a->waiting0.store(0, std::memory_order_relaxed);
    mine.add(t > s ? t - s : 0);
    a->l.stamp.store(0, std::memory_order_relaxed);
  }
  a->stop.store(true, std::memory_order_relaxed);  // published to the helper by this release
  held.release();
  helper.join();
  if (!helper_pinned.load(std::memory_order_relaxed)) {
    state.SkipWithError("could not pin the helper thread");
    return;
  }
  publish_latency(state, mine, theirs);
  state.counters["c2c_ns"] = benchmark::Counter(oneway_ns(measure_oneway(cpu_main, cpu_helper)));
  state.counters["capped"] =
      benchmark::Counter(handoffs < static_cast<std::uint64_t>(state.max_iterations) ? 1 : 0);
}

}  // namespace spinwise::bench
