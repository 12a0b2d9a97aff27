#pragma once
// The interposer's shared parts (libspinwise-preload.so, docs/preload.md): glibc's own functions
// for what passes through, errno kept, the kind, deadlines, and each kind's locks. One file per
// job beside it: settings.cpp (the kind from the environment, the library's constructor),
// statistics.cpp (the report at exit, fork), profile.hpp and profile.cpp (the per-lock profile),
// mutex.cpp, rwlock.cpp and cond.cpp (the pthread calls of each type, and where each keeps its
// state inside glibc's structure).
//
//   LD_PRELOAD=libspinwise-preload.so ./program
//
// State in place: each lock lives in bytes of the program's own pthread_mutex_t / pthread_rwlock_t
// that glibc's static initializers leave zero, and zero is every kind's free state, so
// PTHREAD_MUTEX_INITIALIZER, std::mutex and a call made before any constructor ran need no init and
// no side table. A mutex, rwlock or condition variable that is process-shared (or has any flag
// beyond its type) passes to glibc untouched, as does everything in the `glibc` kind.

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>

#include "../c/c_lock_kinds.hpp"
#include "profile.hpp"
#include "spinwise/adaptive_policy.hpp"
#include "spinwise/detail/env.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/park_on_marked_word.hpp"
#include "spinwise/spin_shared_mutex.hpp"

#define SPINWISE_EXPORT extern "C" __attribute__((visibility("default")))

namespace spinwise {
struct stats_snapshot;  // spinwise/runtime/stats_report.hpp
}  // namespace spinwise

