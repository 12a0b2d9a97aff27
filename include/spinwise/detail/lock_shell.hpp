#pragma once
// The shell every spinwise lock is: one algorithm (a raw lock: its word, how it is taken, how it is
// waited for and given back) plus, written once here, what makes it a lock to its users:
// ThreadSanitizer's mutex hooks, the statistics policy's calls, Clang's thread-safety annotations,
// `with_stats`, a lock-site overload of every acquiring call, the timed forms over a deadline and
// the std names (Lockable, TimedLockable, SharedLockable, SharedTimedLockable).
//
//   using ttas_mutex_t<Policy, Stats> = lock_shell<flag_raw<Policy, true>, Stats>
//   using spin_shared_mutex_t<Policy, Stats> = shared_lock_shell<rw_raw<Policy, rw_spin_wait>, Stats>
//
// A raw lock (Raw) provides, for the exclusive mode:
//   using policy;                      its wait policy (knobs, Tag)
//   static constexpr bool kTimedWaits  acquire_slow takes a deadline and can give up
//   its word                           as data members: the raw lock is not empty, and a noexcept
//                                      default constructor makes it unlocked
//   public:    racy snapshots          is_locked() const and the like (the shell publishes those
//                                      docs/locks.md names, below)
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
// for the shared mode (shared_lock_shell) the same four with `_shared` (and kTimedSharedWaits),
// and for SX (sx_lock's; the shared shell's sx_mode) acquire_sx_fast, try_acquire_sx,
// acquire_sx_slow<Stats>(lock_site) and release_sx. It derives from raw_lock, whose hooks
// (x_held, x_releasing, sx_held, sx_releasing: ThreadSanitizer annotations of the lock's own
// beyond its word, sx_lock's SX token) are empty. raw_contract below checks all of it where a
// shell is made, so a raw lock that misses a member fails to compile naming the member.
//
// Each mode (x_mode, s_mode, sx_mode) goes through the same sequence, written once in the mode
// helpers (enter, try_enter, enter_until, leave): TSan's pre/post hooks with the mode's flags, the
// raw lock's attempt and wait, the statistics' on_acquire/on_release, the mode's own hooks.
//
// The shell derives from the raw lock protectedly: a lock's public names are the shell's (the std
// names, with_stats, policy, stats) and the snapshots it publishes, never the raw lock's members.
//
// The shell adds no data: a lock is as large as its raw lock, and `this` is the raw lock's address
// (the identity its waits are tracked by). For no_stats and outside TSan every call here is an
// empty inline function (the mode helpers are always inlined), so lock() compiles to
// acquire_fast() and a cold call.

#include <chrono>
#include <type_traits>
#include <utility>

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
  // The same for SX (sx_lock).
  static void sx_held(unsigned /*f*/) noexcept {}
  static void sx_releasing() noexcept {}
};

// The statistics hooks as a lock's wait calls them, inside TSan's pre/post window (tsan.hpp): each
// one steps out of the window, so TSan checks the statistics' accesses and sees what they order.
// wait_stats<Stats> is what the shell gives a raw lock's wait: this under TSan, Stats elsewhere
// and for no_stats. It has the wait's three hooks and nothing else, so a wait that called another
// hook inside the window would not compile. The address is the lock's where the hook has it (TSan
// does not need it).
template <class Stats>
struct diverted_stats {
  static constexpr bool enabled = Stats::enabled;
  static bool wait_begin(const void* lock, lock_mode m, lock_site site, std::uint64_t since) noexcept {
    tsan::divert_begin(lock);
    const bool tracked = Stats::wait_begin(lock, m, site, since);
    tsan::divert_end(lock);
    return tracked;
  }
  static void wait_end() noexcept {
    tsan::divert_begin(nullptr);
    Stats::wait_end();
    tsan::divert_end(nullptr);
  }
  static void on_contended(const wait_record& w, lock_mode m) noexcept {
    tsan::divert_begin(nullptr);
    Stats::on_contended(w, m);
    tsan::divert_end(nullptr);
  }
};
#if defined(SPINWISE_TSAN_HOOKS)
template <class Stats>
using wait_stats = std::conditional_t<Stats::enabled, diverted_stats<Stats>, Stats>;
#else
template <class Stats>
using wait_stats = Stats;
#endif

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

