#pragma once
// sx_lock: InnoDB's rw_lock_t latch with its three modes, spin then park.
//
//            S    SX   X        S   shared: readers
//       S    ok   ok   -        SX  shared-exclusive: reads alongside S holders, excludes other
//       SX   ok   -    -            SX and X holders; can become X without letting anyone in
//       X    -    -    -        X   exclusive
//
// upgrade() turns the caller's SX into X without releasing: no other SX or X can enter
// meanwhile, new S requests wait (as in InnoDB, the X request is visible at once), and the
// caller waits for the S holders already inside to leave. downgrade() turns X into SX without
// releasing and lets waiting S requests in.
//
// Waiting is InnoDB's: an X request first reserves the latch (no new S, SX or X) and then waits
// for the S holders to drain, so S requests cannot starve an X request; an X request waiting for
// an SX holder does not block S. Each wait spins Policy rounds (time_policy by default: InnoDB's
// shape with the unit in nanoseconds, under this latch's knobs), yields once, then sleeps on a
// futex; wakers wake every sleeper (as InnoDB's os_event_set does) and each goes back to spinning.
//
// Do not: take X while holding S (it waits for itself); take SX while holding S when an X
// request may come (the X request waits for your S, you wait for its reservation); take X or SX
// recursively (InnoDB allows recursive X; this latch does not).
//
// When not to use it: without SX, hybrid_shared_mutex is the better rw-lock (a reader that
// waited out its spin budget starts a readers' turn that writers wait out, so readers never starve;
// here a stream of X requests can hold S requests off, as in InnoDB). Cost: S lock/unlock is one CAS and one
// fetch_sub; SX and X one CAS and one fetch_and each; a release that finds sleepers adds one atomic add and
// one futex_wake. 8 bytes.
//
// Lock word (32 bits) plus a 32-bit futex sequence word (epoch_):
//
//   bit   31...............................3   2   1   0
//         S holders inside (29 bits)           P   SX  X
//
//   X   an X holder, or an X request that reserved the latch and waits for the S holders to
//       leave (then it holds X: nothing else can enter meanwhile)
//   SX  an SX holder
//   P   a thread may be asleep on epoch_ (set by the sleeper, cleared by the waker)
//
// Invariant: not (X and SX); X and S holders > 0 only while the X request drains them.
//
// States (X, SX, S holders n):
//
//         lock_shared: n+1                lock_sx               lock: reserve       drained
//   (0,0,n) <----------> (0,0,n)  ------------------> (0,1,n)    (0,0,n) -------> (1,0,n) ---> (1,0,0)
//            unlock_shared                <-----------            ^                              |
//                                          unlock_sx              |  unlock                     |
//   (0,1,n) --upgrade--> (1,0,n) --drained--> (1,0,0)             +------------------------------+
//   (1,0,0) --downgrade--> (0,1,0)
//
// Sleeping and waking: detail/futex_park.hpp's protocol (and its proof), with one parked bit P
// and one sequence word epoch_ for every kind of sleeper. The transitions that can make a
// sleeper's condition true, whose RMW clears P and wakes everyone if it was set: X -> 0 (unlock,
// downgrade: S may enter), SX -> 0 (unlock_sx: SX and X may enter), and S holders -> 0 under X
// (the reserved X request may proceed).
//
// ThreadSanitizer sees two mutexes: the latch (this address; S and SX are read locks, X a write
// lock) and an SX token (epoch_'s address; SX and X hold it exclusively). An SX holder thus holds
// the latch for reading plus the token: TSan orders SX after SX or X through the token, and
// reports data written under SX and read under S as the race it is (S holders may read
// concurrently). The token is always announced after the latch and given back before it, and
// upgrade/downgrade give it back and take it again, so TSan's lock-order graph only ever sees
// latch -> token.
// Clang's thread-safety analysis has only shared and exclusive: SX is shared there.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex_park.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/guard.hpp"          // sx_guard
#include "spinwise/innodb_policy.hpp"  // the exact MySQL replay, selected by name
#include "spinwise/time_policy.hpp"

