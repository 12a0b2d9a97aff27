#pragma once
// The per-lock profile (SPINWISE_PRELOAD_PROFILE, docs/preload.md "Per-lock profile"): for each
// mutex, rwlock and condition variable that waited, its figures and its call sites, in a table of
// fixed size made once at the first call (profile.cpp), written at exit as JSON with the module
// map, for spinwise-run (tools/spinwise-run) to symbolize after the program ended.
//
// Recorded only by the interposed calls that count (on_kind's third mode, kStatsProfile), so with
// the profile off no lock's code changes: the mode is the value on_kind reads already. In the
// profile mode every lock is a profile_lock (interposer.hpp): an acquisition that does not wait
// runs the off path's own code (the lock compiled with no_stats) and then profile_hooks below; one
// that waits runs the lock compiled with profile_stats below, which measures the wait. A lock
// enters the table at its first contended acquisition (its first wait); after that about one in
// kSampleEvery of a thread's acquisitions (a random interval) is looked up: counted for
// kSampleEvery (an estimate) and timed until its release (the time held, sampled). A lock that
// finds no slot is counted in the table's overflow, not dropped.
//
// Everything here that records runs inside a counted call (tl_state.inside), so a signal
// handler's lock calls on the same thread while it records are plain calls (as for the
// statistics): nothing recurses. Only the countdown of an acquisition that neither waits nor is
// sampled (tl_state.to_go) and the release of a timed hold (a look at tl_state.held, and two
// atomic adds to its lock's entry, no lock) run outside one: a handler's calls between the
// countdown's load and store may be lost from an estimate, and one between a wait's
// tl_state.caller and the wait may lend the wait its own call site, no more. No allocation: the
// table is mapped once, at the first call.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "spinwise/lock_stats.hpp"

namespace spinwise::preload {

enum class object_kind : std::uint8_t { none, mutex, recursive, errorcheck, rwlock, cond };

// The interposer's per-thread state, in one block: a call finds all of it from one address.
struct thread_state {
  // Inside one of the interposed calls that counts (interposer.hpp's on_kind, counted_call): a lock
  // the statistics or the profile take themselves then runs without them, no recursion.
  int inside;
  // The acquisitions to go before the next sampled one (profile_count_acquired below).
  std::uint32_t to_go;
  // Records kept for the batches below.
  std::uint8_t pending;
  // The return address of the interposed call whose wait this thread makes (set in the profile
  // mode before the wait: lock_from, note_wait_site in interposer.hpp), the lock whose wait the
  // lock's meter measures (between wait_begin and on_contended), and the lock whose hold is being
  // timed (nullptr: none).
  const void* caller;
  const void* waiting;
  const void* held;
};
extern __thread thread_state tl_state __attribute__((tls_model("initial-exec")));

// tl_state.to_go: an acquisition takes one off and is the sampled one when that steps it from 0
// (bit 31 set after the step: a countdown is at most 2^31 - 1); profile_acquired, called for that
// acquisition at once, draws the next (profile_sample_drawn). Nothing else is counted on a call
// that neither waits nor is sampled: a count of the profiled locks a thread holds (one more add on
// every release, so that a batch of records below is made only where the thread holds none) cost
// a program of nothing but uncontended calls 3% of its throughput (bench/results/
// profile-countdown-zen5).
constexpr std::uint32_t kSampleDue = std::uint32_t{1} << 31;

// About one acquisition in this many of a thread's is looked up in the table: counted for this
// many (the lock's acquisitions are an estimate), and its hold timed if no other is. The interval
// to the next is drawn at random from 1 to 2 * kSampleEvery - 1 (profile_acquired), so a thread
// that takes two locks in turn, or a mutex and an rwlock, has each sampled at its share: a fixed
// interval of 16 sampled one of them only.
constexpr std::uint32_t kSampleEvery = 16;

// Records made after the release, a batch at a time. A wait is known once its lock is taken, a
// wake-up usually while the condition's mutex is held: recorded there (the table's lookup, the
// site, the thread's slot, the class's own counters), each lengthened a hold that the lock's other
// threads waited behind. Made at the end of every release instead, they cost a bounded buffer a
// third of its items all the same, with more futex calls and context switches; made a batch at a
// time, about a tenth (bench/results/profile-batches-zen4); made where the thread is about to
// sleep in a condition wait, and on a release's way back only from 12 on, none measurable
// (bench/results/profile-cond-flush-zen4). So a thread keeps up to kPending records and makes them
// in a condition wait before it sleeps, right after a release once it keeps kFlushAt or more
// (profile_count_released), at its exit, at the report at exit, and where a record more would not
// fit. A thread that holds other locks there (a lock taken inside another) makes them with those
// held: one hold in kFlushAt waits or so lengthened by a batch, where knowing would cost a count on
// every call (tl_state.to_go above).
// Figures the same, made later: up to kPending of a thread still running at exit are not in the
// report. A wait at a site new to its lock is recorded at once (its callers are unwound from its
// lock call).
constexpr std::uint8_t kPending = 16;
constexpr std::uint8_t kFlushAt = 12;

// profile.cpp. object: the pthread object's address (the table's key); caller: the interposed
// call's return address. `counted`: the class's own on_contended, which is deferred with it.
using class_wait_hook = void (*)(const wait_record&, lock_mode) noexcept;
void profile_contended(const void* object, object_kind kind, const void* caller, const wait_record& r,
                       lock_mode m, class_wait_hook counted) noexcept;
void profile_flush() noexcept;  // this thread's deferred records, now
// Makes them if it keeps any: in a condition wait before the sleep.
inline void profile_flush_kept() noexcept {
  if (tl_state.pending != 0) profile_flush();
}
// A sampled acquisition (profile_count_acquired true): counted for kSampleEvery on object's entry,
// its hold timed if none is, and the next interval drawn. False for a thread's first acquisition
// when its first sample lies later (profile.cpp): not counted.
bool profile_acquired(const void* object) noexcept;
bool profile_took_locks() noexcept;  // a profiled acquisition was made (the types' counts are sampled)
void profile_released(const void* object) noexcept;  // only when tl_state.held == object
void profile_cond_wait(const void* cond, const void* caller, std::uint64_t ticks, bool timed_out) noexcept;
void profile_cond_wake(const void* cond, bool broadcast, long woken) noexcept;

// Maps the table (SPINWISE_PRELOAD_PROFILE_SLOTS); false, with one line on stderr, when it
// cannot. The report at exit, and a forked child's rule (profile.cpp).
bool profile_start() noexcept;
// The unwinder's one-time set-up, made by the first caller once the kind is set (settings.cpp),
// inside a counted call (so its own lock calls are plain), not on a lock's path.
void profile_warm_unwinder() noexcept;
void write_profile_at_exit() noexcept;
void profile_fork_child() noexcept;

// Every acquisition in the profile mode, once the lock is held: one in a thread's interval is
// counted (profile_acquired).
SPINWISE_ALWAYS_INLINE bool profile_count_acquired() noexcept {
  return SPINWISE_UNLIKELY((--tl_state.to_go & kSampleDue) != 0);
}
// The next countdown, `to_go` acquisitions before the sampled one (profile_acquired, for the
// acquisition profile_count_acquired said is sampled).
inline void profile_sample_drawn(std::uint32_t to_go) noexcept { tl_state.to_go = to_go; }
// Every release in the profile mode, once the lock is free: the hold's timing if it was timed, and
// the batch of kept records once it keeps kFlushAt.
SPINWISE_ALWAYS_INLINE void profile_count_released(const void* object) noexcept {
  if (SPINWISE_UNLIKELY(tl_state.held == object)) profile_released(object);
  if (SPINWISE_UNLIKELY(tl_state.pending >= kFlushAt)) profile_flush();
}

// The profile mode's policy of a lock's waits: the class's statistics as ever (class_stats, every
// acquisition counted, so the type-level figures of a wait are the same) and the lock's own in the
// table. Lock: the address of the spinwise lock inside the pthread object, Offset bytes into it.
template <class Class, object_kind Kind, std::size_t Offset>
struct profile_stats : class_stats<Class> {
  using base = class_stats<Class>;