// The raw-lock contract above, as the compiler checks it: raw_contract<Raw>::exclusive() and the
// members behind it name what a raw lock misses. It derives from Raw only to see the protected
// members (it is never made).
template <class Raw>
class raw_contract : Raw {
  using R = raw_contract;
  using timed_deadline = clock_deadline<std::chrono::steady_clock, std::chrono::steady_clock::duration>;

  template <class T>
  struct is_first_try : std::false_type {};
  template <class W>
  struct is_first_try<first_try<W>> : std::true_type {};

  template <class T>
  static auto policy_(int) -> decltype(std::declval<typename T::policy*>(), std::true_type{});
  template <class T>
  static std::false_type policy_(...);

  // --- exclusive ----------------------------------------------------------------------------
  template <class T>
  static auto try_acquire_(int) -> decltype(bool{std::declval<T&>().try_acquire()}, std::true_type{});
  template <class T>
  static std::false_type try_acquire_(...);
  template <class T>
  static auto fast_(int) -> decltype(std::declval<T&>().acquire_fast());
  template <class T>
  static void fast_(...);
  template <class T>
  static auto slow_(int)
      -> decltype(bool{std::declval<T&>().template acquire_slow<no_stats>(
                      no_deadline{}, lock_site{}, std::declval<decltype(fast_<T>(0).seen)>())},
                  std::true_type{});
  template <class T>
  static auto slow_(long)
      -> decltype(bool{std::declval<T&>().template acquire_slow<no_stats>(no_deadline{}, lock_site{})},
                  std::true_type{});
  template <class T>
  static std::false_type slow_(...);
  template <class T>
  static auto timed_slow_(int) -> decltype(bool{std::declval<T&>().template acquire_slow<no_stats>(
                                               std::declval<const timed_deadline&>(), lock_site{})},
                                           std::true_type{});
  template <class T>
  static std::false_type timed_slow_(...);
  template <class T>
  static auto release_(int) -> decltype(std::declval<T&>().release(), std::true_type{});
  template <class T>
  static std::false_type release_(...);

  // --- shared -------------------------------------------------------------------------------
  template <class T>
  static auto try_acquire_shared_(int)
      -> decltype(bool{std::declval<T&>().try_acquire_shared()}, std::true_type{});
  template <class T>
  static std::false_type try_acquire_shared_(...);
  template <class T>
  static auto fast_shared_(int) -> decltype(std::declval<T&>().acquire_shared_fast());
  template <class T>
  static void fast_shared_(...);
  template <class T>
  static auto slow_shared_(int)
      -> decltype(bool{std::declval<T&>().template acquire_shared_slow<no_stats>(
                      no_deadline{}, lock_site{}, std::declval<decltype(fast_shared_<T>(0).seen)>())},
                  std::true_type{});
  template <class T>
  static auto slow_shared_(long)
      -> decltype(bool{std::declval<T&>().template acquire_shared_slow<no_stats>(no_deadline{}, lock_site{})},
                  std::true_type{});
  template <class T>
  static std::false_type slow_shared_(...);
  template <class T>
  static auto timed_slow_shared_(int)
      -> decltype(bool{std::declval<T&>().template acquire_shared_slow<no_stats>(
                      std::declval<const timed_deadline&>(), lock_site{})},
                  std::true_type{});
  template <class T>
  static std::false_type timed_slow_shared_(...);
  template <class T>
  static auto release_shared_(int) -> decltype(std::declval<T&>().release_shared(), std::true_type{});
  template <class T>
  static std::false_type release_shared_(...);

  // --- SX -----------------------------------------------------------------------------------
  template <class T>
  static auto sx_(int)
      -> decltype(bool{std::declval<T&>().acquire_sx_fast()}, bool{std::declval<T&>().try_acquire_sx()},
                  std::declval<T&>().template acquire_sx_slow<no_stats>(lock_site{}),
                  std::declval<T&>().release_sx(), std::true_type{});
  template <class T>
  static std::false_type sx_(...);

  template <class First>
  static constexpr bool first_ok() noexcept {
    return std::is_same_v<First, bool> || is_first_try<First>::value;
  }

 public:
  static constexpr bool derives_from_raw_lock() noexcept { return std::is_base_of_v<raw_lock, Raw>; }
  static constexpr bool has_policy() noexcept { return decltype(policy_<Raw>(0))::value; }
  static constexpr bool holds_a_word() noexcept {
    return !std::is_empty_v<Raw> && std::is_nothrow_default_constructible_v<Raw>;
  }
  static constexpr bool has_try_acquire() noexcept { return decltype(try_acquire_<R>(0))::value; }
  static constexpr bool has_acquire_fast() noexcept { return first_ok<decltype(fast_<R>(0))>(); }
  static constexpr bool has_acquire_slow() noexcept {
    return decltype(slow_<R>(0))::value && (!R::kTimedWaits || decltype(timed_slow_<R>(0))::value);
  }
  static constexpr bool has_release() noexcept { return decltype(release_<R>(0))::value; }

