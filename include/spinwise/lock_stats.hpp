#pragma once
// Opt-in wait statistics per lock class.
//
// A lock type takes a statistics policy as its last template parameter. The default, no_stats,
// is empty and its hooks are empty inline functions: no size, no instructions. class_stats<C>
// counts, for every lock whose type names the class C, what InnoDB's SEMAPHORES section shows
// and what the incident needed `perf top` to find:
//
//   acquisitions, contended acquisitions, spin rounds, relax instructions, ticks spent spinning,
//   yields, parks (OS waits), total and maximum wait, and a log2 histogram of wait times.
//
//   struct dict_stats_class { static constexpr std::string_view name = "dict_stats"; };
//   using stats_latch = spinwise::hybrid_mutex_t<spinwise::innodb_policy<>,
//                                                spinwise::class_stats<dict_stats_class>>;
//
// Sharding: every thread gets its own block of counters per class, written only by that thread
// (a relaxed load and store, no LOCK prefix), so statistics never become a new contention point
// and no update is lost. A snapshot sums the live threads' blocks and the totals of threads that
// have exited. Counters are unsigned 64-bit and only grow: at 10^9 events per second they wrap
// after 584 years, and differences are taken modulo 2^64, so they are never negative (InnoDB's
// 32-bit "spin rounds per wait" went negative, MySQL bug #79703).
//
// Snapshots, diffs, reset and the text/JSON reports live in spinwise::runtime
// (<spinwise/runtime/stats_report.hpp>); this header only records.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string_view>

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/process_state.hpp"

namespace spinwise {

// The counters of a lock class, one line each: X(member, key, help). `member` names the field of
// lock_stats_totals, of a thread's shard and (for a wait's counters) of wait_record; `key` the
// counter in the reports (the JSON key); `help` what it counts. Every place that stores, sums,
// subtracts or reports counters expands these tables or loops over kLockStatsCounters, made from
// them: the shards, the exited threads' totals and the overflow block here; snapshots, diffs,
// reset and the text and JSON reports in spinwise::runtime. So a counter is added by adding its
// line. The maximum wait and the histogram are not sums: they follow the tables by hand.
//
// The counters a contended acquisition's wait_record carries, each added to its class as is:
#define SPINWISE_WAIT_RECORD_COUNTERS(X)                                   \
  X(rounds, "spin_rounds", "spin rounds (snoozes)")                        \
  X(relaxes, "relaxes", "relax instructions issued in those rounds")       \
  X(spin_ticks, "spin_ticks", "counter ticks spent in the rounds' delays") \
  X(yields, "yields", "sched_yield calls")                                 \
  X(parks, "os_waits", "futex waits (InnoDB's \"OS waits\")")              \
  X(wait_ticks, "wait_ticks", "counter ticks from the first failed attempt to acquisition")

// Every counter: the acquisitions, then the wait record's.
#define SPINWISE_STATS_COUNTERS(X)                                              \
  X(acquisitions, "acquisitions", "acquisitions, contended or not")             \
  X(contended, "contended", "contended acquisitions (InnoDB's \"spin waits\")") \
  X(spin_won, "spin_won", "contended acquisitions won before any futex wait")   \
  SPINWISE_WAIT_RECORD_COUNTERS(X)

#define SPINWISE_STATS_FIELD_(member, key, help) std::uint64_t member = 0;

// What a lock's slow path reports for one contended acquisition.
struct wait_record {
  SPINWISE_WAIT_RECORD_COUNTERS(SPINWISE_STATS_FIELD_)
};

// Bucket b counts waits of [2^b, 2^(b+1)) counter ticks (bucket 0 also counts 0 and 1 tick).
// 48 buckets reach 2^48 ticks: 34 hours at 2.3 GHz.
inline constexpr std::size_t kWaitHistogramBuckets = 48;

constexpr std::size_t wait_histogram_bucket(std::uint64_t ticks) noexcept {
  std::size_t b = 0;
  while (ticks > 1 && b + 1 < kWaitHistogramBuckets) {
    ticks >>= 1;
    ++b;
  }
  return b;
}

// Plain totals: what a snapshot holds per class.
struct lock_stats_totals {
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_FIELD_)
  std::uint64_t max_wait_ticks = 0;
  std::uint64_t histogram[kWaitHistogramBuckets] = {};
};
#undef SPINWISE_STATS_FIELD_

// One line of SPINWISE_STATS_COUNTERS, for code that iterates the counters.
struct lock_stats_counter {
  std::uint64_t lock_stats_totals::*total;
  std::string_view key;
  std::string_view help;
};

#define SPINWISE_STATS_DESCRIBE_(member, key, help) lock_stats_counter{&lock_stats_totals::member, key, help},
inline constexpr lock_stats_counter kLockStatsCounters[] = {
    SPINWISE_STATS_COUNTERS(SPINWISE_STATS_DESCRIBE_)};
#undef SPINWISE_STATS_DESCRIBE_

