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
// Here: the statistics policies (no_stats, class_stats) and the walk over the classes
// (for_each_stats_class, reset_max_waits). What is counted (the counter tables, wait_record,
// lock_stats_totals) is in <spinwise/lock_stats_counters.hpp>, where the counts live (the shards,
// the class records) in detail/stats_shards.hpp; both come with this header. Snapshots, diffs,
// reset and the text/JSON reports live in spinwise::runtime (<spinwise/runtime/stats_report.hpp>).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string_view>
#include <thread>

#include "spinwise/config.hpp"
#include "spinwise/detail/lock_tracking.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/detail/stats_shards.hpp"
#include "spinwise/lock_site.hpp"
#include "spinwise/lock_stats_counters.hpp"

namespace spinwise {

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

  // n acquisitions in mode m at once, counted as on_acquire counts them but never tracked: for a
  // caller that counts a sample (the interposer's profile mode counts one acquisition that did not
  // wait in about kSampleEvery, as that many; src/preload/profile.hpp).
  SPINWISE_COLD static void count_acquisitions(lock_mode m, std::uint64_t n) noexcept {
    detail::stats_shard* s = shard();
    if (SPINWISE_UNLIKELY(s == nullptr)) {  // out of memory: the overflow block
      detail::stats_shard& o = record().overflow;
      if (o.switches.load(std::memory_order_relaxed) & detail::kStatsCounting)
        detail::add_to<false>(o.mode(m).acquisitions, n);
      return;
    }
    if (s->switches.load(std::memory_order_relaxed) & detail::kStatsCounting)
      detail::bump(s->mode(m).acquisitions, n);
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