  static constexpr bool has_try_acquire_shared() noexcept {
    return decltype(try_acquire_shared_<R>(0))::value;
  }
  static constexpr bool has_acquire_shared_fast() noexcept {
    return first_ok<decltype(fast_shared_<R>(0))>();
  }
  static constexpr bool has_acquire_shared_slow() noexcept {
    return decltype(slow_shared_<R>(0))::value &&
           (!R::kTimedSharedWaits || decltype(timed_slow_shared_<R>(0))::value);
  }
  static constexpr bool has_release_shared() noexcept { return decltype(release_shared_<R>(0))::value; }

  static constexpr bool has_sx() noexcept { return decltype(sx_<R>(0))::value; }
};

// Checks the exclusive contract: each line names the member a raw lock misses.
template <class Raw>
constexpr bool check_exclusive_contract() noexcept {
  using c = raw_contract<Raw>;
  static_assert(c::derives_from_raw_lock(), "a raw lock derives from detail::raw_lock");
  static_assert(c::has_policy(), "a raw lock names its wait policy: using policy = ...");
  static_assert(c::holds_a_word(),
                "a raw lock holds its word and is made unlocked by a noexcept constructor");
  static_assert(c::has_try_acquire(), "a raw lock offers bool try_acquire()");
  static_assert(c::has_acquire_fast(), "a raw lock offers acquire_fast(), returning bool or first_try<Word>");
  static_assert(
      c::has_acquire_slow(),
      "a raw lock offers template <class Stats, class Deadline> bool acquire_slow(deadline, lock_site"
      "[, the word first_try saw]), taking a clock_deadline where kTimedWaits");
  static_assert(c::has_release(), "a raw lock offers void release()");
  return true;
}

template <class Raw>
constexpr bool check_shared_contract() noexcept {
  using c = raw_contract<Raw>;
  static_assert(c::has_try_acquire_shared(), "a shared raw lock offers bool try_acquire_shared()");
  static_assert(c::has_acquire_shared_fast(),
                "a shared raw lock offers acquire_shared_fast(), returning bool or first_try<Word>");
  static_assert(
      c::has_acquire_shared_slow(),
      "a shared raw lock offers template <class Stats, class Deadline> bool acquire_shared_slow(deadline, "
      "lock_site[, the word first_try saw]), taking a clock_deadline where kTimedSharedWaits");
  static_assert(c::has_release_shared(), "a shared raw lock offers void release_shared()");
  return true;
}

template <class Raw>
constexpr bool check_sx_contract() noexcept {
  static_assert(raw_contract<Raw>::has_sx(),
                "an SX raw lock offers bool acquire_sx_fast(), bool try_acquire_sx(), "
                "template <class Stats> acquire_sx_slow(lock_site) and void release_sx()");
  return true;
}

template <class Raw, class Stats>
class SPINWISE_CAPABILITY("mutex") lock_shell : protected Raw {
  static_assert(check_exclusive_contract<Raw>());

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

