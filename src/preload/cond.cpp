// pthread_cond_t: the interposer's own condition variables, which work with any private mutex,
// interposed or not; a process-shared one is glibc's (interposer.hpp).

#include <linux/futex.h>
#include <sys/syscall.h>

#include <climits>
#include <cstring>

#include "interposer.hpp"

namespace spinwise::preload {
namespace {

// In place in pthread_cond_t (48 bytes; PTHREAD_COND_INITIALIZER is zeros): a sequence word that
// every signal and broadcast advances, the count of waiters (a signal with none makes no system
// call) and flags from pthread_cond_init's attributes. A waiter reads the sequence while it holds
// the mutex, releases the mutex, and sleeps on the futex unless the sequence moved; a signal that
// came between the release and the sleep moved it, so none is lost. A signal wakes one sleeper,
// a broadcast all of them; wake-ups may be spurious, as POSIX allows (callers loop on their
// predicate). The mutex is released and retaken through the interposed calls (mutex.cpp), so a
// condition variable works with any private mutex, glibc's included.
//
// A process-shared condition variable is glibc's (pthread_cond_init passes it through): a process
// running without the interposer may wait on it or signal it. glibc's pthread_cond_init marks it
// in __wrefs (bytes 36-39, bit 0), which this file's state never touches, so it is recognized
// whichever process initialized it.
//
// pthread_cond_destroy may come right after the broadcast that woke the last waiters, and the
// memory be freed (POSIX's own example), while a woken waiter is still on its way out. So a
// waiter's decrement of `waiters` is its last access, and destroy sleeps until the count is zero
// (glibc's destroy waits for its waiters the same way).

struct cond_state {
  std::atomic<std::uint32_t> seq;
  // bit 31: kCondDestroyer, a pthread_cond_destroy sleeps on this word; bits 0-30: the waiters
  // inside pthread_cond_wait. Invariant: the bit is set only while the count is non-zero or by a
  // destroy that has not returned.
  std::atomic<std::uint32_t> waiters;
  std::uint32_t flags;  // kCondMonotonic
};
constexpr std::uint32_t kCondMonotonic = 1;
constexpr std::uint32_t kCondDestroyer = 1u << 31;
static_assert(sizeof(cond_state) <= sizeof(pthread_cond_t) && alignof(pthread_cond_t) >= alignof(cond_state));

cond_state& cond_of(pthread_cond_t* c) noexcept { return *reinterpret_cast<cond_state*>(c); }

constexpr unsigned kGlibcCondShared = 1;  // glibc's __PTHREAD_COND_SHARED_MASK, in __wrefs
static_assert(offsetof(decltype(pthread_cond_t::__data), __wrefs) >= sizeof(cond_state),
              "glibc's pthread_cond_t layout: __wrefs beyond this file's state");
// Whether c is glibc's: process-shared, or every condition variable in the glibc kind.
bool cond_is_glibc(const pthread_cond_t* c) noexcept {
  return current_kind() == k_glibc || (c->__data.__wrefs & kGlibcCondShared) != 0;
}

// Private futexes: a process-shared condition variable is glibc's.
long futex_op(std::atomic<std::uint32_t>& w, int op, std::uint32_t v, const timespec* t) noexcept {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), op | FUTEX_PRIVATE_FLAG, v, t, nullptr,
                 FUTEX_BITSET_MATCH_ANY);
}

// A signal (n = 1) or a broadcast (n = INT_MAX): the sequence moves, so a waiter between its read
// of it and its sleep does not sleep; sleepers are woken only when a waiter is inside (seq_cst on
// both sides: a waiter counts itself before it reads the sequence).
// With the profile on, a wake that found a waiter is counted for c (profile.hpp), with the number
// of threads it woke.
void cond_wake(pthread_cond_t* c, int n) noexcept {
  cond_state& s = cond_of(c);
  s.seq.fetch_add(1, std::memory_order_seq_cst);
  if (s.waiters.load(std::memory_order_seq_cst) != 0) {
    const long woken = futex_op(s.seq, FUTEX_WAKE, static_cast<std::uint32_t>(n), nullptr);
    if (profiling()) {
      ++tl_state.inside;
      profile_cond_wake(c, n != 1, woken);
      --tl_state.inside;
    }
  }
}

}  // namespace
}  // namespace spinwise::preload

using namespace spinwise::preload;

