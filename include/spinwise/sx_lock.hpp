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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/deadline.hpp"
#include "spinwise/detail/futex_park.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/innodb_policy.hpp"  // the exact MySQL replay, selected by name
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"
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

// Names sx_lock's own knobs: sx_lock::policy::set_spin_wait_delay(...) and friends.
struct sx_lock_tag;

// Stats: no_stats (nothing recorded, no cost) or class_stats<Class> (lock_stats.hpp). S, SX
// and X acquisitions count per mode (InnoDB's RW-shared, RW-sx and RW-excl lines); upgrade and
// downgrade are not acquisitions (a tracked hold changes its mode).
template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") sx_lock_t {
 public:
  using policy = Policy;
  using stats = Stats;
  // This latch with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): sx_lock::with_stats<my_class>.
  template <class Class>
  using with_stats = sx_lock_t<Policy, class_stats<Class>>;

  constexpr sx_lock_t() noexcept = default;
  sx_lock_t(const sx_lock_t&) = delete;
  sx_lock_t& operator=(const sx_lock_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~sx_lock_t() {  // a latch reusing this address is a new pair of mutexes
    detail::tsan::destroy(this);
    detail::tsan::destroy(&epoch_);
  }
#endif

  // --- X ------------------------------------------------------------------------------------

  void lock() noexcept SPINWISE_ACQUIRE() { lock(lock_site{}); }
  // The same, with the caller's site for lock tracking: lock(SPINWISE_SITE). So for S and SX.
  void lock(lock_site site) noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    std::uint32_t s = 0;
    // (X, SX, S): 0,0,0 -> 1,0,0; acquire pairs with the release in unlock / unlock_sx / unlock_shared.
    if (SPINWISE_UNLIKELY(
            !state_.compare_exchange_strong(s, kX, std::memory_order_acquire, std::memory_order_relaxed))) {
      lock_slow(site);
    }
    Stats::on_acquire(this, lock_mode::x, site);
    detail::tsan::post_lock(this, 0);
    tsan_token_acquired(0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) { return try_lock(lock_site{}); }
  [[nodiscard]] bool try_lock(lock_site site) noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    bool ok = false;
    while ((s & ~kParked) == 0) {
      // (X, SX, S): 0,0,0 -> 1,0,0; acquire as in lock().
      if (state_.compare_exchange_weak(s, s | kX, std::memory_order_acquire, std::memory_order_relaxed)) {
        ok = true;
        break;
      }
    }
    if (ok) Stats::on_acquire(this, lock_mode::x, site);
    detail::tsan::post_lock(this, try_flags(0, ok));
    if (ok) tsan_token_acquired(detail::tsan::kTryLock);
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    tsan_token_released();
    detail::tsan::pre_unlock(this, 0);
    // (X, P): 1,p -> 0,0; release pairs with the acquire of whoever enters next; acquire: the
    // sleep protocol (file top).
    const std::uint32_t old = state_.fetch_and(~(kX | kParked), std::memory_order_acq_rel);
    check_held(old, kX, "unlock()", "X");
    if (old & kParked) wake();
    detail::tsan::post_unlock(this, 0);
  }

  // --- S ------------------------------------------------------------------------------------

  void lock_shared() noexcept SPINWISE_ACQUIRE_SHARED() { lock_shared(lock_site{}); }
  void lock_shared(lock_site site) noexcept SPINWISE_ACQUIRE_SHARED() {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    // (X, S): 0,n -> 0,n+1; acquire pairs with the release in unlock / downgrade.
    if (SPINWISE_UNLIKELY((s & kX) != 0 ||
                          !state_.compare_exchange_strong(s, s + kReaderOne, std::memory_order_acquire,
                                                          std::memory_order_relaxed))) {
      lock_shared_slow(site);
    }
    Stats::on_acquire(this, lock_mode::s, site);
    detail::tsan::post_lock(this, detail::tsan::kReadLock);
  }

  // Fails while X is held or reserved (an X request or an upgrade is waiting for S to drain).
  [[nodiscard]] bool try_lock_shared() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return try_lock_shared(lock_site{});
  }
  [[nodiscard]] bool try_lock_shared(lock_site site) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock | detail::tsan::kTryLock);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    bool ok = false;
    while ((s & kX) == 0) {
      // (X, S): 0,n -> 0,n+1; acquire as in lock_shared().
      if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        ok = true;
        break;
      }
    }
    if (ok) Stats::on_acquire(this, lock_mode::s, site);
    detail::tsan::post_lock(this, try_flags(detail::tsan::kReadLock, ok));
    return ok;
  }

  void unlock_shared() noexcept SPINWISE_RELEASE_SHARED() {
    Stats::on_release(this, lock_mode::s);
    detail::tsan::pre_unlock(this, detail::tsan::kReadLock);
    // (S): n -> n-1; release pairs with the acquire of the X request that drains S.
    const std::uint32_t old = state_.fetch_sub(kReaderOne, std::memory_order_release);
    check_held(old, kReaderMask, "unlock_shared()", "S");
    if (SPINWISE_UNLIKELY((old & (kReaderMask | kX | kParked)) == (kReaderOne | kX | kParked)))
      wake_drained();
    detail::tsan::post_unlock(this, detail::tsan::kReadLock);
  }

  // --- SX -----------------------------------------------------------------------------------

  void lock_sx() noexcept SPINWISE_ACQUIRE_SHARED() { lock_sx(lock_site{}); }
  void lock_sx(lock_site site) noexcept SPINWISE_ACQUIRE_SHARED() {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    // (X, SX): 0,0 -> 0,1; acquire pairs with the release in unlock / unlock_sx.
    if (SPINWISE_UNLIKELY((s & (kX | kSX)) != 0 ||
                          !state_.compare_exchange_strong(s, s | kSX, std::memory_order_acquire,
                                                          std::memory_order_relaxed))) {
      lock_sx_slow(site);
    }
    Stats::on_acquire(this, lock_mode::sx, site);
    detail::tsan::post_lock(this, detail::tsan::kReadLock);
    tsan_token_acquired(0);
  }

  [[nodiscard]] bool try_lock_sx() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return try_lock_sx(lock_site{});
  }
  [[nodiscard]] bool try_lock_sx(lock_site site) noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock | detail::tsan::kTryLock);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    bool ok = false;
    while ((s & (kX | kSX)) == 0) {
      // (X, SX): 0,0 -> 0,1; acquire as in lock_sx().
      if (state_.compare_exchange_weak(s, s | kSX, std::memory_order_acquire, std::memory_order_relaxed)) {
        ok = true;
        break;
      }
    }
    if (ok) Stats::on_acquire(this, lock_mode::sx, site);
    detail::tsan::post_lock(this, try_flags(detail::tsan::kReadLock, ok));
    if (ok) tsan_token_acquired(detail::tsan::kTryLock);
    return ok;
  }

  void unlock_sx() noexcept SPINWISE_RELEASE_SHARED() {
    Stats::on_release(this, lock_mode::sx);
    tsan_token_released();
    detail::tsan::pre_unlock(this, detail::tsan::kReadLock);
    // (SX, P): 1,p -> 0,0; release pairs with the acquire of the next SX or X; acquire: the sleep
    // protocol.
    const std::uint32_t old = state_.fetch_and(~(kSX | kParked), std::memory_order_acq_rel);
    check_held(old, kSX, "unlock_sx()", "SX");
    if (old & kParked) wake();
    detail::tsan::post_unlock(this, detail::tsan::kReadLock);
  }

  // --- SX <-> X -----------------------------------------------------------------------------

  // SX -> X without releasing. From the call on, new S, SX and X requests wait; returns once the
  // S holders inside have left.
  void upgrade() noexcept SPINWISE_RELEASE_SHARED() SPINWISE_ACQUIRE() {
    tsan_token_released();  // and taken again after the latch: TSan sees latch -> token always
    detail::tsan::pre_unlock(this, detail::tsan::kReadLock);
    detail::tsan::post_unlock(this, detail::tsan::kReadLock);
    detail::tsan::pre_lock(this, 0);
    // (X, SX): 0,1 -> 1,0 by flipping both bits: the caller's SX becomes the X reservation.
    // Nobody wakes: every sleeper's condition stays false. acquire pairs with the release of
    // the S holders that left while we held SX (drain() pairs with those still inside).
    const std::uint32_t old = state_.fetch_xor(kX | kSX, std::memory_order_acquire);
    check_held(old, kSX, "upgrade()", "SX");
    if ((old & kReaderMask) != 0) drain();
    Stats::on_mode_change(this, lock_mode::x);  // X once the S holders have left
    detail::tsan::post_lock(this, 0);
    tsan_token_acquired(0);
  }

  // X -> SX without releasing: S requests may enter at once, SX and X requests still wait.
  void downgrade() noexcept SPINWISE_RELEASE() SPINWISE_ACQUIRE_SHARED() {
    tsan_token_released();
    detail::tsan::pre_unlock(this, 0);
    std::uint32_t s = kX;  // guess: no sleepers; a failed CAS loads the real value
    // (X, SX, P): 1,0,p -> 0,1,0; release pairs with the acquire of the S holders that enter;
    // acquire: the sleep protocol.
    while (!state_.compare_exchange_weak(s, (s ^ (kX | kSX)) & ~kParked, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
      check_held(s, kX, "downgrade()", "X");  // before the next try writes
    }
    if (s & kParked) wake();
    Stats::on_mode_change(this, lock_mode::sx);
    detail::tsan::post_unlock(this, 0);
    detail::tsan::pre_lock(this, detail::tsan::kReadLock);
    detail::tsan::post_lock(this, detail::tsan::kReadLock);
    tsan_token_acquired(0);
  }

 private:
  static constexpr std::uint32_t kX = 1;
  static constexpr std::uint32_t kSX = 2;
  static constexpr std::uint32_t kParked = 4;
  static constexpr unsigned kReaderShift = 3;
  static constexpr std::uint32_t kReaderOne = std::uint32_t{1} << kReaderShift;
  static constexpr std::uint32_t kReaderMask = ~std::uint32_t{0} << kReaderShift;

  static constexpr unsigned try_flags(unsigned f, bool ok) noexcept {
    return f | detail::tsan::kTryLock | (ok ? 0 : detail::tsan::kTryLockFailed);
  }

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

  // The SX token (file top), announced after the latch is really held and before it is really
  // released. Never nested in the latch's pre/post window: TSan ignores synchronization inside
  // such a window, so a nested annotation would order nothing.
  void tsan_token_acquired(unsigned f) noexcept {
    detail::tsan::pre_lock(&epoch_, f);
    detail::tsan::post_lock(&epoch_, f);
  }
  void tsan_token_released() noexcept {
    detail::tsan::pre_unlock(&epoch_, 0);
    detail::tsan::post_unlock(&epoch_, 0);
  }

  // One wait and its statistics: Policy rounds, one yield, then sleep; a fresh episode after
  // each wake-up.
  class waiting {
   public:
    waiting(sx_lock_t& l, lock_mode m, lock_site site) noexcept : l_(l), e_(&l, m, site) {}

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
    sx_lock_t& l_;
    detail::park_episodes<Policy, Stats> e_;
  };

  static constexpr bool no_x(std::uint32_t s) noexcept { return (s & kX) == 0; }
  static constexpr bool no_x_sx(std::uint32_t s) noexcept { return (s & (kX | kSX)) == 0; }
  static constexpr bool drained(std::uint32_t s) noexcept { return (s & kReaderMask) == 0; }

  SPINWISE_COLD void lock_shared_slow(lock_site site) noexcept {
    waiting w(*this, lock_mode::s, site);
    for (;;) {
      std::uint32_t s = w.until(no_x);
      // (X, S): 0,n -> 0,n+1; acquire pairs with the release in unlock / downgrade.
      if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return w.entered();
      }
    }
  }

  SPINWISE_COLD void lock_sx_slow(lock_site site) noexcept {
    waiting w(*this, lock_mode::sx, site);
    for (;;) {
      std::uint32_t s = w.until(no_x_sx);
      // (X, SX): 0,0 -> 0,1; acquire pairs with the release in unlock / unlock_sx.
      if (state_.compare_exchange_weak(s, s | kSX, std::memory_order_acquire, std::memory_order_relaxed)) {
        return w.entered();
      }
    }
  }

  SPINWISE_COLD void lock_slow(lock_site site) noexcept {
    waiting w(*this, lock_mode::x, site);
    for (;;) {
      std::uint32_t s = w.until(no_x_sx);
      // Reserve: (X, SX): 0,0 -> 1,0; from here no S, SX or X enters. Acquire pairs with the
      // release in unlock / unlock_sx.
      if (state_.compare_exchange_weak(s, s | kX, std::memory_order_acquire, std::memory_order_relaxed)) {
        if ((s & kReaderMask) != 0) w.until(drained);  // its acquire load pairs with unlock_shared
        return w.entered();
      }
    }
  }

  // An upgrade's wait for the S holders: tracked as an X wait (not counted: not an acquisition).
  SPINWISE_COLD void drain() noexcept { waiting(*this, lock_mode::x, {}).until(drained); }

  // Sleeps until ready(word) may hold (detail/futex_park.hpp); true if it slept.
  template <class Ready>
  bool park(Ready ready) noexcept {
    return detail::park(state_, epoch_, kParked, ready, detail::no_deadline{});
  }

  void wake() noexcept { detail::wake_sleepers(epoch_); }

  // The last S holder left under an X reservation that has sleepers.
  SPINWISE_COLD void wake_drained() noexcept {
    // (P): 1 -> 0; acquire: the sleep protocol.
    if (state_.fetch_and(~kParked, std::memory_order_acq_rel) & kParked) wake();
  }

  std::atomic<std::uint32_t> state_{0};
  std::atomic<std::uint32_t> epoch_{0};
};