  static const void* object_of(const void* lock) noexcept { return static_cast<const char*>(lock) - Offset; }

  SPINWISE_ALWAYS_INLINE static void on_acquire(const void* lock, lock_mode m, lock_site site = {}) noexcept {
    base::on_acquire(lock, m, site);
    if (profile_count_acquired()) (void)profile_acquired(object_of(lock));
  }
  // Not called by profile_lock, which releases through the lock seen with no statistics and
  // profile_hooks (so a preload class's tracking, which the interposer never turns on, would not
  // see its releases); kept for a lock made with this policy alone.
  SPINWISE_ALWAYS_INLINE static void on_release(const void* lock, lock_mode m) noexcept {
    base::on_release(lock, m);
    profile_count_released(object_of(lock));
  }
  static bool wait_begin(const void* lock, lock_mode m, lock_site site, std::uint64_t since) noexcept {
    tl_state.waiting = lock;
    return base::wait_begin(lock, m, site, since);
  }
  static void on_contended(const wait_record& r, lock_mode m) noexcept {
    profile_contended(object_of(tl_state.waiting), Kind, tl_state.caller, r, m, &base::on_contended);
  }
};

// The profile mode's hooks for an acquisition that did not wait (profile_lock's and the
// interposer's own reader entry), run beside the lock compiled with no_stats: the class counts the
// sampled one for kSampleEvery (class_stats::count_acquisitions), so with the profile on the
// type-level acquisitions are an estimate (those that waited counted one by one, the others
// sampled), and every other type-level figure, of the waits, is exact as ever. Counted one by one
// here, the statistics' shard lookup, increment and look at tracked holds on every call cost a
// program of nothing but uncontended lock calls 16-25% (bench/results/profile-uncontended-zen4).
template <class Class, object_kind Kind, std::size_t Offset>
struct profile_hooks {
  static const void* object_of(const void* lock) noexcept { return static_cast<const char*>(lock) - Offset; }

  SPINWISE_ALWAYS_INLINE static void on_acquire(const void* lock, lock_mode m) noexcept {
    if (profile_count_acquired()) sampled(object_of(lock), m);
  }
  SPINWISE_ALWAYS_INLINE static void on_release(const void* lock, lock_mode) noexcept {
    profile_count_released(object_of(lock));
  }

 private:
  // Counts 0 for an acquisition not counted (a thread's first, whose sample lies later): that
  // still makes the thread's counters of the class there, at its first acquisition.
  SPINWISE_COLD static void sampled(const void* object, lock_mode m) noexcept {
    ++tl_state.inside;  // the class's first count in this thread takes a lock (its shard)
    class_stats<Class>::count_acquisitions(m, profile_acquired(object) ? kSampleEvery : 0);
    --tl_state.inside;
  }
};

}  // namespace spinwise::preload