SPINWISE_EXPORT int pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* a) noexcept {
  const errno_keeper keep;
  int shared = PTHREAD_PROCESS_PRIVATE;
  if (a != nullptr && pthread_condattr_getpshared(a, &shared) != 0) return EINVAL;
  if (current_kind() == k_glibc || shared == PTHREAD_PROCESS_SHARED)
    return SPINWISE_REAL(pthread_cond_init)(c, a);
  std::uint32_t flags = 0;
  if (a != nullptr) {
    clockid_t clock = CLOCK_REALTIME;
    if (pthread_condattr_getclock(a, &clock) != 0) return EINVAL;
    if (clock == CLOCK_MONOTONIC) flags |= kCondMonotonic;
  }
  std::memset(static_cast<void*>(c), 0, sizeof *c);
  cond_of(c).flags = flags;
  return 0;
}

SPINWISE_EXPORT int pthread_cond_destroy(pthread_cond_t* c) noexcept {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return SPINWISE_REAL(pthread_cond_destroy)(c);
  cond_state& s = cond_of(c);
  // Acquire: pairs with the last waiter's release in cond_leave; after it, none touches *c.
  std::uint32_t w = s.waiters.load(std::memory_order_acquire);
  while ((w & ~kCondDestroyer) != 0) {
    // (destroyer, waiters): 0,n -> 1,n, then sleep until the last waiter's n=1 -> 0 wakes us.
    if ((w & kCondDestroyer) == 0 &&
        !s.waiters.compare_exchange_weak(w, w | kCondDestroyer, std::memory_order_acquire,
                                         std::memory_order_acquire))
      continue;
    futex_op(s.waiters, FUTEX_WAIT, w | kCondDestroyer, nullptr);
    w = s.waiters.load(std::memory_order_acquire);
  }
  s.waiters.store(0, std::memory_order_relaxed);  // as pthread_cond_init leaves it
  return 0;
}

SPINWISE_EXPORT int pthread_cond_signal(pthread_cond_t* c) noexcept {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return SPINWISE_REAL(pthread_cond_signal)(c);
  cond_wake(c, 1);
  return 0;
}

SPINWISE_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) noexcept {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return SPINWISE_REAL(pthread_cond_broadcast)(c);
  cond_wake(c, INT_MAX);
  return 0;
}

namespace spinwise::preload {
namespace {
// One wait: at == nullptr for none. clock: the deadline's (FUTEX_WAIT_BITSET takes an absolute
// time on CLOCK_MONOTONIC, or on CLOCK_REALTIME with FUTEX_CLOCK_REALTIME).
// A waiter leaves: its last access to the condition variable, which a pthread_cond_destroy may be
// waiting to free.
void cond_leave(cond_state& s) noexcept {
  // (destroyer, waiters): d,n -> d,n-1, release: pairs with pthread_cond_destroy's acquire.
  if (s.waiters.fetch_sub(1, std::memory_order_release) == (kCondDestroyer | 1)) {
    // The memory may already be reused: a wake there is at worst a spurious wake-up, which every
    // futex user tolerates (glibc's condition variable does the same).
    futex_op(s.waiters, FUTEX_WAKE, 1, nullptr);
  }
}

// The sleep of a condition wait, a cancellation point as glibc's: asynchronous cancellation is on
// around the futex call only (glibc's futex_wait_cancelable does the same), so a cancel that is
// pending, or comes while the thread sleeps, unwinds from here into cond_wait's cleanup. This
// frame has no cleanup of its own and is not noexcept; cond_wait reaches it through a pointer the
// compiler cannot see through, so that it keeps the landing pad for the call (GCC's and LLVM's
// nothrow inference would otherwise drop it: this function only calls nothrow C functions, and
// an unwind through a call without a landing pad is std::terminate).
// Not instrumented by ASan: the unwinding abandons this frame without its epilogue, which is where
// ASan would unpoison the redzones around `old`; left poisoned, they fail the next call that uses
// that stack (ASan's own __asan_handle_no_return in cond_wait's landing pad, built with -Og).
__attribute__((no_sanitize_address)) long cancellable_futex_wait(std::atomic<std::uint32_t>* w, int op,
                                                                 std::uint32_t v, const timespec* t,
                                                                 int* err) {
  int old = PTHREAD_CANCEL_DEFERRED;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);  // acts on a pending cancel at once
  const long r = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), op | FUTEX_PRIVATE_FLAG, v, t,
                         nullptr, FUTEX_BITSET_MATCH_ANY);
  *err = errno;
  pthread_setcanceltype(old, &old);
  return r;
}
long (*volatile g_cancellable_futex_wait)(std::atomic<std::uint32_t>*, int, std::uint32_t, const timespec*,
                                          int*) = cancellable_futex_wait;

