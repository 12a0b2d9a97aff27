#pragma once
// Opt-in wait statistics per lock class.
//
// A lock type takes a statistics policy as its last template parameter. The default, no_stats,
// is empty and its hooks are empty inline functions: no size, no instructions. class_stats<C>
// counts, for every lock whose type names the class C, what InnoDB's SEMAPHORES section shows
// and what the incident needed `perf top` to find:
//
//   acquisitions, contended acquisitions, spin rounds, relax instructions, ticks spent spinning,
//   yields, parks (OS waits), total and maximum wait, a log2 histogram of wait times, and
//   sx_lock's upgrades (SX -> X).
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
#include <thread>

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/lock_tracking.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/lock_site.hpp"

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

// Every counter: the acquisitions, the upgrades, then the wait record's. An upgrade is counted
// under the mode it enters (x); it is no acquisition, and its wait for the S holders to leave is
// in no counter.
#define SPINWISE_STATS_COUNTERS(X)                                              \
  X(acquisitions, "acquisitions", "acquisitions, contended or not")             \
  X(contended, "contended", "contended acquisitions (InnoDB's \"spin waits\")") \
  X(spin_won, "spin_won", "contended acquisitions won before any futex wait")   \
  X(upgrades, "upgrades", "upgrades from SX to X without release (sx_lock)")    \
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

// The counters of one mode, or of a whole class.
struct lock_stats_counts {
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_FIELD_)
};

// Plain totals: what a snapshot holds per class. The class's counters are the sums of its modes'
// (lock_mode: a mutex counts everything as x; the shared locks split S, SX and X, InnoDB's
// RW-shared, RW-sx and RW-excl lines).
struct lock_stats_totals : lock_stats_counts {
  std::uint64_t max_wait_ticks = 0;
  std::uint64_t histogram[kWaitHistogramBuckets] = {};
  lock_stats_counts modes[kLockModes] = {};

  const lock_stats_counts& mode(lock_mode m) const noexcept { return modes[static_cast<std::size_t>(m)]; }
};
#undef SPINWISE_STATS_FIELD_

// One line of SPINWISE_STATS_COUNTERS, for code that iterates the counters.
struct lock_stats_counter {
  std::uint64_t lock_stats_counts::*total;
  std::string_view key;
  std::string_view help;
};

#define SPINWISE_STATS_DESCRIBE_(member, key, help) lock_stats_counter{&lock_stats_counts::member, key, help},
inline constexpr lock_stats_counter kLockStatsCounters[] = {
    SPINWISE_STATS_COUNTERS(SPINWISE_STATS_DESCRIBE_)};
#undef SPINWISE_STATS_DESCRIBE_

namespace detail {

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

// The hooks a lock calls, for every statistics policy:
//
//   on_acquire(lock, mode, site)   every acquisition, contended or not, once the lock is held
//   on_release(lock, mode)         every release
//   on_mode_change(lock, mode)     a held lock changes mode without release, to `mode`: sx_lock's
//                                  upgrade() (x) and downgrade() (sx)
//   on_contended(wait_record, mode)  after a contended acquisition, in addition to on_acquire
//   wait_begin(lock, mode, site, since)  a wait starts; true: wait_end() follows when it ends, in
//                                        the lock or not
//
// The default: records nothing, costs nothing. A policy of one's own (a test's, an engine's
// bridge to its own counters) derives from it, sets `enabled = true` and hides the hooks it uses.
struct no_stats {
  static constexpr bool enabled = false;
  static void on_acquire(const void*, lock_mode, lock_site = {}) noexcept {}
  static void on_release(const void*, lock_mode) noexcept {}
  static void on_mode_change(const void*, lock_mode) noexcept {}
  static void on_contended(const wait_record&, lock_mode) noexcept {}
  static bool wait_begin(const void*, lock_mode, lock_site, std::uint64_t) noexcept { return false; }
  static void wait_end() noexcept {}
};

// Records into the class `Class`, a type with `static constexpr std::string_view name`.
//
// Switchable at run time, per class, as performance_schema instruments are (every module's locks
// of the class at once; by name: spinwise::set_stats_counting / set_lock_tracking in
// <spinwise/runtime/lock_watch.hpp>):
//   counting (on by default)  the counters above; off, a lock reads its thread's switch and counts
//                             nothing
//   tracking (off by default) who holds and who waits for each lock of the class, with sites
//                             (detail/lock_tracking.hpp; the watchdog reads it)
template <class Class>
struct class_stats {
  static constexpr bool enabled = true;