namespace spinwise::preload {

SPINWISE_STATS_CLASS(preload_mutex, "preload.mutex")
SPINWISE_STATS_CLASS(preload_recursive, "preload.recursive")
SPINWISE_STATS_CLASS(preload_errorcheck, "preload.errorcheck")
SPINWISE_STATS_CLASS(preload_rwlock, "preload.rwlock")

// --- glibc's functions, for what passes through ------------------------------------------------

// Resolved on first use, with no constructor of ours needed: a library loaded before this one may
// call from its constructor. dlsym(RTLD_NEXT) takes the default version (pthread_cond_wait's
// GLIBC_2.3.2, the current condition variable).
template <class F>
F real(std::atomic<void*>& slot, const char* name) noexcept {
  void* p = slot.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = dlsym(RTLD_NEXT, name);
    if (p == nullptr) {
      static const char msg[] = "spinwise-preload: a pthread function is missing from the C library\n";
      (void)!write(2, msg, sizeof msg - 1);
      std::abort();  // no C library with pthreads: nothing can run
    }
    slot.store(p, std::memory_order_release);
  }
  return reinterpret_cast<F>(p);
}
#define SPINWISE_REAL(name)                      \
  ([]() noexcept {                               \
    static std::atomic<void*> slot{nullptr};     \
    return real<decltype(&::name)>(slot, #name); \
  }())

// glibc's lock calls leave errno as they found it; the futex system calls under ours set it
// (EAGAIN, ETIMEDOUT, EINTR). Every interposed call starts with one of these.
class errno_keeper {
 public:
  errno_keeper() noexcept : saved_(errno) {}
  ~errno_keeper() { errno = saved_; }
  errno_keeper(const errno_keeper&) = delete;
  errno_keeper& operator=(const errno_keeper&) = delete;

 private:
  int saved_;
};

// --- the kind ----------------------------------------------------------------------------------

// No FIFO kind: the compact ticket and MCS spin locks the interposer had (ticket_mutex and
// mcs_mutex do not fit beside glibc's __kind) could hang a child of fork(). A FIFO lock's queue
// holds the parent's other threads, which the child does not have: the atfork pattern (lock in
// prepare, unlock in parent and child) with threads queued at fork handed the child's lock to a
// thread that does not exist there, and a second unlock of a normal mutex (glibc tolerates it)
// broke either lock for good. Their names now get the unknown-kind treatment (glibc's locks, one
// line).
enum kind : int { k_glibc, k_hybrid, k_adaptive, k_ttas };
constexpr const char* kKindNames[] = {"glibc", "hybrid", "adaptive", "ttas"};

inline std::atomic<int> g_kind{-1};
// What the counting calls record: nothing, the statistics (SPINWISE_PRELOAD_STATS), or the
// statistics and the per-lock profile (SPINWISE_PRELOAD_PROFILE, profile.hpp).
enum stats_mode : int { kStatsOff, kStatsOn, kStatsProfile };
inline std::atomic<int> g_stats{kStatsOff};

// tl_state.inside (profile.hpp's thread_state) is set while this thread is inside one of the
// interposed calls that counts statistics: a lock the statistics take themselves (std::mutex in
// their registry) then runs without them, no recursion.

// settings.cpp: the kind from SPINWISE_PRELOAD_LOCK, the knobs, the statistics switch; once.
int init_kind() noexcept;

// A part of an interposed call that counts (tl_state.inside) for as long as it lives.
struct counted_call {
  counted_call() noexcept { ++tl_state.inside; }
  ~counted_call() { --tl_state.inside; }
  counted_call(const counted_call&) = delete;
  counted_call& operator=(const counted_call&) = delete;
};

// Whether a call that does not go through on_kind (a condition variable's) records into the
// profile: the profile is on and the thread is not inside a counted call already.
inline bool profiling() noexcept {
  return SPINWISE_UNLIKELY(g_stats.load(std::memory_order_relaxed) == kStatsProfile) && tl_state.inside == 0;
}

inline int current_kind() noexcept {
  const int k = g_kind.load(std::memory_order_acquire);
  return SPINWISE_LIKELY(k >= 0) ? k : init_kind();
}

// statistics.cpp: the report at exit, and the registry held across fork(). write_report writes
// `text` to the file `path` names ("%p": the process ID), never through a symbolic link; `what`
// names it in the one line on stderr when it cannot.
void write_stats_at_exit() noexcept;
bool took_interposed_locks(const stats_snapshot& snap) noexcept;  // any preload.* acquisition
void write_report(const char* path, const std::string& text, const char* what) noexcept;
void stats_fork_prepare() noexcept;
void stats_fork_parent() noexcept;
void stats_fork_child() noexcept;

inline std::uintptr_t self_id() noexcept { return static_cast<std::uintptr_t>(pthread_self()); }

// mutex.cpp: whether a condition variable must wait with glibc's own calls on m (cond.cpp).
bool glibc_mutex(pthread_mutex_t* m) noexcept;

// Calls f(kind, stats) with the process's kind (k_hybrid, k_adaptive or k_ttas) and what this
// call records (a stats_mode), both compile-time constants (std::integral_constant) from which f
// names its lock types. Statistics unless this thread is inside a counted call already
// (tl_state.inside). -1 for any other kind; the callers pass the glibc kind through before. The
// interposed call's return address, which the profile keeps for a wait's site, goes with the ops
// (mutex_ops, rw_ops) to where the call waits (lock_from, note_wait_site): stored in a
// thread-local by every call in the profile mode, it cost a program of nothing but uncontended
// calls 1-2% (bench/results/profile-counts-zen5).
//
// The statistics' call is counted (tl_state.inside) throughout; the profile's only where it may
// take a lock or record (profile_lock's waits, profile_hooks' sample, the flush after a release:
// each counts itself), so that a call that neither waits nor samples pays no more than its hooks
// (profile.hpp).
template <class F>
SPINWISE_ALWAYS_INLINE int on_kind(int k, F&& f) noexcept {
  // The switch first: with statistics off (the common case) the call reads no thread-local.
  const int g = g_stats.load(std::memory_order_relaxed);
  const int s = SPINWISE_LIKELY(g == kStatsOff) || tl_state.inside != 0 ? kStatsOff : g;
  if (s == kStatsOn) ++tl_state.inside;
  int rc = -1;
  const auto with = [&](auto kind) noexcept {
    if (SPINWISE_LIKELY(s == kStatsOff)) {
      rc = f(kind, std::integral_constant<int, kStatsOff>{});
    } else if (s == kStatsOn) {
      rc = f(kind, std::integral_constant<int, kStatsOn>{});
    } else {
      rc = f(kind, std::integral_constant<int, kStatsProfile>{});
    }
  };
  switch (k) {
    case k_hybrid:
      with(std::integral_constant<int, k_hybrid>{});
      break;
    case k_adaptive:
      with(std::integral_constant<int, k_adaptive>{});
      break;
    case k_ttas:
      with(std::integral_constant<int, k_ttas>{});
      break;
    default:
      break;
  }
  if (s == kStatsOn) --tl_state.inside;
  return rc;
}

// The return address of the interposed call this is written in, for the profile.
#define SPINWISE_CALLER (__builtin_return_address(0))

// The body of an interposed lock call on `obj`: `ours`, an expression over `ops` (the ops of the
// spinwise lock behind obj, which on(obj, caller, f), on_mutex or on_rwlock, finds), or glibc's
// own call `glibc` where obj is glibc's (on returns -1); errno as the caller had it either way.
#define SPINWISE_OURS_OR_GLIBC(on, obj, ours, glibc)                                \
  const errno_keeper keep;                                                          \
  const int rc = on(obj, SPINWISE_CALLER, [&](auto ops) noexcept { return ours; }); \
  return rc >= 0 ? rc : glibc

// The interposed lock call `name`(T* obj): ops.op(obj) on our lock, glibc's own `name` on glibc's.
#define SPINWISE_INTERPOSE(T, on, name, op)                                 \
  SPINWISE_EXPORT int name(T* obj) noexcept {                               \
    SPINWISE_OURS_OR_GLIBC(on, obj, ops.op(obj), SPINWISE_REAL(name)(obj)); \
  }

// The timed pair of a lock call: `timed`(obj, at) on CLOCK_REALTIME and `clocked`(obj, clock, at),
// both ops.op(obj, clock, at) on our lock.
#define SPINWISE_INTERPOSE_TIMED(T, on, timed, clocked, op)                                          \
  SPINWISE_EXPORT int timed(T* obj, const timespec* at) noexcept {                                   \
    SPINWISE_OURS_OR_GLIBC(on, obj, ops.op(obj, CLOCK_REALTIME, at), SPINWISE_REAL(timed)(obj, at)); \
  }                                                                                                  \
  SPINWISE_EXPORT int clocked(T* obj, clockid_t clock, const timespec* at) noexcept {                \
    SPINWISE_OURS_OR_GLIBC(on, obj, ops.op(obj, clock, at), SPINWISE_REAL(clocked)(obj, clock, at)); \
  }

// --- time -------------------------------------------------------------------------------------

inline bool valid(const timespec* t) noexcept {
  return t != nullptr && t->tv_nsec >= 0 && t->tv_nsec < 1'000'000'000;
}

template <class Clock>
typename Clock::time_point time_point_of(const timespec& t) noexcept {
  using D = typename Clock::duration;
  if (t.tv_sec < 0) return typename Clock::time_point{};  // before the epoch: passed
  const auto max_s = std::chrono::duration_cast<std::chrono::seconds>(D::max()).count() - 1;
  if (t.tv_sec >= max_s) return Clock::time_point::max();
  return typename Clock::time_point{
      std::chrono::duration_cast<D>(std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec))};
}