// A waiter cancelled in its sleep leaves as glibc's does: the condition variable's bookkeeping,
// then the mutex taken back, before the thread's cleanup handlers run (they may use what the
// mutex guards). Runs on the cancellation's unwinding only (armed), never on a return.
struct cond_cancelled {
  cond_state& s;
  std::uint32_t seen;
  pthread_mutex_t* m;
  bool armed = true;
  ~cond_cancelled() {
    if (!armed) return;
    // A signal meant for us may have woken this thread as the cancel came: pass it on (at worst
    // a spurious wake-up of another waiter), before we leave (cond_leave is the last access).
    if (s.seq.load(std::memory_order_relaxed) != seen) futex_op(s.seq, FUTEX_WAKE, 1, nullptr);
    cond_leave(s);
    pthread_mutex_lock(m);
  }
};

// Not noexcept: a cancellation unwinds through it (cond_cancelled above). caller: the return
// address of the pthread call, for the profile, which counts the wait (from before the mutex's
// release to the wake-up) unless it was cancelled.
int cond_wait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const timespec* at,
              const void* caller) {
  if (at != nullptr && (!valid(at) || !supported(clock))) return EINVAL;
  const bool profile = profiling();
  const std::uint64_t since = profile ? read_counter() : 0;
  cond_state& s = cond_of(c);
  s.waiters.fetch_add(1, std::memory_order_seq_cst);
  const std::uint32_t seen = s.seq.load(std::memory_order_seq_cst);
  if (const int rc = pthread_mutex_unlock(m); rc != 0) {
    cond_leave(s);
    return rc;  // not the owner (an error-checking mutex): EPERM, as glibc
  }
  // The records this thread keeps (profile.hpp) are made here, where it is about to sleep and has
  // let the mutex go: the time costs its other threads nothing, unless it holds another lock too.
  if (profile) profile_flush_kept();
  // A deadline before the epoch has passed; the futex would refuse it (EINVAL), glibc times out.
  int result = at != nullptr && at->tv_sec < 0 ? ETIMEDOUT : 0;
  {
    cond_cancelled on_cancel{s, seen, m};
    while (result == 0) {
      const int op =
          FUTEX_WAIT_BITSET | (at != nullptr && clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
      int err = 0;
      if (g_cancellable_futex_wait(&s.seq, op, seen, at, &err) == 0) break;  // woken
      if (err == ETIMEDOUT) {
        result = ETIMEDOUT;
      } else if (err != EINTR || s.seq.load(std::memory_order_acquire) != seen) {
        break;  // EAGAIN: the sequence moved; any other error: a spurious wake-up, never a busy loop
      }
    }
    on_cancel.armed = false;
  }
  cond_leave(s);
  if (profile) {
    const std::uint64_t now = read_counter();
    ++tl_state.inside;
    profile_cond_wait(c, caller, now > since ? now - since : 0, result == ETIMEDOUT);
    --tl_state.inside;
  }
  // Retaken whatever happened: a timed wait returns with the mutex held. A robust mutex's
  // EOWNERDEAD is the caller's to see.
  const int rc = pthread_mutex_lock(m);
  return rc != 0 ? rc : result;
}

clockid_t cond_clock(pthread_cond_t* c) noexcept {
  return (cond_of(c).flags & kCondMonotonic) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}
}  // namespace
}  // namespace spinwise::preload

SPINWISE_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_wait)(c, m) : EINVAL;
  return cond_wait(c, m, CLOCK_REALTIME, nullptr, SPINWISE_CALLER);
}

SPINWISE_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const timespec* at) {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_timedwait)(c, m, at) : EINVAL;
  return cond_wait(c, m, cond_clock(c), at, SPINWISE_CALLER);
}

SPINWISE_EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                           const timespec* at) {
  const errno_keeper keep;
  if (cond_is_glibc(c))
    return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_clockwait)(c, m, clock, at) : EINVAL;
  return cond_wait(c, m, clock, at, SPINWISE_CALLER);
}