  void lock() noexcept SPINWISE_ACQUIRE() { enter<x_mode>(*this, lock_site{}); }
  // The same, with the caller's site for lock tracking: lock(SPINWISE_SITE). So for every call.
  void lock(lock_site site) noexcept SPINWISE_ACQUIRE() { enter<x_mode>(*this, site); }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) { return try_enter<x_mode>(*this, {}); }
  [[nodiscard]] bool try_lock(lock_site site) noexcept SPINWISE_TRY_ACQUIRE(true) {
    return try_enter<x_mode>(*this, site);
  }

  // Waits at most `rel` (measured on steady_clock). Returns false only once that time has passed;
  // rel <= 0 is a try_lock(), a wait beyond a century has no end (detail/deadline.hpp).
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& rel, lock_site site = {}) noexcept
      SPINWISE_TRY_ACQUIRE(true) {
    return enter_until<x_mode>(*this, deadline_after(rel), site);
  }

  // Waits until `at` on any clock. Returns false only once Clock::now() >= at; a time that has
  // passed makes it a try_lock(). A clock whose now() throws terminates the program.
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& at,
                                    lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE(true) {
    return enter_until<x_mode>(*this, at, site);
  }

  void unlock() noexcept SPINWISE_RELEASE() { leave<x_mode>(*this); }

  // The racy snapshots docs/locks.md names (for assertions, tests and statistics; a lock offers
  // those its raw lock has): is_locked() (X held or reserved), is_locked_shared() (a reader
  // inside), has_waiters() (a FIFO lock's queue is not empty), waiting() (ticket_mutex's queue
  // length).
  template <class R = Raw>
  auto is_locked() const noexcept -> decltype(std::declval<const R&>().is_locked()) {
    return R::is_locked();
  }
  template <class R = Raw>
  auto is_locked_shared() const noexcept -> decltype(std::declval<const R&>().is_locked_shared()) {
    return R::is_locked_shared();
  }
  template <class R = Raw>
  auto has_waiters() const noexcept -> decltype(std::declval<const R&>().has_waiters()) {
    return R::has_waiters();
  }
  template <class R = Raw>
  auto waiting() const noexcept -> decltype(std::declval<const R&>().waiting()) {
    return R::waiting();
  }

 protected:
  // A mode of the lock, for the mode helpers below: its TSan flags and statistics mode, whether
  // its wait can give up at a deadline, and the raw lock's members for it. Each takes the lock
  // as `l`, of the shell type that declares the mode (the raw lock's members are protected).
  struct x_mode {
    static constexpr unsigned kTsan = 0;
    static constexpr lock_mode kMode = lock_mode::x;
    static constexpr bool kTimed = Raw::kTimedWaits;
    static auto fast(lock_shell& l) noexcept { return l.acquire_fast(); }
    SPINWISE_ALWAYS_INLINE static bool attempt(lock_shell& l) noexcept { return l.try_acquire(); }
    template <class Deadline, class... Seen>
    SPINWISE_ALWAYS_INLINE static bool wait(lock_shell& l, const Deadline& d, lock_site site,
                                            Seen... s) noexcept {
      return l.template acquire_slow<wait_stats<Stats>>(d, site, s...);
    }
    SPINWISE_ALWAYS_INLINE static void release(lock_shell& l) noexcept { l.release(); }
    SPINWISE_ALWAYS_INLINE static void held(lock_shell& l, unsigned f) noexcept { l.x_held(f); }
    SPINWISE_ALWAYS_INLINE static void releasing(lock_shell& l) noexcept { l.x_releasing(); }
  };

  // The mode helpers: lock(), try_lock(), try_lock_until() and unlock() in `Mode` on the lock `l`
  // (the shell or a lock that adds modes to it, sx_lock). For no_stats and outside TSan all is
  // inline and empty but the raw lock's calls.
  template <class Mode, class L>
  SPINWISE_ALWAYS_INLINE static void enter(L& l, lock_site site) noexcept {
    tsan::pre_lock(&l, Mode::kTsan);
    if (const auto r = Mode::fast(l); SPINWISE_UNLIKELY(!r)) {
      if constexpr (std::is_same_v<decltype(r), const bool>) {
        Mode::wait(l, no_deadline{}, site);
      } else {
        Mode::wait(l, no_deadline{}, site, r.seen);
      }
    }
    tsan::post_lock(&l, Mode::kTsan);
    Stats::on_acquire(&l, Mode::kMode, site);  // after the window: TSan sees what it orders
    Mode::held(l, 0);
  }

  template <class Mode, class L>
  SPINWISE_ALWAYS_INLINE static bool try_enter(L& l, lock_site site) noexcept {
    tsan::pre_lock(&l, Mode::kTsan | tsan::kTryLock);
    return tried<Mode>(l, Mode::attempt(l), site);
  }

  // A timed wait whose raw wait cannot give up (not Mode::kTimed) polls the attempt instead.
  template <class Mode, class L, class Clock, class Duration>
  static bool enter_until(L& l, const std::chrono::time_point<Clock, Duration>& at, lock_site site) noexcept {
    tsan::pre_lock(&l, Mode::kTsan | tsan::kTryLock);
    bool ok = Mode::attempt(l);
    if (!ok) {
      const clock_deadline<Clock, Duration> d{at};
      if constexpr (Mode::kTimed) {
        ok = Mode::wait(l, d, site);
      } else {
        ok = poll_until<policy, wait_stats<Stats>>(&l, Mode::kMode, site, d,
                                                   [&l] { return Mode::attempt(l); });
      }
    }
    return tried<Mode>(l, ok, site);
  }

  template <class Mode, class L>
  SPINWISE_ALWAYS_INLINE static void leave(L& l) noexcept {
    Stats::on_release(&l, Mode::kMode);
    Mode::releasing(l);
    tsan::pre_unlock(&l, Mode::kTsan);
    Mode::release(l);
    tsan::post_unlock(&l, Mode::kTsan);
  }

 private:
  template <class Mode, class L>
  SPINWISE_ALWAYS_INLINE static bool tried(L& l, bool ok, lock_site site) noexcept {
    tsan::post_lock(&l, try_flags(Mode::kTsan, ok));
    if (ok) {
      Stats::on_acquire(&l, Mode::kMode, site);
      Mode::held(l, tsan::kTryLock);
    }
    return ok;
  }
};