// The clocks a timed call can wait on; the others give EINVAL before anything else, as glibc's
// clocklock and clock*lock check.
constexpr bool supported(clockid_t clock) noexcept {
  return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC;
}

// Calls f(time_point) on the clock `clock` names; EINVAL for a clock a lock cannot wait on.
template <class F>
int with_deadline(clockid_t clock, const timespec& t, F&& f) noexcept {
  if (clock == CLOCK_REALTIME) return f(time_point_of<std::chrono::system_clock>(t));
  if (clock == CLOCK_MONOTONIC) return f(time_point_of<std::chrono::steady_clock>(t));
  return EINVAL;
}

// --- the kinds' locks, for a mutex type (Class) and with or without statistics -------------------

// The profile's view of a mutex type's class: which pthread object it is, and where in that
// object its lock lies (mutex.cpp's kLockOffset, rwlock.cpp's 0).
template <class Class>
struct profiled {
  static constexpr object_kind kind = std::is_same_v<Class, preload_recursive>    ? object_kind::recursive
                                      : std::is_same_v<Class, preload_errorcheck> ? object_kind::errorcheck
                                      : std::is_same_v<Class, preload_rwlock>     ? object_kind::rwlock
                                                                                  : object_kind::mutex;
  static constexpr std::size_t offset = kind == object_kind::rwlock ? 0 : 24;
  using type = profile_stats<Class, kind, offset>;