namespace detail {

// One thread's counters for one class. Invariant: only the owning thread writes the counters
// (load + store, relaxed); any thread may read them, under the class mutex.
struct alignas(kCacheLinePad) stats_shard {
#define SPINWISE_STATS_ATOMIC_FIELD_(member, key, help) std::atomic<std::uint64_t> member{0};
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_ATOMIC_FIELD_)
#undef SPINWISE_STATS_ATOMIC_FIELD_
  std::atomic<std::uint64_t> histogram[kWaitHistogramBuckets] = {};
  stats_shard* next = nullptr;  // guarded by the class mutex
};

// Single-writer increment: wraps modulo 2^64 like any unsigned counter.
SPINWISE_ALWAYS_INLINE void bump(std::atomic<std::uint64_t>& c, std::uint64_t d) noexcept {
  c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

// Adds to a counter of the owning thread's shard (Owned) or of the overflow block, which any
// thread may share (an atomic add).
template <bool Owned>
SPINWISE_ALWAYS_INLINE void add_to(std::atomic<std::uint64_t>& c, std::uint64_t d) noexcept {
  if constexpr (Owned) {
    bump(c, d);
  } else {
    c.fetch_add(d, std::memory_order_relaxed);
  }
}

// One contended acquisition, of a wait in histogram bucket `bucket`, into a shard (the acquisition
// itself is on_acquire's). The table is
// expanded in place, not looped over: on_contended is cold, so optimized for size, and GCC then
// neither unrolls a loop over member pointers nor inlines a per-counter lambda.
template <bool Owned>
SPINWISE_ALWAYS_INLINE void add_wait(stats_shard& s, const wait_record& w, std::size_t bucket) noexcept {
  add_to<Owned>(s.contended, 1);
  add_to<Owned>(s.spin_won, w.parks == 0 ? 1 : 0);
#define SPINWISE_STATS_ADD_WAIT_(member, key, help) add_to<Owned>(s.member, w.member);
  SPINWISE_WAIT_RECORD_COUNTERS(SPINWISE_STATS_ADD_WAIT_)
#undef SPINWISE_STATS_ADD_WAIT_
  add_to<Owned>(s.histogram[bucket], 1);
}

inline void add_shard(lock_stats_totals& t, const stats_shard& s) noexcept {
#define SPINWISE_STATS_ADD_SHARD_(member, key, help) t.member += s.member.load(std::memory_order_relaxed);
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_ADD_SHARD_)
#undef SPINWISE_STATS_ADD_SHARD_
  for (std::size_t b = 0; b < kWaitHistogramBuckets; ++b)
    t.histogram[b] += s.histogram[b].load(std::memory_order_relaxed);
}

// One per lock class, linked into the process-wide registry on first use and never unlinked.
struct stats_class_record {
  std::string_view name;
  std::mutex mu;
  stats_shard* live = nullptr;  // guarded by mu: shards of running threads
  lock_stats_totals retired;    // guarded by mu: what exited threads counted
  stats_shard overflow;         // for a thread that could not allocate its shard: atomic adds
  // Max wait since start or reset. A CAS only when a wait beats the record: rare, slow path.
  std::atomic<std::uint64_t> max_wait_ticks{0};
  stats_class_record* next = nullptr;  // immutable once published

  explicit stats_class_record(std::string_view n) noexcept : name(n) {}

  lock_stats_totals collect() {
    lock_stats_totals t;
    std::lock_guard<std::mutex> g(mu);
    t = retired;
    for (const stats_shard* s = live; s != nullptr; s = s->next) add_shard(t, *s);
    add_shard(t, overflow);
    t.max_wait_ticks = max_wait_ticks.load(std::memory_order_relaxed);
    return t;
  }
};

// The classes of the process, newest first: process().stats_classes (detail/process_state.hpp),
// one list for every module of the process. Records are published under their class name, so
// two modules (or two types) naming the same class share one record.
inline stats_class_record* stats_classes_head() noexcept {
  return static_cast<stats_class_record*>(process().stats_classes.load(std::memory_order_acquire));
}

// Folds a thread's shards into their classes' retired totals when the thread exits.
// this_thread_state().stats_exiting is set once a thread's exit hook has run: a lock taken later
// in that thread's teardown (another thread_local's destructor) records into the class's overflow
// block instead of a freed shard.

struct stats_thread_exit {
  struct entry {
    stats_class_record* cls;
    stats_shard* shard;
    stats_shard** slot;  // the thread's cached pointer to `shard`, cleared on exit
  };
  entry entries[16] = {};
  std::size_t n = 0;
  stats_thread_exit* spill = nullptr;  // more than 16 classes used by one thread

  // False when the hook cannot hold another entry (out of memory): the caller then keeps no shard.
  bool add(stats_class_record* c, stats_shard* s, stats_shard** slot) noexcept {
    if (n < 16) {
      entries[n++] = {c, s, slot};
      return true;
    }
    if (spill == nullptr) spill = new (std::nothrow) stats_thread_exit;
    return spill != nullptr && spill->add(c, s, slot);
  }

