#pragma once
// Who holds and who waits for which lock, live: the records behind lock tracking
// (class_stats<C>::set_tracking, lock_stats.hpp) and the stuck-wait watchdog
// (<spinwise/runtime/lock_watch.hpp>).
//
// Every thread that takes a lock of a tracked class gets one tracked_thread, listed in a
// process-wide registry: the locks it holds (a bounded stack, kTrackedHolds deep; deeper holds
// are counted, not listed) and the one lock it waits for. Only the owning thread writes its
// record, under a per-thread sequence lock (odd while it writes; see tracked_thread::begin), so
// after a thread's first tracked lock (which lists it under the registry's mutex) tracking adds
// no shared write to a lock's path. A reader (a snapshot, the watchdog) copies a record under the
// registry's mutex and keeps the copy only if the sequence was even and unchanged around it.
// Every field is an atomic, so the copy is a race for nobody, ThreadSanitizer included.
//
// A hold is listed by the thread that took the lock and unlisted by that thread's unlock of the
// same mode. An unlock in another thread (an S latch handed over, as InnoDB's I/O completion
// does) cannot unlist it: the hold stays listed until the taking thread ends. Tracking is a
// diagnostic; it never changes what a lock does.

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/lock_site.hpp"

namespace spinwise::detail {

struct stats_class_record;

inline constexpr std::size_t kTrackedHolds = 32;

// One hold or one wait. lock == 0: an empty entry.
struct tracked_entry {
  std::atomic<std::uintptr_t> lock{0};
  std::atomic<const stats_class_record*> cls{nullptr};
  std::atomic<const char*> file{nullptr};
  std::atomic<int> line{0};
  std::atomic<std::uint8_t> mode{0};
  std::atomic<std::uint64_t> since{0};  // read_counter() when the hold or the wait began

  void set(std::uintptr_t l, const stats_class_record* c, lock_mode m, lock_site s,
           std::uint64_t t) noexcept {
    lock.store(l, std::memory_order_release);
    cls.store(c, std::memory_order_release);
    file.store(s.file, std::memory_order_release);
    line.store(s.line, std::memory_order_release);
    mode.store(static_cast<std::uint8_t>(m), std::memory_order_release);
    since.store(t, std::memory_order_release);
  }
  void copy_from(const tracked_entry& o) noexcept {
    set(o.lock.load(std::memory_order_relaxed), o.cls.load(std::memory_order_relaxed),
        static_cast<lock_mode>(o.mode.load(std::memory_order_relaxed)),
        {o.file.load(std::memory_order_relaxed), o.line.load(std::memory_order_relaxed)},
        o.since.load(std::memory_order_relaxed));
  }
};

struct tracked_thread {
  std::uint64_t tid = 0;              // the kernel's thread id (gettid), as ps and perf show it
  std::atomic<std::uint32_t> seq{0};  // odd while the owner writes
  std::atomic<std::uint32_t> holds{0};
  std::atomic<std::uint64_t> unlisted{0};  // holds taken beyond kTrackedHolds deep, ever
  std::atomic<std::uint64_t> wait_id{0};   // numbers the thread's tracked waits
  tracked_entry wait;                      // lock == 0: not waiting
  tracked_entry hold[kTrackedHolds];
  std::atomic<std::uint64_t> reported_wait{0};  // the watchdog's: the last wait it reported
  tracked_thread* next = nullptr;               // registry list, under the registry's mutex
  tracked_thread* prev = nullptr;