  // Found once and cached (found_once: no function-local static's guard). The first use of a
  // class in the process creates its record under the process-wide lists' lock; every later first
  // use in a thread or module finds it without that lock.
  static detail::stats_class_record& record() noexcept {
    detail::stats_class_record* r =
        detail::found_once<detail::stats_class_record, Class>::ptr.load(std::memory_order_acquire);
    return SPINWISE_LIKELY(r != nullptr) ? *r : find_record();
  }

  static void set_counting(bool on) noexcept { record().set_switches(detail::kStatsCounting, on); }
  static void set_tracking(bool on) noexcept { record().set_switches(detail::kStatsTracking, on); }
  static bool counting() noexcept {
    return record().switches.load(std::memory_order_relaxed) & detail::kStatsCounting;
  }
  static bool tracking() noexcept {
    return record().switches.load(std::memory_order_relaxed) & detail::kStatsTracking;
  }

  // Every acquisition, contended or not: one thread-local load, one load of the switches and one
  // plain increment; tracking adds the hold's record.
  SPINWISE_ALWAYS_INLINE static void on_acquire(const void* lock, lock_mode m, lock_site site = {}) noexcept {
    detail::stats_shard* s = shard();
    const std::uint8_t sw = s != nullptr ? s->switches.load(std::memory_order_relaxed) : std::uint8_t{0xff};
    if (SPINWISE_LIKELY(sw == detail::kStatsCounting)) {
      detail::bump(s->mode(m).acquisitions, 1);
    } else if (sw != 0) {
      acquire_slow(s, sw, lock, m, site);
    }
  }

  // Every release: unless the thread lists a hold of this class, one load from its shard.
  SPINWISE_ALWAYS_INLINE static void on_release(const void* lock, lock_mode m) noexcept {
    detail::stats_shard* s = shard_slot();
    if (SPINWISE_UNLIKELY(s != nullptr && s->tracked_holds.load(std::memory_order_relaxed) != 0))
      release_slow(*s, lock, m);
  }

  // A change of mode without release: an upgrade (to x) is counted, as on_acquire counts, and a
  // tracked hold takes its new mode. Not on any wait: upgrade() calls it once the S holders left.
  static void on_mode_change(const void* lock, lock_mode m) noexcept {
    detail::stats_shard* s = shard();
    if (m == lock_mode::x) {
      detail::stats_shard& c = s != nullptr ? *s : record().overflow;  // no shard: out of memory
      if (c.switches.load(std::memory_order_relaxed) & detail::kStatsCounting) {
        if (SPINWISE_LIKELY(s != nullptr)) {
          detail::add_to<true>(c.mode(m).upgrades, 1);
        } else {
          detail::add_to<false>(c.mode(m).upgrades, 1);
        }
      }
    }
    if (SPINWISE_UNLIKELY(s != nullptr && s->tracked_holds.load(std::memory_order_relaxed) != 0))
      detail::retrack_hold(reinterpret_cast<std::uintptr_t>(lock), m);
  }