  ~stats_thread_exit() {
    this_thread_state().stats_exiting = true;
    for (std::size_t i = 0; i < n; ++i) {
      *entries[i].slot = nullptr;
      stats_class_record& c = *entries[i].cls;
      stats_shard* s = entries[i].shard;
      std::lock_guard<std::mutex> g(c.mu);
      add_shard(c.retired, *s);
      for (stats_shard** p = &c.live; *p != nullptr; p = &(*p)->next) {
        if (*p == s) {
          *p = s->next;
          break;
        }
      }
      delete s;
    }
    delete spill;
  }
};

// Gives the calling thread a shard of class `c` and stores it in *slot; nullptr when the thread is
// exiting or memory is short (the caller then records into the class's overflow block).
SPINWISE_COLD inline stats_shard* attach_shard(stats_class_record& c, stats_shard** slot) noexcept {
  if (this_thread_state().stats_exiting) return nullptr;
  thread_local stats_thread_exit exit_hook;
  auto* s = new (std::nothrow) stats_shard;
  if (s == nullptr) return nullptr;
  if (!exit_hook.add(&c, s, slot)) {
    delete s;
    return nullptr;
  }
  std::lock_guard<std::mutex> g(c.mu);
  s->next = c.live;
  c.live = s;
  *slot = s;
  return s;
}

// The record of the class `name`, created and listed by the first module that asks. A record
// lives until the process ends, never destroyed: threads still running during static destruction
// may record into it. Out of memory: this module's `fallback`, unlisted.
SPINWISE_COLD inline stats_class_record* find_stats_class(std::string_view name, void* fallback) noexcept {
  void* r = find_object(kStatsClassObject, name, [name]() noexcept -> void* {
    // The name is copied: the module that named the class first may be unloaded.
    const char* copy = copy_key(name);
    auto* rec = copy == nullptr ? nullptr
                                : new (std::nothrow) stats_class_record(std::string_view(copy, name.size()));
    if (rec == nullptr) {
      std::free(const_cast<char*>(copy));
      return nullptr;
    }
    // Listed under lists_lock (held by find_object), published with release for the readers.
    rec->next = stats_classes_head();
    process().stats_classes.store(rec, std::memory_order_release);
    return rec;
  });
  return r != nullptr ? static_cast<stats_class_record*>(r) : new (fallback) stats_class_record(name);
}

}  // namespace detail

// Calls f(name, totals) for every lock class used so far in this process.
template <class F>
void for_each_stats_class(F&& f) {
  for (detail::stats_class_record* r = detail::stats_classes_head(); r != nullptr; r = r->next) {
    f(r->name, r->collect());
  }
}

// Forgets the maximum wait of every class (the reset of the runtime's report uses it; the other
// counters are reset there by keeping a baseline, since only their owning threads write them).
inline void reset_max_waits() noexcept {
  for (detail::stats_class_record* r = detail::stats_classes_head(); r != nullptr; r = r->next) {
    r->max_wait_ticks.store(0, std::memory_order_relaxed);
  }
}

// The default: records nothing, costs nothing.
struct no_stats {
  static constexpr bool enabled = false;
  static void on_acquire() noexcept {}
  static void on_contended(const wait_record&) noexcept {}
};

// Records into the class `Class`, a type with `static constexpr std::string_view name`.
template <class Class>
struct class_stats {
  static constexpr bool enabled = true;

  static detail::stats_class_record& record() noexcept {
    alignas(detail::stats_class_record) static unsigned char fallback[sizeof(detail::stats_class_record)];
    static detail::stats_class_record* const r = detail::find_stats_class(Class::name, fallback);
    return *r;
  }

  // Every acquisition, contended or not: one thread-local load and one plain increment.
  SPINWISE_ALWAYS_INLINE static void on_acquire() noexcept {
    if (detail::stats_shard* s = shard()) {
      detail::bump(s->acquisitions, 1);
    } else {
      record().overflow.acquisitions.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // After a contended acquisition (in addition to on_acquire).
  SPINWISE_COLD static void on_contended(const wait_record& w) noexcept {
    detail::stats_class_record& rec = record();
    detail::stats_shard* s = shard();
    const std::size_t bucket = wait_histogram_bucket(w.wait_ticks);
    if (s != nullptr) {
      detail::add_wait<true>(*s, w, bucket);
    } else {
      detail::add_wait<false>(rec.overflow, w, bucket);
    }
    std::uint64_t m = rec.max_wait_ticks.load(std::memory_order_relaxed);
    while (w.wait_ticks > m &&
           !rec.max_wait_ticks.compare_exchange_weak(m, w.wait_ticks, std::memory_order_relaxed)) {
    }
  }

 private:
  // The calling thread's shard for this class, attached on first use; nullptr if out of memory.
  SPINWISE_ALWAYS_INLINE static detail::stats_shard* shard() noexcept {
    thread_local detail::stats_shard* s = nullptr;  // constant-initialized: no TLS guard
    if (SPINWISE_UNLIKELY(s == nullptr)) return detail::attach_shard(record(), &s);
    return s;
  }
};

}  // namespace spinwise