  // The owner's writes: begin() ... end() around every change.
  //
  // No fences (ThreadSanitizer does not model them): every field is stored with release and read
  // with acquire, so a reader that sees any store of a write also sees the odd sequence before
  // it, and its second read of the sequence tells it to retry.
  void begin() noexcept { seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  void end() noexcept { seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
};

// Every tracked thread of the process, newest first. One for every module (a process-wide
// object, process_state.hpp); threads are unlisted when they exit.
struct tracking_registry {
  std::mutex mu;
  tracked_thread* head = nullptr;  // guarded by mu
};

// Found once and cached (found_once: no function-local static's guard); nullptr while memory is
// short (asked again next time).
SPINWISE_COLD inline tracking_registry* tracking_threads() noexcept {
  tracking_registry* r =
      found_once<tracking_registry, tracking_registry>::ptr.load(std::memory_order_acquire);
  if (r != nullptr) return r;
  r = static_cast<tracking_registry*>(find_object(
      kTrackingObject, "threads", []() noexcept -> void* { return new (std::nothrow) tracking_registry; }));
  if (r != nullptr) found_once<tracking_registry, tracking_registry>::ptr.store(r, std::memory_order_release);
  return r;
}

// Unlists and frees the thread's record when the thread exits. A lock taken later in the thread's
// teardown is not tracked (this_thread_state().tracking_exiting).
struct tracked_thread_exit {
  tracked_thread* t = nullptr;
  ~tracked_thread_exit() {
    thread_state& ts = this_thread_state();
    ts.tracking_exiting = true;
    ts.tracked = nullptr;
    if (t == nullptr) return;
    tracking_registry* r = tracking_threads();
    std::lock_guard<std::mutex> g(r->mu);
    if (t->prev != nullptr) {
      t->prev->next = t->next;
    } else {
      r->head = t->next;
    }
    if (t->next != nullptr) t->next->prev = t->prev;
    delete t;
  }
};

// The calling thread's record, created and listed on first use; nullptr when the thread is exiting
// or memory is short (the lock is then not tracked).
SPINWISE_COLD inline tracked_thread* this_tracked_thread() noexcept {
  thread_state& ts = this_thread_state();
  if (ts.tracked != nullptr) return static_cast<tracked_thread*>(ts.tracked);
  if (ts.tracking_exiting) return nullptr;
  tracking_registry* r = tracking_threads();
  if (r == nullptr) return nullptr;
  thread_local tracked_thread_exit exit_hook;
  auto* t = new (std::nothrow) tracked_thread;
  if (t == nullptr) return nullptr;
  t->tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  {
    std::lock_guard<std::mutex> g(r->mu);
    t->next = r->head;
    if (r->head != nullptr) r->head->prev = t;
    r->head = t;
  }
  exit_hook.t = t;
  ts.tracked = t;
  return t;
}

// The holds and waits of the calling thread (the owner's side).
// Lists a hold of `lock`; false when it is not listed (no record, or the stack is full).
SPINWISE_COLD inline bool track_hold(std::uintptr_t lock, const stats_class_record* c, lock_mode m,
                                     lock_site site) noexcept {
  tracked_thread* t = this_tracked_thread();
  if (t == nullptr) return false;
  const std::uint32_t n = t->holds.load(std::memory_order_relaxed);
  if (n == kTrackedHolds) {
    t->unlisted.store(t->unlisted.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return false;
  }
  const std::uint64_t now = read_counter();
  t->begin();
  t->hold[n].set(lock, c, m, site, now);
  t->holds.store(n + 1, std::memory_order_release);
  t->end();
  return true;
}

// The index of the newest hold of `lock` in mode m, or failing that of the newest of `lock` in
// any mode; t.holds if none is listed (taken untracked, or beyond the stack's depth).
inline std::uint32_t find_hold(const tracked_thread& t, std::uintptr_t lock, lock_mode m) noexcept {
  const std::uint32_t n = t.holds.load(std::memory_order_relaxed);
  std::uint32_t found = n;
  for (std::uint32_t i = n; i-- > 0;) {
    if (t.hold[i].lock.load(std::memory_order_relaxed) != lock) continue;
    if (found == n) found = i;
    if (t.hold[i].mode.load(std::memory_order_relaxed) == static_cast<std::uint8_t>(m)) return i;
  }
  return found;
}

// Unlists the hold a release of `lock` in mode m ends (an SX holder may hold S too); false if
// the thread lists none.
SPINWISE_COLD inline bool untrack_hold(std::uintptr_t lock, lock_mode m) noexcept {
  auto* t = static_cast<tracked_thread*>(this_thread_state().tracked);
  if (t == nullptr) return false;
  const std::uint32_t n = t->holds.load(std::memory_order_relaxed);
  const std::uint32_t found = find_hold(*t, lock, m);
  if (found == n) return false;
  t->begin();
  if (found + 1 != n) t->hold[found].copy_from(t->hold[n - 1]);  // the stack stays dense
  t->hold[n - 1].lock.store(0, std::memory_order_release);
  t->holds.store(n - 1, std::memory_order_release);
  t->end();
  return true;
}

// sx_lock's upgrade (SX -> X) and downgrade (X -> SX): the listed hold of `lock` in the mode it
// leaves (find_hold) changes to m.
SPINWISE_COLD inline void retrack_hold(std::uintptr_t lock, lock_mode m) noexcept {
  auto* t = static_cast<tracked_thread*>(this_thread_state().tracked);
  if (t == nullptr) return;
  const std::uint32_t found = find_hold(*t, lock, m == lock_mode::x ? lock_mode::sx : lock_mode::x);
  if (found == t->holds.load(std::memory_order_relaxed)) return;
  t->begin();
  t->hold[found].mode.store(static_cast<std::uint8_t>(m), std::memory_order_release);
  t->end();
}

SPINWISE_COLD inline void track_wait(std::uintptr_t lock, const stats_class_record* c, lock_mode m,
                                     lock_site site, std::uint64_t since) noexcept {
  tracked_thread* t = this_tracked_thread();
  if (t == nullptr) return;
  t->begin();
  t->wait_id.store(t->wait_id.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  t->wait.set(lock, c, m, site, since);
  t->end();
}

SPINWISE_COLD inline void untrack_wait() noexcept {
  auto* t = static_cast<tracked_thread*>(this_thread_state().tracked);
  if (t == nullptr || t->wait.lock.load(std::memory_order_relaxed) == 0) return;
  t->begin();
  t->wait.lock.store(0, std::memory_order_release);
  t->end();
}

}  // namespace spinwise::detail
