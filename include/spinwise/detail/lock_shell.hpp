#pragma once
// The shell every spinwise lock is: one algorithm (a raw lock: its word, how it is taken, how it is
// waited for and given back) plus, written once here, what makes it a lock to its users:
// ThreadSanitizer's mutex hooks, the statistics policy's calls, Clang's thread-safety annotations,
// `with_stats`, a lock-site overload of every acquiring call, the timed forms over a deadline and
// the std names (Lockable, TimedLockable, SharedLockable, SharedTimedLockable).
//
//   using ttas_mutex_t<Policy, Stats> = lock_shell<flag_raw<Policy, true>, Stats>
//   using spin_shared_mutex_t<Policy, Stats> = shared_lock_shell<spin_shared_raw<Policy>, Stats>
//
// A raw lock (Raw) provides, for the exclusive mode:
//   using policy;                      its wait policy (knobs, Tag)
//   static constexpr bool kTimedWaits  acquire_slow takes a deadline and can give up
//   public:    bool is_locked() const  (and any other racy snapshot it offers)
//   protected: bool try_acquire()      try_lock: never waits
//              bool acquire_fast()     lock()'s first attempt (ttas: an exchange, where try_acquire
//                                      loads first); or first_try<Word>, which also carries the word
//                                      the failed attempt saw, and lock() passes it on as
//                                      acquire_slow's third argument
//              template <class Stats, class Deadline> bool acquire_slow(const Deadline&, lock_site)
//                                      the wait once acquire_fast failed; false only when a timed
//                                      deadline passed. Without kTimedWaits it is only ever given
//                                      no_deadline, and the timed calls poll try_acquire instead
//                                      (poll_until below): they never take a place in its queue
//              void release()
// and for the shared mode the same four with `_shared` (and kTimedSharedWaits). It derives from
// raw_lock, whose hooks (x_held, x_releasing: ThreadSanitizer annotations of the lock's own beyond
// its word, sx_lock's SX token) are empty.
//
// The shell adds no data: a lock is as large as its raw lock, and `this` is the raw lock's address
// (the identity its waits are tracked by). For no_stats and outside TSan every call here is an
// empty inline function, so lock() compiles to acquire_fast() and a cold call.

#include <chrono>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/deadline.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_site.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise::detail {

// The base of every raw lock: the hooks a lock with state of its own to announce overrides.
class raw_lock {
 protected:
  static constexpr bool kTimedWaits = false;
  static constexpr bool kTimedSharedWaits = false;
  // Exclusive mode held (after TSan's post_lock; f: its flags), about to be given back.
  static void x_held(unsigned /*f*/) noexcept {}
  static void x_releasing() noexcept {}
};

// A timed wait of a lock whose own wait cannot give up (it queued, or reserved the lock), called
// once `take` has failed: until the deadline passes (false), a Policy round, then a yield, between
// polls of `take` (true once it succeeds). It never takes a place, so it waits behind every waiter
// that does. A deadline that has passed leaves the call the try_lock it was.
template <class Policy, class Stats, class Deadline, class Take>
SPINWISE_COLD bool poll_until(const void* lock, lock_mode m, lock_site site, const Deadline& d,
                              Take&& take) noexcept {
  spin_then_yield<Policy, Stats> wt(lock, m, site);  // reports only a wait that ends in the lock
  for (;;) {
    if (d.expired()) return false;
    wt.pause();
    if (take()) {
      wt.entered();
      return true;
    }
  }
}

// What an acquire_fast may return instead of bool: whether it took the lock and, when not, the
// word its failed CAS saw. lock()'s wait starts from that word: a reload right after the CAS
// would often see a newer one, and a waiter that saw the lock busy would retry at once instead
// of pausing first (spin_shared_mutex lost 3% at 32 threads on 2 CPUs that way).
template <class Word>
struct first_try {
  bool ok;
  Word seen;
  explicit operator bool() const noexcept { return ok; }
};

constexpr unsigned try_flags(unsigned f, bool ok) noexcept {
  return f | tsan::kTryLock | (ok ? 0u : tsan::kTryLockFailed);
}

template <class Raw, class Stats>
class SPINWISE_CAPABILITY("mutex") lock_shell : public Raw {
 public:
  using policy = typename Raw::policy;
  using stats = Stats;
  // This lock with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): ttas_mutex::with_stats<my_class>.
  template <class Class>
  using with_stats = lock_shell<Raw, class_stats<Class>>;