  // After a contended acquisition (in addition to on_acquire).
  SPINWISE_COLD static void on_contended(const wait_record& w, lock_mode m) noexcept {
    detail::stats_class_record& rec = record();
    detail::stats_shard* s = shard();
    if (((s != nullptr ? s->switches : rec.overflow.switches).load(std::memory_order_relaxed) &
         detail::kStatsCounting) == 0) {
      return;
    }
    const std::size_t bucket = wait_histogram_bucket(w.wait_ticks);
    if (s != nullptr) {
      detail::add_wait<true>(*s, w, m, bucket);
    } else {
      detail::add_wait<false>(rec.overflow, w, m, bucket);
    }
    std::uint64_t max = rec.max_wait_ticks.load(std::memory_order_relaxed);
    while (w.wait_ticks > max &&
           !rec.max_wait_ticks.compare_exchange_weak(max, w.wait_ticks, std::memory_order_relaxed)) {
    }
  }

  // A wait begins (the lock's slow path): true when it is tracked, and wait_end() must follow.
  SPINWISE_COLD static bool wait_begin(const void* lock, lock_mode m, lock_site site,
                                       std::uint64_t since) noexcept {
    detail::stats_shard* s = shard();
    const detail::stats_shard& sw = s != nullptr ? *s : record().overflow;
    if ((sw.switches.load(std::memory_order_relaxed) & detail::kStatsTracking) == 0) return false;
    detail::track_wait(reinterpret_cast<std::uintptr_t>(lock), &record(), m, site, since);
    return true;
  }
  SPINWISE_COLD static void wait_end() noexcept { detail::untrack_wait(); }

 private:
  // The calling thread's shard pointer for this class: nullptr until attached.
  SPINWISE_ALWAYS_INLINE static detail::stats_shard*& shard_slot() noexcept {
    thread_local detail::stats_shard* s = nullptr;  // constant-initialized: no TLS guard
    return s;
  }

  // The calling thread's shard for this class, attached on first use; nullptr if out of memory.
  SPINWISE_ALWAYS_INLINE static detail::stats_shard* shard() noexcept {
    detail::stats_shard*& s = shard_slot();
    if (SPINWISE_UNLIKELY(s == nullptr)) return detail::attach_shard(record(), &s);
    return s;
  }

  SPINWISE_COLD static detail::stats_class_record& find_record() noexcept {
    detail::stats_class_record* r = detail::find_stats_class(Class::name, nullptr);
    if (r == nullptr) {
      // Out of memory: a record of this module's own, unlisted, constructed by one thread while
      // any other first caller waits (this path only).
      alignas(detail::stats_class_record) static unsigned char fallback[sizeof(detail::stats_class_record)];
      static std::atomic<int> state{0};  // 0 none, 1 being constructed, 2 ready
      int expected = 0;
      if (state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        new (fallback) detail::stats_class_record(Class::name);
        state.store(2, std::memory_order_release);
      } else {
        while (state.load(std::memory_order_acquire) != 2) std::this_thread::yield();
      }
      r = std::launder(reinterpret_cast<detail::stats_class_record*>(fallback));
    }
    detail::found_once<detail::stats_class_record, Class>::ptr.store(r, std::memory_order_release);
    return *r;
  }

  SPINWISE_COLD static void release_slow(detail::stats_shard& s, const void* lock, lock_mode m) noexcept {
    if (detail::untrack_hold(reinterpret_cast<std::uintptr_t>(lock), m))
      s.tracked_holds.store(s.tracked_holds.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }

  // An acquisition with counting off, tracking on (sw: the shard's switches, as on_acquire read
  // them), or without a shard.
  SPINWISE_COLD static void acquire_slow(detail::stats_shard* s, std::uint8_t sw, const void* lock,
                                         lock_mode m, lock_site site) noexcept {
    detail::stats_class_record& rec = record();
    if (s ==
        nullptr) {  // out of memory: counted in the overflow block, not tracked (its releases could not tell)
      if (rec.overflow.switches.load(std::memory_order_relaxed) & detail::kStatsCounting)
        rec.overflow.mode(m).acquisitions.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (sw & detail::kStatsCounting) detail::bump(s->mode(m).acquisitions, 1);
    if ((sw & detail::kStatsTracking) &&
        detail::track_hold(reinterpret_cast<std::uintptr_t>(lock), &rec, m, site))
      s->tracked_holds.store(s->tracked_holds.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

}  // namespace spinwise