  using hooks = profile_hooks<Class, kind, offset>;
};

// What the locks of mode S record into Class's statistics: nothing, the class's statistics, or
// (the profile) the waits' policy (profile_lock below).
template <class Class, int S>
using stats_of =
    std::conditional_t<S == kStatsOff, no_stats,
                       std::conditional_t<S == kStatsOn, class_stats<Class>, typename profiled<Class>::type>>;
// What an acquisition that does not wait records in mode S: the same, but in the profile mode
// profile_hooks (profile.hpp). rw_ops calls it for the readers it lets in itself.
template <class Class, int S>
using hooks_of = std::conditional_t<S == kStatsProfile, typename profiled<Class>::hooks, stats_of<Class, S>>;

// The profile mode's lock: one lock, seen as Off (compiled with no_stats, the off path's own code)
// for every call that does not wait, which then runs Hooks, and as Waits (compiled with the
// profile's statistics) for a call that waits, which measures the wait. The two differ only in
// their statistics policy, which is static: the same members at the same place. With every call
// compiled with the profile's policy, the code of the calls that never wait grew enough to cost
// a program of nothing but such calls 16-25% with every hook empty and all (v4 in
// bench/results/profile-uncontended-zen4); this way their code is the off path's and the hooks'.
// A call that waits makes one more attempt than with the profile off (Off's try, then Waits'
// own first attempt) before its wait.
template <class Off, class Waits, class Hooks>
class profile_lock {
  static_assert(sizeof(Off) == sizeof(Waits) && alignof(Off) == alignof(Waits),
                "a statistics policy changes no member of a lock");

 public:
  using policy = typename Off::policy;

  profile_lock() noexcept { new (bytes_) Off; }
  profile_lock(const profile_lock&) = delete;
  profile_lock& operator=(const profile_lock&) = delete;

  // lock() as a call from `caller` makes it: a wait's site, stored only when the call waits.
  void lock_from(const void* caller) noexcept {
    if (SPINWISE_LIKELY(off().try_lock())) {
      Hooks::on_acquire(this, lock_mode::x);
    } else {
      lock_waiting(caller);
    }
  }
  bool try_lock() noexcept { return entered(off().try_lock(), lock_mode::x); }
  template <class TP>
  bool try_lock_until(const TP& tp) noexcept {
    if (off().try_lock()) return entered(true, lock_mode::x);
    const counted_call in;
    return waits().try_lock_until(tp);
  }
  void unlock() noexcept {
    off().unlock();
    Hooks::on_release(this, lock_mode::x);
  }

  bool try_lock_shared() noexcept { return entered(off().try_lock_shared(), lock_mode::s); }
  template <class TP>
  bool try_lock_shared_until(const TP& tp) noexcept {
    if (off().try_lock_shared()) return entered(true, lock_mode::s);
    const counted_call in;
    return waits().try_lock_shared_until(tp);
  }
  void unlock_shared() noexcept {
    off().unlock_shared();
    Hooks::on_release(this, lock_mode::s);
  }
  bool is_locked_shared() const noexcept { return off().is_locked_shared(); }

 private:
  SPINWISE_NOINLINE void lock_waiting(const void* caller) noexcept {
    tl_state.caller = caller;
    const counted_call in;
    waits().lock();
  }
  SPINWISE_ALWAYS_INLINE bool entered(bool ok, lock_mode m) noexcept {
    if (ok) Hooks::on_acquire(this, m);
    return ok;
  }
  Off& off() noexcept { return *std::launder(reinterpret_cast<Off*>(bytes_)); }
  const Off& off() const noexcept { return *std::launder(reinterpret_cast<const Off*>(bytes_)); }
  Waits& waits() noexcept { return *std::launder(reinterpret_cast<Waits*>(bytes_)); }