template <class Raw, class Stats>
class SPINWISE_CAPABILITY("mutex") shared_lock_shell : public lock_shell<Raw, Stats> {
  static_assert(check_shared_contract<Raw>());
  using base = lock_shell<Raw, Stats>;

 public:
  template <class Class>
  using with_stats = shared_lock_shell<Raw, class_stats<Class>>;

  void lock_shared() noexcept SPINWISE_ACQUIRE_SHARED() { base::template enter<s_mode>(*this, lock_site{}); }
  void lock_shared(lock_site site) noexcept SPINWISE_ACQUIRE_SHARED() {
    base::template enter<s_mode>(*this, site);
  }

  [[nodiscard]] bool try_lock_shared() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template try_enter<s_mode>(*this, {});
  }
  [[nodiscard]] bool try_lock_shared(lock_site site) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template try_enter<s_mode>(*this, site);
  }

  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& rel,
                                         lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template enter_until<s_mode>(*this, deadline_after(rel), site);
  }

  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& at,
                                           lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template enter_until<s_mode>(*this, at, site);
  }

  void unlock_shared() noexcept SPINWISE_RELEASE_SHARED() { base::template leave<s_mode>(*this); }

 protected:
  struct s_mode {
    static constexpr unsigned kTsan = tsan::kReadLock;
    static constexpr lock_mode kMode = lock_mode::s;
    static constexpr bool kTimed = Raw::kTimedSharedWaits;
    static auto fast(shared_lock_shell& l) noexcept { return l.acquire_shared_fast(); }
    SPINWISE_ALWAYS_INLINE static bool attempt(shared_lock_shell& l) noexcept {
      return l.try_acquire_shared();
    }
    template <class Deadline, class... Seen>
    SPINWISE_ALWAYS_INLINE static bool wait(shared_lock_shell& l, const Deadline& d, lock_site site,
                                            Seen... s) noexcept {
      return l.template acquire_shared_slow<wait_stats<Stats>>(d, site, s...);
    }
    SPINWISE_ALWAYS_INLINE static void release(shared_lock_shell& l) noexcept { l.release_shared(); }
    static void held(shared_lock_shell&, unsigned) noexcept {}
    static void releasing(shared_lock_shell&) noexcept {}
  };

  // SX, for a raw lock that has it (sx_lock): TSan sees a read lock of the lock (plus what the
  // raw lock's sx_held/sx_releasing announce), the statistics an SX acquisition. Its wait cannot
  // give up: a timed SX call polls try_acquire_sx.
  struct sx_mode {
    static constexpr unsigned kTsan = tsan::kReadLock;
    static constexpr lock_mode kMode = lock_mode::sx;
    static constexpr bool kTimed = false;
    static_assert(check_sx_contract<Raw>());
    static bool fast(shared_lock_shell& l) noexcept { return l.acquire_sx_fast(); }
    SPINWISE_ALWAYS_INLINE static bool attempt(shared_lock_shell& l) noexcept { return l.try_acquire_sx(); }
    SPINWISE_ALWAYS_INLINE static bool wait(shared_lock_shell& l, no_deadline, lock_site site) noexcept {
      l.template acquire_sx_slow<wait_stats<Stats>>(site);
      return true;
    }
    SPINWISE_ALWAYS_INLINE static void release(shared_lock_shell& l) noexcept { l.release_sx(); }
    SPINWISE_ALWAYS_INLINE static void held(shared_lock_shell& l, unsigned f) noexcept { l.sx_held(f); }
    SPINWISE_ALWAYS_INLINE static void releasing(shared_lock_shell& l) noexcept { l.sx_releasing(); }
  };
};

}  // namespace spinwise::detail