// Mode checks: unlock(), unlock_sx(), unlock_shared(), upgrade() and downgrade() called without
// the mode they give up held abort with a message naming the call and the word, instead of leaving
// the latch locked for good (unlock_sx() while X is held clears nothing), wrapping the S count or
// setting X and SX together. The word says whether X, SX or S is held, not by whom: a release of a
// mode another thread holds passes. On wherever NDEBUG is not defined, as assert() is, off where it
// is; SPINWISE_CHECK_MODES=1 or 0 decides instead. The latch's inline functions differ with it, as
// with assert(): set it alike in every translation unit of a program.
#if !defined(SPINWISE_CHECK_MODES)
#if defined(NDEBUG)
#define SPINWISE_CHECK_MODES 0
#else
#define SPINWISE_CHECK_MODES 1
#endif
#endif

namespace spinwise {

namespace detail {

// The algorithm (the shell, detail/lock_shell.hpp, makes it a lock; sx_latch below adds SX). A
// timed S or X call neither reserves nor sleeps: it polls try_lock / try_lock_shared
// (lock_shell.hpp's poll_until).
template <class Policy>
class sx_raw : public raw_lock {
 public:
  using policy = Policy;

#if defined(SPINWISE_TSAN_HOOKS)
  ~sx_raw() { tsan::destroy(&epoch_); }  // a latch reusing this address has a new SX token
#endif

 protected:
  // --- X ------------------------------------------------------------------------------------