  constexpr lock_shell() noexcept = default;
  lock_shell(const lock_shell&) = delete;
  lock_shell& operator=(const lock_shell&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~lock_shell() { tsan::destroy(this); }  // a lock reusing this address is a new mutex
#endif

  void lock() noexcept SPINWISE_ACQUIRE() { lock(lock_site{}); }
  // The same, with the caller's site for lock tracking: lock(SPINWISE_SITE). So for every call.
  void lock(lock_site site) noexcept SPINWISE_ACQUIRE() {
    tsan::pre_lock(this, 0);
    if (const auto r = this->acquire_fast(); SPINWISE_UNLIKELY(!r)) {
      if constexpr (std::is_same_v<decltype(r), const bool>) {
        this->template acquire_slow<Stats>(no_deadline{}, site);
      } else {
        this->template acquire_slow<Stats>(no_deadline{}, site, r.seen);
      }
    }
    Stats::on_acquire(this, lock_mode::x, site);
    tsan::post_lock(this, 0);
    this->x_held(0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) { return try_lock(lock_site{}); }
  [[nodiscard]] bool try_lock(lock_site site) noexcept SPINWISE_TRY_ACQUIRE(true) {
    tsan::pre_lock(this, tsan::kTryLock);
    const bool ok = this->try_acquire();
    return tried(ok, site);
  }

  // Waits at most `rel` (measured on steady_clock). Returns false only once that time has passed;
  // rel <= 0 is a try_lock(), a wait beyond a century has no end (detail/deadline.hpp).
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& rel, lock_site site = {}) noexcept
      SPINWISE_TRY_ACQUIRE(true) {
    return try_lock_until(deadline_after(rel), site);
  }

  // Waits until `at` on any clock. Returns false only once Clock::now() >= at; a time that has
  // passed makes it a try_lock(). A clock whose now() throws terminates the program.
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& at,
                                    lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE(true) {
    tsan::pre_lock(this, tsan::kTryLock);
    bool ok = this->try_acquire();
    if (!ok) {
      const clock_deadline<Clock, Duration> d{at};
      if constexpr (Raw::kTimedWaits) {
        ok = this->template acquire_slow<Stats>(d, site);
      } else {
        ok = poll_until<policy, Stats>(this, lock_mode::x, site, d, [this] { return this->try_acquire(); });
      }
    }
    return tried(ok, site);
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    this->x_releasing();
    tsan::pre_unlock(this, 0);
    this->release();
    tsan::post_unlock(this, 0);
  }

 private:
  bool tried(bool ok, lock_site site) noexcept {
    if (ok) Stats::on_acquire(this, lock_mode::x, site);
    tsan::post_lock(this, try_flags(0, ok));
    if (ok) this->x_held(tsan::kTryLock);
    return ok;
  }
};

template <class Raw, class Stats>
class SPINWISE_CAPABILITY("mutex") shared_lock_shell : public lock_shell<Raw, Stats> {
 public:
  template <class Class>
  using with_stats = shared_lock_shell<Raw, class_stats<Class>>;

  void lock_shared() noexcept SPINWISE_ACQUIRE_SHARED() { lock_shared(lock_site{}); }
  void lock_shared(lock_site site) noexcept SPINWISE_ACQUIRE_SHARED() {
    tsan::pre_lock(this, tsan::kReadLock);
    if (const auto r = this->acquire_shared_fast(); SPINWISE_UNLIKELY(!r)) {
      if constexpr (std::is_same_v<decltype(r), const bool>) {
        this->template acquire_shared_slow<Stats>(no_deadline{}, site);
      } else {
        this->template acquire_shared_slow<Stats>(no_deadline{}, site, r.seen);
      }
    }
    Stats::on_acquire(this, lock_mode::s, site);
    tsan::post_lock(this, tsan::kReadLock);
  }

  [[nodiscard]] bool try_lock_shared() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return try_lock_shared(lock_site{});
  }
  [[nodiscard]] bool try_lock_shared(lock_site site) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    tsan::pre_lock(this, tsan::kReadLock | tsan::kTryLock);
    return tried_shared(this->try_acquire_shared(), site);
  }

  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& rel,
                                         lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return try_lock_shared_until(deadline_after(rel), site);
  }

  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& at,
                                           lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    tsan::pre_lock(this, tsan::kReadLock | tsan::kTryLock);
    bool ok = this->try_acquire_shared();
    if (!ok) {
      const clock_deadline<Clock, Duration> d{at};
      if constexpr (Raw::kTimedSharedWaits) {
        ok = this->template acquire_shared_slow<Stats>(d, site);
      } else {
        ok = poll_until<typename Raw::policy, Stats>(this, lock_mode::s, site, d,
                                                     [this] { return this->try_acquire_shared(); });
      }
    }
    return tried_shared(ok, site);
  }

  void unlock_shared() noexcept SPINWISE_RELEASE_SHARED() {
    Stats::on_release(this, lock_mode::s);
    tsan::pre_unlock(this, tsan::kReadLock);
    this->release_shared();
    tsan::post_unlock(this, tsan::kReadLock);
  }

 private:
  bool tried_shared(bool ok, lock_site site) noexcept {
    if (ok) Stats::on_acquire(this, lock_mode::s, site);
    tsan::post_lock(this, try_flags(tsan::kReadLock, ok));
    return ok;
  }
};

}  // namespace spinwise::detail