// time_policy under the latch's own knobs: InnoDB's rw_lock_t wait (spin_wait_delay 6, spin_loops
// 30) with the unit in time, 200 ns, so a wait spins ~15 us before it sleeps on every CPU instead of
// 14x longer on Skylake. sx_lock_t<innodb_policy<sx_lock_tag>> replays MySQL's instruction counts
// exactly, for an engine migrating from InnoDB's settings.
using sx_lock = sx_lock_t<time_policy<sx_lock_tag>>;

static_assert(sizeof(sx_lock) == 8, "sx_lock: a 32-bit word and a 32-bit futex word");
static_assert(sizeof(sx_lock::with_stats<struct sx_lock_tag>) == 8, "statistics live outside the latch");
static_assert(sizeof(sx_lock_t<innodb_policy<sx_lock_tag>>) == 8,
              "the policy is static: the InnoDB replay is the same latch");
static_assert(std::is_same_v<sx_lock::with_stats<struct sx_lock_tag>::policy, sx_lock::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

static_assert(std::is_nothrow_default_constructible_v<sx_lock>);

// Holds SX for a scope: the annotated guard for lock_sx / unlock_sx (S: shared_lock_guard or
// std::shared_lock; X: lock_guard or std::lock_guard, from guard.hpp and <mutex>). Its upgrade()
// and downgrade() change the latch's mode and the one it records, and it releases the mode it
// holds: X after an upgrade() that no downgrade() followed. Change the mode through the guard: a
// guard whose latch was upgraded behind its back would release SX while X is held, which leaves the
// latch locked for good (the mode checks, file top, abort there instead).
template <class Latch>
class SPINWISE_SCOPED_CAPABILITY sx_guard {
 public:
  using mutex_type = Latch;

  explicit sx_guard(Latch& l) SPINWISE_ACQUIRE_SHARED(l) : l_(l) { l_.lock_sx(); }
  sx_guard(Latch& l, lock_site site) SPINWISE_ACQUIRE_SHARED(l) : l_(l) { l_.lock_sx(site); }
  sx_guard(Latch& l, std::adopt_lock_t) SPINWISE_REQUIRES_SHARED(l) : l_(l) {}
  ~sx_guard() SPINWISE_RELEASE_GENERIC() {
    if (x_) {
      l_.unlock();
    } else {
      l_.unlock_sx();
    }
  }

  sx_guard(const sx_guard&) = delete;
  sx_guard& operator=(const sx_guard&) = delete;

  // SX -> X, as Latch::upgrade(). To Clang's analysis the guard then holds the latch exclusively:
  // GUARDED_BY data may be written until downgrade() or the end of the scope.
  void upgrade() noexcept SPINWISE_RELEASE() SPINWISE_ACQUIRE() {
    l_.upgrade();
    x_ = true;
  }
  // X -> SX, as Latch::downgrade(); shared again to the analysis.
  void downgrade() noexcept SPINWISE_RELEASE() SPINWISE_ACQUIRE_SHARED() {
    l_.downgrade();
    x_ = false;
  }

 private:
  Latch& l_;
  bool x_ = false;  // X held (upgrade() without downgrade() since); SX otherwise
};

}  // namespace spinwise