  bool acquire_fast() noexcept {
    std::uint32_t s = 0;
    // (X, SX, S): 0,0,0 -> 1,0,0; acquire pairs with the release in release / release_sx /
    // release_shared.
    return state_.compare_exchange_strong(s, kX, std::memory_order_acquire, std::memory_order_relaxed);
  }
  bool try_acquire() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    while ((s & ~kParked) == 0) {
      // (X, SX, S): 0,0,0 -> 1,0,0; acquire as in acquire_fast().
      if (state_.compare_exchange_weak(s, s | kX, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  template <class Stats>
  SPINWISE_COLD bool acquire_slow(no_deadline, lock_site site) noexcept {
    waiting<Stats> w(*this, lock_mode::x, site);
    for (;;) {
      std::uint32_t s = w.until(no_x_sx);
      // Reserve: (X, SX): 0,0 -> 1,0; from here no S, SX or X enters. Acquire pairs with the
      // release in release / release_sx.
      if (state_.compare_exchange_weak(s, s | kX, std::memory_order_acquire, std::memory_order_relaxed)) {
        if ((s & kReaderMask) != 0) w.until(drained);  // its acquire load pairs with release_shared
        w.entered();
        return true;
      }
    }
  }
  void release() noexcept {
    // (X, P): 1,p -> 0,0; release pairs with the acquire of whoever enters next; acquire: the
    // sleep protocol (file top).
    const std::uint32_t old = state_.fetch_and(~(kX | kParked), std::memory_order_acq_rel);
    check_held(old, kX, "unlock()", "X");
    if (old & kParked) wake();
  }
  // X and SX hold the SX token (file top).
  void x_held(unsigned f) noexcept { token_acquired(f); }
  void x_releasing() noexcept { token_released(); }
  void sx_held(unsigned f) noexcept { token_acquired(f); }
  void sx_releasing() noexcept { token_released(); }

  // --- S ------------------------------------------------------------------------------------

  bool acquire_shared_fast() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    // (X, S): 0,n -> 0,n+1; acquire pairs with the release in release / downgrade.
    return (s & kX) == 0 && state_.compare_exchange_strong(s, s + kReaderOne, std::memory_order_acquire,
                                                           std::memory_order_relaxed);
  }
  // Fails while X is held or reserved (an X request or an upgrade is waiting for S to drain).
  bool try_acquire_shared() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    while ((s & kX) == 0) {
      // (X, S): 0,n -> 0,n+1; acquire as in acquire_shared_fast().
      if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                       std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  template <class Stats>
  SPINWISE_COLD bool acquire_shared_slow(no_deadline, lock_site site) noexcept {
    waiting<Stats> w(*this, lock_mode::s, site);
    for (;;) {
      std::uint32_t s = w.until(no_x);
      // (X, S): 0,n -> 0,n+1; acquire pairs with the release in release / downgrade.
      if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        w.entered();
        return true;
      }
    }
  }
  void release_shared() noexcept {
    // (S): n -> n-1; release pairs with the acquire of the X request that drains S.
    const std::uint32_t old = state_.fetch_sub(kReaderOne, std::memory_order_release);
    check_held(old, kReaderMask, "unlock_shared()", "S");
    if (SPINWISE_UNLIKELY((old & (kReaderMask | kX | kParked)) == (kReaderOne | kX | kParked)))
      wake_drained();
  }

  // --- SX -----------------------------------------------------------------------------------

  bool acquire_sx_fast() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    // (X, SX): 0,0 -> 0,1; acquire pairs with the release in release / release_sx.
    return (s & (kX | kSX)) == 0 &&
           state_.compare_exchange_strong(s, s | kSX, std::memory_order_acquire, std::memory_order_relaxed);
  }
  bool try_acquire_sx() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    while ((s & (kX | kSX)) == 0) {
      // (X, SX): 0,0 -> 0,1; acquire as in acquire_sx_fast().
      if (state_.compare_exchange_weak(s, s | kSX, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  template <class Stats>
  SPINWISE_COLD void acquire_sx_slow(lock_site site) noexcept {
    waiting<Stats> w(*this, lock_mode::sx, site);
    for (;;) {
      std::uint32_t s = w.until(no_x_sx);
      // (X, SX): 0,0 -> 0,1; acquire pairs with the release in release / release_sx.
      if (state_.compare_exchange_weak(s, s | kSX, std::memory_order_acquire, std::memory_order_relaxed)) {
        return w.entered();
      }
    }
  }
  void release_sx() noexcept {
    // (SX, P): 1,p -> 0,0; release pairs with the acquire of the next SX or X; acquire: the sleep
    // protocol.
    const std::uint32_t old = state_.fetch_and(~(kSX | kParked), std::memory_order_acq_rel);
    check_held(old, kSX, "unlock_sx()", "SX");
    if (old & kParked) wake();
  }

  // SX -> X: (X, SX): 0,1 -> 1,0 by flipping both bits, the caller's SX becoming the X
  // reservation, then the wait for the S holders inside. Nobody wakes: every sleeper's condition
  // stays false. acquire pairs with the release of the S holders that left while we held SX
  // (the drain pairs with those still inside), tracked as an X wait (not counted: not an
  // acquisition).
  template <class Stats>
  void upgrade_word() noexcept {
    const std::uint32_t old = state_.fetch_xor(kX | kSX, std::memory_order_acquire);
    check_held(old, kSX, "upgrade()", "SX");
    if ((old & kReaderMask) != 0) drain<Stats>();
  }
  // X -> SX: (X, SX, P): 1,0,p -> 0,1,0; release pairs with the acquire of the S holders that
  // enter; acquire: the sleep protocol.
  void downgrade_word() noexcept {
    std::uint32_t s = kX;  // guess: no sleepers; a failed CAS loads the real value
    while (!state_.compare_exchange_weak(s, (s ^ (kX | kSX)) & ~kParked, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
      check_held(s, kX, "downgrade()", "X");  // before the next try writes
    }
    if (s & kParked) wake();
  }

  // The SX token (file top), announced after the latch is really held and before it is really
  // released. Never nested in the latch's pre/post window: TSan ignores synchronization inside
  // such a window, so a nested annotation would order nothing.
  void token_acquired(unsigned f) noexcept {
    tsan::pre_lock(&epoch_, f);
    tsan::post_lock(&epoch_, f);
  }
  void token_released() noexcept {
    tsan::pre_unlock(&epoch_, 0);
    tsan::post_unlock(&epoch_, 0);
  }

 private:
  static constexpr std::uint32_t kX = 1;
  static constexpr std::uint32_t kSX = 2;
  static constexpr std::uint32_t kParked = 4;
  static constexpr unsigned kReaderShift = 3;
  static constexpr std::uint32_t kReaderOne = std::uint32_t{1} << kReaderShift;
  static constexpr std::uint32_t kReaderMask = ~std::uint32_t{0} << kReaderShift;

  // The mode checks (SPINWISE_CHECK_MODES, file top): `word` is what the release or change of
  // mode found; none of `mode_bits` set there means the caller did not hold `mode`.
  static void check_held(std::uint32_t word, std::uint32_t mode_bits, const char* call,
                         const char* mode) noexcept {
    if constexpr (SPINWISE_CHECK_MODES != 0) {
      if (SPINWISE_UNLIKELY((word & mode_bits) == 0)) mode_not_held(word, call, mode);
    }
  }
  [[noreturn]] SPINWISE_COLD static void mode_not_held(std::uint32_t word, const char* call,
                                                       const char* mode) noexcept {
    std::fprintf(stderr, "spinwise::sx_lock: %s without %s held (the latch had X %u, SX %u, S holders %u)\n",
                 call, mode, static_cast<unsigned>(word & kX), static_cast<unsigned>((word & kSX) >> 1),
                 static_cast<unsigned>(word >> kReaderShift));
    std::abort();
  }

  // One wait and its statistics: Policy rounds, one yield, then sleep; a fresh episode after
  // each wake-up.
  template <class Stats>
  class waiting {
   public:
    waiting(sx_raw& l, lock_mode m, lock_site site) noexcept : l_(l), e_(&l, m, site) {}

    // Returns the first word seen in which ready(word) holds (acquire).
    template <class Ready>
    std::uint32_t until(Ready ready) noexcept {
      for (;;) {
        const std::uint32_t s = l_.state_.load(std::memory_order_acquire);
        if (ready(s)) return s;
        // Where the policy hands off promptly, a round ends early once the word looks ready.
        if (!e_.pause([&] { return ready(l_.state_.load(std::memory_order_relaxed)); }))
          e_.next_episode(l_.park(ready));
      }
    }
    // The wait ended in the lock: report it.
    void entered() noexcept { e_.entered(); }

   private:
    sx_raw& l_;
    park_episodes<Policy, Stats> e_;
  };

  static constexpr bool no_x(std::uint32_t s) noexcept { return (s & kX) == 0; }
  static constexpr bool no_x_sx(std::uint32_t s) noexcept { return (s & (kX | kSX)) == 0; }
  static constexpr bool drained(std::uint32_t s) noexcept { return (s & kReaderMask) == 0; }

  template <class Stats>
  SPINWISE_COLD void drain() noexcept {
    waiting<Stats>(*this, lock_mode::x, {}).until(drained);
  }

  // Sleeps until ready(word) may hold (detail/futex_park.hpp); true if it slept.
  template <class Ready>
  bool park(Ready ready) noexcept {
    return detail::park(state_, epoch_, kParked, ready, no_deadline{});
  }

  void wake() noexcept { wake_sleepers(epoch_); }

  // The last S holder left under an X reservation that has sleepers.
  SPINWISE_COLD void wake_drained() noexcept {
    // (P): 1 -> 0; acquire: the sleep protocol.
    if (state_.fetch_and(~kParked, std::memory_order_acq_rel) & kParked) wake();
  }

  std::atomic<std::uint32_t> state_{0};
  std::atomic<std::uint32_t> epoch_{0};
};

// sx_lock: the S and X modes from the shell, and SX with its upgrade and downgrade.
template <class Policy, class Stats>
class SPINWISE_CAPABILITY("mutex") sx_latch : public shared_lock_shell<sx_raw<Policy>, Stats> {
  using base = shared_lock_shell<sx_raw<Policy>, Stats>;
  using typename base::sx_mode;

 public:
  template <class Class>
  using with_stats = sx_latch<Policy, class_stats<Class>>;

  void lock_sx() noexcept SPINWISE_ACQUIRE_SHARED() { base::template enter<sx_mode>(*this, lock_site{}); }
  void lock_sx(lock_site site) noexcept SPINWISE_ACQUIRE_SHARED() {
    base::template enter<sx_mode>(*this, site);
  }

  [[nodiscard]] bool try_lock_sx() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template try_enter<sx_mode>(*this, {});
  }
  [[nodiscard]] bool try_lock_sx(lock_site site) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template try_enter<sx_mode>(*this, site);
  }

  // Timed SX, as the timed S and X calls: a wait at most `rel` (steady_clock) or until `at` (any
  // clock), false only once that time has passed; one that has passed makes it a try_lock_sx().
  // The wait polls try_lock_sx between the policy's rounds, then a yield per poll (it never
  // sleeps): lock_shell.hpp's poll_until.
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_sx_for(const std::chrono::duration<Rep, Period>& rel,
                                     lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template enter_until<sx_mode>(*this, deadline_after(rel), site);
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_sx_until(const std::chrono::time_point<Clock, Duration>& at,
                                       lock_site site = {}) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return base::template enter_until<sx_mode>(*this, at, site);
  }

  void unlock_sx() noexcept SPINWISE_RELEASE_SHARED() { base::template leave<sx_mode>(*this); }

  // SX -> X without releasing. From the call on, new S, SX and X requests wait; returns once the
  // S holders inside have left.
  void upgrade() noexcept SPINWISE_RELEASE_SHARED() SPINWISE_ACQUIRE() {
    this->token_released();  // and taken again after the latch: TSan sees latch -> token always
    tsan::pre_unlock(this, tsan::kReadLock);
    tsan::post_unlock(this, tsan::kReadLock);
    tsan::pre_lock(this, 0);
    this->template upgrade_word<wait_stats<Stats>>();
    tsan::post_lock(this, 0);
    Stats::on_mode_change(this, lock_mode::x);  // X once the S holders have left
    this->token_acquired(0);
  }

  // X -> SX without releasing: S requests may enter at once, SX and X requests still wait.
  void downgrade() noexcept SPINWISE_RELEASE() SPINWISE_ACQUIRE_SHARED() {
    this->token_released();
    tsan::pre_unlock(this, 0);
    this->downgrade_word();
    tsan::post_unlock(this, 0);
    Stats::on_mode_change(this, lock_mode::sx);
    tsan::pre_lock(this, tsan::kReadLock);
    tsan::post_lock(this, tsan::kReadLock);
    this->token_acquired(0);
  }
};

}  // namespace detail

// Names sx_lock's own knobs: sx_lock::policy::set_spin_wait_delay(...) and friends.
struct sx_lock_tag;

// Stats: no_stats (nothing recorded, no cost) or class_stats<Class> (lock_stats.hpp). S, SX
// and X acquisitions count per mode (InnoDB's RW-shared, RW-sx and RW-excl lines); upgrade and
// downgrade are not acquisitions (a tracked hold changes its mode).
template <class Policy, class Stats = no_stats>
using sx_lock_t = detail::sx_latch<Policy, Stats>;

using sx_lock = sx_lock_t<time_policy<sx_lock_tag>>;

static_assert(sizeof(sx_lock) == 8, "sx_lock: a 32-bit word and a 32-bit futex word");
static_assert(sizeof(sx_lock::with_stats<struct sx_lock_tag>) == 8, "statistics live outside the latch");
static_assert(sizeof(sx_lock_t<innodb_policy<sx_lock_tag>>) == 8,
              "the policy is static: the InnoDB replay is the same latch");
static_assert(std::is_same_v<sx_lock::with_stats<struct sx_lock_tag>::policy, sx_lock::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

static_assert(std::is_nothrow_default_constructible_v<sx_lock>);

}  // namespace spinwise
