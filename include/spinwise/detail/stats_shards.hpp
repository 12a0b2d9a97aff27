#pragma once
// Where the counts of a lock class live: a shard of counters per thread and class, written only by
// its thread; the class's record (its live shards, what exited threads counted, an overflow block
// for a thread without a shard, its run-time switches); the exit hook that folds a thread's shards
// into their classes; and the process-wide list of records. class_stats (<spinwise/lock_stats.hpp>)
// writes them; for_each_stats_class there and spinwise::runtime read them.

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
#include "spinwise/lock_site.hpp"
#include "spinwise/lock_stats_counters.hpp"

namespace spinwise::detail {

// A class's run-time switches (class_stats<C>::set_counting / set_tracking, or by name through
// spinwise::runtime): bits of stats_class_record::switches, copied into every shard of the class so
// a lock reads them from the line it writes its counters to.
inline constexpr std::uint8_t kStatsCounting = 1;  // count (the default)
inline constexpr std::uint8_t kStatsTracking = 2;  // list holders and waiters (lock_tracking.hpp)

// One mode's counters in a thread's shard.
struct mode_shard {
#define SPINWISE_STATS_ATOMIC_FIELD_(member, key, help) std::atomic<std::uint64_t> member{0};
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_ATOMIC_FIELD_)
#undef SPINWISE_STATS_ATOMIC_FIELD_
};

// One thread's counters for one class. Invariant: only the owning thread writes the counters
// (load + store, relaxed); any thread may read them, under the class mutex. `switches` is written
// under the class mutex by whoever flips a switch, and read (relaxed) by the owner.
struct alignas(kCacheLinePad) stats_shard {
  std::atomic<std::uint8_t> switches{kStatsCounting};
  // The owner's holds of this class that tracking lists (owner only): a release searches the
  // thread's record only while it is not 0, so one tracked class costs the others nothing.
  std::atomic<std::uint32_t> tracked_holds{0};
  mode_shard modes[kLockModes];
  std::atomic<std::uint64_t> histogram[kWaitHistogramBuckets] = {};
  stats_shard* next = nullptr;  // guarded by the class mutex

  mode_shard& mode(lock_mode m) noexcept { return modes[static_cast<std::size_t>(m)]; }
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

// One contended acquisition in mode m, of a wait in histogram bucket `bucket`, into a shard (the
// acquisition itself is on_acquire's). The table is expanded in place, not looped over: on_contended
// is cold, so optimized for size, and GCC then neither unrolls a loop over member pointers nor
// inlines a per-counter lambda.
template <bool Owned>
SPINWISE_ALWAYS_INLINE void add_wait(stats_shard& s, const wait_record& w, lock_mode m,
                                     std::size_t bucket) noexcept {
  mode_shard& c = s.mode(m);
  add_to<Owned>(c.contended, 1);
  add_to<Owned>(c.spin_won, w.parks == 0 ? 1 : 0);
#define SPINWISE_STATS_ADD_WAIT_(member, key, help) add_to<Owned>(c.member, w.member);
  SPINWISE_WAIT_RECORD_COUNTERS(SPINWISE_STATS_ADD_WAIT_)
#undef SPINWISE_STATS_ADD_WAIT_
  add_to<Owned>(s.histogram[bucket], 1);
}

// Adds a shard into totals: per mode, and each mode into the class's sums.
inline void add_shard(lock_stats_totals& t, const stats_shard& s) noexcept {
  for (std::size_t m = 0; m < kLockModes; ++m) {
#define SPINWISE_STATS_ADD_SHARD_(member, key, help)                           \
  {                                                                            \
    const std::uint64_t v = s.modes[m].member.load(std::memory_order_relaxed); \
    t.modes[m].member += v;                                                    \
    t.member += v;                                                             \
  }
    SPINWISE_STATS_COUNTERS(SPINWISE_STATS_ADD_SHARD_)
#undef SPINWISE_STATS_ADD_SHARD_
  }
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
  // The class's switches (kStatsCounting | kStatsTracking): written under mu, and copied under mu
  // into every live shard, the overflow block and each new shard.
  std::atomic<std::uint8_t> switches{kStatsCounting};
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

  // Sets the bits `mask` of the switches to `on`, in the record and in every shard at once.
  void set_switches(std::uint8_t mask, bool on) noexcept {
    std::lock_guard<std::mutex> g(mu);
    const std::uint8_t v = static_cast<std::uint8_t>(on ? switches.load(std::memory_order_relaxed) | mask
                                                        : switches.load(std::memory_order_relaxed) & ~mask);
    switches.store(v, std::memory_order_relaxed);
    for (stats_shard* s = live; s != nullptr; s = s->next) s->switches.store(v, std::memory_order_relaxed);
    overflow.switches.store(v, std::memory_order_relaxed);
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
  s->switches.store(c.switches.load(std::memory_order_relaxed), std::memory_order_relaxed);
  s->next = c.live;
  c.live = s;
  *slot = s;
  return s;
}

// The record of the class `name`, created and listed by the first module that asks. A record
// lives until the process ends, never destroyed: threads still running during static destruction
// may record into it. Out of memory: constructed in `fallback` (this module's, unlisted), or
// nullptr when there is none.
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
  if (r != nullptr) return static_cast<stats_class_record*>(r);
  return fallback != nullptr ? new (fallback) stats_class_record(name) : nullptr;
}

// The record of the class named `name` that some lock has used, or nullptr.
inline stats_class_record* stats_class_named(std::string_view name) noexcept {
  for (stats_class_record* r = stats_classes_head(); r != nullptr; r = r->next) {
    if (r->name == name) return r;
  }
  return nullptr;
}

}  // namespace spinwise::detail