  alignas(Off) unsigned char bytes_[sizeof(Off)];
};

template <class L>
struct is_profile_lock : std::false_type {};
template <class Off, class Waits, class Hooks>
struct is_profile_lock<profile_lock<Off, Waits, Hooks>> : std::true_type {};

// Takes lock l for an interposed call made from `caller` (its return address): the profile mode's
// lock records it as the site of a wait (profile_lock::lock_from); any other ignores it.
template <class L>
SPINWISE_ALWAYS_INLINE void lock_from(L& l, const void* caller) noexcept {
  if constexpr (is_profile_lock<L>::value) {
    l.lock_from(caller);
  } else {
    (void)caller;
    l.lock();
  }
}
// Before a wait that lock_from does not make (a timed one, a reader's): in the profile mode its
// site, for the wait's record (tl_state.caller).
template <class L>
SPINWISE_ALWAYS_INLINE void note_wait_site(const void* caller) noexcept {
  if constexpr (is_profile_lock<L>::value) {
    tl_state.caller = caller;
  } else {
    (void)caller;
  }
}

// A kind's lock Make<St> in mode S for Class: made with S's statistics, or the profile_lock.
template <template <class> class Make, class Class, int S>
using lock_in_mode = std::conditional_t<
    S == kStatsProfile,
    profile_lock<Make<no_stats>, Make<stats_of<Class, S>>, typename profiled<Class>::hooks>,
    Make<stats_of<Class, S>>>;

// Both futex kinds' mutexes park at once on a word marked "a waiter may sleep here"
// (park_on_marked_word.hpp): the interposer does not know whether a program holds its locks
// across sleeps. The default kind, adaptive, also learns per mutex type whether spinning pays
// (adaptive_policy.hpp): a fixed budget, spent while the holder is off its CPU, put sysbench's
// `threads` test and CPython's GIL under a queue below glibc on 2 CPUs (docs/preload.md).
template <class St>
using hybrid_kind_mutex = hybrid_mutex_t<park_on_marked_word<hybrid_mutex::policy>, St>;
template <class Class>
struct adaptive_kind {
  template <class St>
  using mutex = hybrid_mutex_t<park_on_marked_word<adaptive_policy<Class>>, St>;
  template <class St>
  using rwlock = hybrid_shared_mutex_t<adaptive_policy<Class>, St>;
};
template <class St>
using ttas_kind_mutex = ttas_mutex_t<ttas_mutex::policy, St>;
template <class St>
using hybrid_kind_rwlock = hybrid_shared_mutex_t<hybrid_shared_mutex::policy, St>;
template <class St>
using spin_kind_rwlock = spin_shared_mutex_t<spin_shared_mutex::policy, St>;

template <int K, class Class, int S>
struct mutex_lock_of;
template <class Class, int S>
struct mutex_lock_of<k_hybrid, Class, S> {
  using type = lock_in_mode<hybrid_kind_mutex, Class, S>;
};
template <class Class, int S>
struct mutex_lock_of<k_adaptive, Class, S> {
  using type = lock_in_mode<adaptive_kind<Class>::template mutex, Class, S>;
};
template <class Class, int S>
struct mutex_lock_of<k_ttas, Class, S> {
  using type = lock_in_mode<ttas_kind_mutex, Class, S>;
};

template <int K, int S>
struct rw_lock_of {
  using type = lock_in_mode<spin_kind_rwlock, preload_rwlock, S>;
};
template <int S>
struct rw_lock_of<k_hybrid, S> {
  using type = lock_in_mode<hybrid_kind_rwlock, preload_rwlock, S>;
};
template <int S>
struct rw_lock_of<k_adaptive, S> {
  using type = lock_in_mode<adaptive_kind<preload_rwlock>::template rwlock, preload_rwlock, S>;
};

}  // namespace spinwise::preload
