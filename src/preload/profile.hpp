#pragma once
// The per-lock profile (SPINWISE_PRELOAD_PROFILE, docs/preload.md "Per-lock profile"): for each
// mutex, rwlock and condition variable that waited, its figures and its call sites, in a table of
// fixed size made once at the first call (profile.cpp), written at exit as JSON with the module
// map, for spinwise-run (tools/spinwise-run) to symbolize after the program ended.
//
// Recorded only by the interposed calls that count (on_kind's third mode, kStatsProfile: its own
// instantiation of every lock, with profile_stats below as the statistics policy), so with the
// profile off no lock's code changes: the mode is the value on_kind reads already. In the profile
// mode, a lock enters the table at its first contended acquisition (its first wait); after that one
// in kSampleEvery of a thread's acquisitions is looked up: counted for kSampleEvery (an estimate)
// and timed until its release (the time held, sampled). A lock that finds no slot is
// counted in the table's overflow, not dropped.
//
// Everything here runs inside a counted call (tl_inside), so a signal handler's lock calls on the
// same thread while it records are plain calls (as for the statistics): nothing recurses. No
// allocation: the table is mapped once, at the first call.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "spinwise/lock_stats.hpp"

namespace spinwise::preload {

enum class object_kind : std::uint8_t { none, mutex, recursive, errorcheck, rwlock, cond };

// Per thread: the return address of the interposed call this thread is in (on_kind sets it in the
// profile mode), the lock whose wait the lock's meter measures (between wait_begin and
// on_contended), and the lock whose hold is being timed (nullptr: none).
extern __thread const void* tl_caller __attribute__((tls_model("initial-exec")));
extern __thread const void* tl_waiting __attribute__((tls_model("initial-exec")));
extern __thread const void* tl_held __attribute__((tls_model("initial-exec")));
// This thread's acquisitions in the profile mode, for the sampling below.
extern __thread std::uint32_t tl_acquired __attribute__((tls_model("initial-exec")));
// The profiled locks this thread holds (acquisitions less releases in the profile mode; below zero
// where a lock taken inside a counted call, uncounted, was released outside one), and how many of
// its records wait for it to hold none (below).
extern __thread int tl_holding __attribute__((tls_model("initial-exec")));
extern __thread std::uint8_t tl_pending __attribute__((tls_model("initial-exec")));

// One acquisition in this many of a thread's is looked up in the table: counted for this many
// (the lock's acquisitions are an estimate), and its hold timed if no other is.
constexpr std::uint32_t kSampleEvery = 16;

// Records made after the release, a batch at a time. A wait is known once its lock is taken, a
// wake-up usually while the condition's mutex is held: recorded there (the table's lookup, the
// site, the thread's slot, the class's own counters), each lengthened a hold that the lock's other
// threads waited behind. Made at the end of every release instead, they cost a bounded buffer a
// third of its items all the same, with more futex calls and context switches; made a batch at a
// time, about a tenth (bench/results/profile-batches-zen4); made where the thread is about to
// sleep in a condition wait, and on a release's way back only from 12 on, none measurable
// (bench/results/profile-cond-flush-zen4). So a thread keeps up to kPending records and makes them
// in a condition wait before it sleeps (holding no other lock), at the end of the interposed call
// that released its last profiled lock once it holds kFlushAt or more, at its exit, at the report
// at exit, and where a record more would not fit.
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
// Makes them if it keeps `at_least` (1 or more) and holds no profiled lock: on a release's way
// back (kFlushAt) and in a condition wait before the sleep (1).
inline void profile_flush_if_free(std::uint8_t at_least) noexcept {
  if (tl_pending >= at_least && tl_holding <= 0) profile_flush();
}
void profile_acquired(const void* object) noexcept;
void profile_released(const void* object) noexcept;  // only when tl_held == object
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

// The statistics policy of the profile mode: the class's statistics as ever (class_stats, so the
// type-level figures are the same) and the lock's own in the table. Lock: the address of the
// spinwise lock inside the pthread object, Offset bytes into it.
template <class Class, object_kind Kind, std::size_t Offset>
struct profile_stats : class_stats<Class> {
  using base = class_stats<Class>;

  static const void* object_of(const void* lock) noexcept { return static_cast<const char*>(lock) - Offset; }

  SPINWISE_ALWAYS_INLINE static void on_acquire(const void* lock, lock_mode m, lock_site site = {}) noexcept {
    base::on_acquire(lock, m, site);
    ++tl_holding;
    if (SPINWISE_UNLIKELY(++tl_acquired % kSampleEvery == 0)) profile_acquired(object_of(lock));
  }
  SPINWISE_ALWAYS_INLINE static void on_release(const void* lock, lock_mode m) noexcept {
    base::on_release(lock, m);
    --tl_holding;
    if (tl_held == object_of(lock)) profile_released(object_of(lock));
  }
  static bool wait_begin(const void* lock, lock_mode m, lock_site site, std::uint64_t since) noexcept {
    tl_waiting = lock;
    return base::wait_begin(lock, m, site, since);
  }
  static void on_contended(const wait_record& r, lock_mode m) noexcept {
    profile_contended(object_of(tl_waiting), Kind, tl_caller, r, m, &base::on_contended);
  }
};

}  // namespace spinwise::preload
