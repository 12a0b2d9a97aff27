// libspinwise-preload.so: an unmodified program's pthread mutexes, rwlocks and condition
// variables on spinwise's locks, by LD_PRELOAD. The manual: docs/preload.md.
//
//   LD_PRELOAD=libspinwise-preload.so SPINWISE_PRELOAD_LOCK=hybrid ./program
//
// State in place: each lock lives in bytes of the program's own pthread_mutex_t / pthread_rwlock_t
// that glibc's static initializers leave zero, and zero is every kind's free state, so
// PTHREAD_MUTEX_INITIALIZER, std::mutex and a call made before any constructor ran need no init and
// no side table. pthread_mutex_t (glibc 2.36, 40 bytes on x86_64, 48 on aarch64):
//
//   offset  0  __lock     unused (glibc's own word; zero)
//           4  __count    depth of a recursive mutex (its owner's only)
//           8  __owner + __nusers: the owner (pthread_self(), 8 bytes) of a recursive or
//                         error-checking mutex; pthread_self() survives fork() in the forking thread
//          16  __kind     glibc's type and flags, read on every call, never written
//          24  __list     the kind's lock, 16 bytes: hybrid, adaptive, ttas (4)
//
// A mutex whose __kind has any flag but the type (robust, priority inheritance or protection,
// process-shared) passes to glibc untouched, as does everything in the `glibc` kind.
// pthread_rwlock_t (56 bytes): the lock in bytes 0-23 (hybrid_shared_mutex 16, spin_shared_mutex
// 8), the write owner in __pad2 (offset 40); __shared (process-shared: glibc's) and __flags (the
// reader or writer preference, read here) are glibc's. Condition variables are this file's own (a
// futex sequence word, cond_* below), so that they work with any private mutex, interposed or not;
// a process-shared one is glibc's.

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "c_lock_kinds.hpp"
#include "spinwise/adaptive_policy.hpp"
#include "spinwise/detail/env.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/park_on_marked_word.hpp"
#include "spinwise/runtime/knob_config.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/spin_shared_mutex.hpp"

#define SPINWISE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace spinwise;

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

// No FIFO kind: the compact ticket and MCS spin locks this file had (ticket_mutex and mcs_mutex do
// not fit beside glibc's __kind) could hang a child of fork(). A FIFO lock's queue holds the
// parent's other threads, which the child does not have: the atfork pattern (lock in prepare,
// unlock in parent and child) with threads queued at fork handed the child's lock to a thread that
// does not exist there, and a second unlock of a normal mutex (glibc tolerates it) broke either
// lock for good. Their names now get the unknown-kind treatment (glibc's locks, one line).
enum kind : int { k_glibc, k_hybrid, k_adaptive, k_ttas };
constexpr const char* kKindNames[] = {"glibc", "hybrid", "adaptive", "ttas"};

std::atomic<int> g_kind{-1};
std::atomic<bool> g_stats{false};

// Set while this thread is inside one of the interposed calls that counts statistics: a lock the
// statistics take themselves (std::mutex in their registry) then runs without them, no recursion.
__thread int tl_inside __attribute__((tls_model("initial-exec")));

void write_stats_at_exit() noexcept;

// fork() with statistics on: the registry's locks are held across it (stats_report.hpp), so a
// child never inherits one that a thread of the parent held (it hung in exit(), in the report).
// The handlers' own lock calls count nothing (tl_inside): counting could take those very locks.
void stats_fork_prepare() noexcept {
  ++tl_inside;
  stats_atfork_prepare();
}
void stats_fork_parent() noexcept {
  stats_atfork_parent();
  --tl_inside;
}
void stats_fork_child() noexcept {
  stats_atfork_child();
  --tl_inside;
}

SPINWISE_COLD int init_kind() noexcept {
  const char* v = detail::env("SPINWISE_PRELOAD_LOCK");
  int k = k_adaptive;  // the default kind
  bool unknown = false;
  if (v != nullptr && *v != '\0') {
    unknown = true;
    for (int i = 0; i < static_cast<int>(std::size(kKindNames)); ++i) {
      if (std::strcmp(v, kKindNames[i]) == 0) {
        k = i;
        unknown = false;
      }
    }
    if (unknown) k = k_glibc;
  }
  const char* stats = detail::env("SPINWISE_PRELOAD_STATS");
  g_stats.store(k != k_glibc && stats != nullptr && *stats != '\0', std::memory_order_relaxed);
  int expected = -1;
  if (!g_kind.compare_exchange_strong(expected, k, std::memory_order_acq_rel)) return expected;
  // The first caller: its messages and the knobs, once. Locks taken meanwhile see the kind.
  if (unknown) {
    std::fprintf(
        stderr,
        "spinwise-preload: unknown SPINWISE_PRELOAD_LOCK '%s' (known: glibc, hybrid, adaptive, ttas); "
        "the program runs on glibc's locks\n",
        v);
  }
  if (k != k_glibc) {
    ++tl_inside;
    const startup_status st = configure_from_env();
    if (!st.ok()) {
      std::fprintf(stderr, "spinwise-preload: %s (no knob changed)\n", st.message().c_str());
    }
    if (g_stats.load(std::memory_order_relaxed)) {
      std::atexit(write_stats_at_exit);
      pthread_atfork(stats_fork_prepare, stats_fork_parent, stats_fork_child);
    }
    --tl_inside;
  }
  return k;
}

inline int current_kind() noexcept {
  const int k = g_kind.load(std::memory_order_acquire);
  return SPINWISE_LIKELY(k >= 0) ? k : init_kind();
}

}  // namespace

// Set by the library's constructor, which only settles the kind early: nothing depends on it
// having run. Exported for tests/preload, whose library checks that its own constructor took its
// locks before this one ran.
extern "C" {
__attribute__((visibility("default"))) int spinwise_preload_constructed = 0;
}
__attribute__((constructor)) static void preload_start() {
  (void)current_kind();
  spinwise_preload_constructed = 1;
}

namespace {

void write_stats_at_exit() noexcept {
  const char* path = detail::env("SPINWISE_PRELOAD_STATS");
  if (path == nullptr) return;
  ++tl_inside;
  try {
    const stats_snapshot snap = take_stats_snapshot();
    // A process that took no lock (a wrapper such as timeout(1), which the variable reaches too)
    // leaves the file to the one that did.
    bool any = false;
    for (const auto& c : snap.classes)
      any = any || (c.name.rfind("preload.", 0) == 0 && c.totals.acquisitions != 0);
    if (!any) {
      --tl_inside;
      return;
    }
    // "%p" in the name: the process ID (a program that forks children that exit normally).
    std::string name = path;
    for (std::size_t at = name.find("%p"); at != std::string::npos; at = name.find("%p"))
      name.replace(at, 2, std::to_string(getpid()));
    path = name.c_str();
    const std::string json = format_stats_json(snap);
    // Never through a symbolic link (O_NOFOLLOW): in a shared directory such as /tmp, another
    // user's link at the name would have this process write, or truncate, the file it names.
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      std::size_t done = 0;
      while (done < json.size()) {
        const ssize_t n = write(fd, json.data() + done, json.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      if (close(fd) != 0 || done != json.size())
        std::fprintf(stderr, "spinwise-preload: could not write %s\n", path);
    } else {
      std::fprintf(stderr, "spinwise-preload: could not open %s: %s\n", path,
                   errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
    }
  } catch (...) {
    std::fprintf(stderr, "spinwise-preload: out of memory for the statistics report\n");
  }
  --tl_inside;
}

// --- time -------------------------------------------------------------------------------------

bool valid(const timespec* t) noexcept {
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

template <class Class, bool S>
using stats_of = std::conditional_t<S, class_stats<Class>, no_stats>;

// Both futex kinds' mutexes park at once on a word marked "a waiter may sleep here"
// (park_on_marked_word.hpp): the interposer does not know whether a program holds its locks
// across sleeps. The default kind, adaptive, also learns per mutex type whether spinning pays
// (adaptive_policy.hpp): a fixed budget spent while the holder is off its CPU cost sysbench's
// `threads` test 0.72x and CPython's GIL under a queue 0.95x on 2 CPUs (docs/engines.md).
template <int K, class Class, bool S>
struct mutex_lock_of;
template <class Class, bool S>
struct mutex_lock_of<k_hybrid, Class, S> {
  using type = hybrid_mutex_t<park_on_marked_word<hybrid_mutex::policy>, stats_of<Class, S>>;
};
template <class Class, bool S>
struct mutex_lock_of<k_adaptive, Class, S> {
  using type = hybrid_mutex_t<park_on_marked_word<adaptive_policy<Class>>, stats_of<Class, S>>;
};
template <class Class, bool S>
struct mutex_lock_of<k_ttas, Class, S> {
  using type = ttas_mutex_t<ttas_mutex::policy, stats_of<Class, S>>;
};

template <int K, bool S>
struct rw_lock_of {
  using type = spin_shared_mutex_t<spin_shared_mutex::policy, stats_of<preload_rwlock, S>>;
};
template <bool S>
struct rw_lock_of<k_hybrid, S> {
  using type = hybrid_shared_mutex_t<hybrid_shared_mutex::policy, stats_of<preload_rwlock, S>>;
};
template <bool S>
struct rw_lock_of<k_adaptive, S> {
  using type = hybrid_shared_mutex_t<adaptive_policy<preload_rwlock>, stats_of<preload_rwlock, S>>;
};

// --- pthread_mutex_t ------------------------------------------------------------------------------

using mutex_data = decltype(pthread_mutex_t::__data);
constexpr std::size_t kLockOffset = offsetof(mutex_data, __list);
constexpr std::size_t kOwnerOffset = offsetof(mutex_data, __owner);
static_assert(kLockOffset == 24 && sizeof(pthread_mutex_t) >= kLockOffset + 16,
              "glibc's pthread_mutex_t layout");
static_assert(kOwnerOffset == 8 && offsetof(mutex_data, __kind) == 16, "glibc's pthread_mutex_t layout");

// glibc's __kind: the type in the low two bits (normal 0, recursive 1, errorcheck 2, adaptive 3);
// 256 and 512 are lock elision hints (glibc's own choice, which these locks ignore). Any other bit
// (robust 16, priority inheritance 32, protection 64, process-shared 128) passes through.
constexpr int kTypeMask = 3;
constexpr int kElisionBits = 256 | 512;

enum class mtype { normal, recursive, errorcheck, glibc };
inline mtype type_of(const pthread_mutex_t* m) noexcept {
  const int k = m->__data.__kind;
  if ((k & ~(kTypeMask | kElisionBits)) != 0) return mtype::glibc;
  switch (k & kTypeMask) {
    case PTHREAD_MUTEX_RECURSIVE_NP:
      return mtype::recursive;
    case PTHREAD_MUTEX_ERRORCHECK_NP:
      return mtype::errorcheck;
    default:
      return mtype::normal;
  }
}

template <class L>
L& lock_in(pthread_mutex_t* m) noexcept {
  static_assert(sizeof(L) <= 16 && alignof(L) <= 8, "a kind's lock must fit glibc's __list");
  return *reinterpret_cast<L*>(reinterpret_cast<char*>(m) + kLockOffset);
}
std::atomic<std::uintptr_t>& owner_of(pthread_mutex_t* m) noexcept {
  return *reinterpret_cast<std::atomic<std::uintptr_t>*>(reinterpret_cast<char*>(m) + kOwnerOffset);
}
inline std::uintptr_t self_id() noexcept { return static_cast<std::uintptr_t>(pthread_self()); }

// A mutex type's calls on kind K's lock L. Returns pthread's error codes.
template <class L, mtype T>
struct mutex_ops {
  static int lock(pthread_mutex_t* m) noexcept {
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) == self_id()) return relock(m);
    }
    lock_in<L>(m).lock();
    own(m);
    return 0;
  }
  static int trylock(pthread_mutex_t* m) noexcept {
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) == self_id())
        return T == mtype::recursive ? relock(m) : EBUSY;
    }
    if (!lock_in<L>(m).try_lock()) return EBUSY;
    own(m);
    return 0;
  }
  static int timedlock(pthread_mutex_t* m, clockid_t clock, const timespec* at) noexcept {
    if (!supported(clock)) return EINVAL;
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) == self_id()) return relock(m);
    }
    if (lock_in<L>(m).try_lock()) {
      own(m);
      return 0;
    }
    if (!valid(at)) return EINVAL;  // checked only when the call would wait, as glibc does
    const int rc = with_deadline(
        clock, *at, [m](auto tp) noexcept { return lock_in<L>(m).try_lock_until(tp) ? 0 : ETIMEDOUT; });
    if (rc == 0) own(m);
    return rc;
  }
  // EBUSY for a locked mutex, as glibc's destroy (which reads its user count); 0 otherwise.
  static int destroy(pthread_mutex_t* m) noexcept {
    if constexpr (T != mtype::normal) {
      return owner_of(m).load(std::memory_order_relaxed) != 0 ? EBUSY : 0;
    } else {
      if (!lock_in<L>(m).try_lock()) return EBUSY;
      lock_in<L>(m).unlock();
      return 0;
    }
  }
  static int unlock(pthread_mutex_t* m) noexcept {
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) != self_id()) return EPERM;
      if (T == mtype::recursive && m->__data.__count > 1) {
        --m->__data.__count;
        return 0;
      }
      m->__data.__count = 0;
      owner_of(m).store(0, std::memory_order_relaxed);
    }
    lock_in<L>(m).unlock();
    return 0;
  }

 private:
  static int relock(pthread_mutex_t* m) noexcept {
    if (T == mtype::errorcheck) return EDEADLK;
    if (m->__data.__count == UINT_MAX) return EAGAIN;
    ++m->__data.__count;
    return 0;
  }
  static void own(pthread_mutex_t* m) noexcept {
    if constexpr (T != mtype::normal) {
      owner_of(m).store(self_id(), std::memory_order_relaxed);
      m->__data.__count = 1;
    }
  }
};

template <class L, class F>
int on_mutex_typed(mtype t, F&& f) noexcept {
  switch (t) {
    case mtype::recursive:
      return f(mutex_ops<typename L::template of<preload_recursive>, mtype::recursive>{});
    case mtype::errorcheck:
      return f(mutex_ops<typename L::template of<preload_errorcheck>, mtype::errorcheck>{});
    default:
      return f(mutex_ops<typename L::template of<preload_mutex>, mtype::normal>{});
  }
}

template <int K, bool S>
struct kind_locks {
  template <class Class>
  using of = typename mutex_lock_of<K, Class, S>::type;
};

// Calls f(ops) with the ops of m's type on the process's kind; statistics unless this thread is
// inside a counted call already. Returns -1 when m is glibc's (the caller passes it through).
template <class F>
SPINWISE_ALWAYS_INLINE int on_mutex(pthread_mutex_t* m, F&& f) noexcept {
  const int k = current_kind();
  const mtype t = type_of(m);
  if (k == k_glibc || t == mtype::glibc) return -1;
  const bool s = g_stats.load(std::memory_order_relaxed) && tl_inside == 0;
  if (s) ++tl_inside;
  int rc;
  switch (k) {
#define SPINWISE_KIND_CASE(K)                                                                        \
  case K:                                                                                            \
    rc = s ? on_mutex_typed<kind_locks<K, true>>(t, f) : on_mutex_typed<kind_locks<K, false>>(t, f); \
    break;
    SPINWISE_KIND_CASE(k_hybrid)
    SPINWISE_KIND_CASE(k_adaptive)
    SPINWISE_KIND_CASE(k_ttas)
#undef SPINWISE_KIND_CASE
    default:
      rc = -1;
  }
  if (s) --tl_inside;
  return rc;
}

// --- pthread_rwlock_t ---------------------------------------------------------------------------

using rw_data = decltype(pthread_rwlock_t::__data);
constexpr std::size_t kRwWriterOffset = offsetof(rw_data, __pad2);
static_assert(offsetof(rw_data, __cur_writer) == 24 && kRwWriterOffset == 40 &&
                  sizeof(pthread_rwlock_t) >= 56,
              "glibc's pthread_rwlock_t layout");

bool rw_is_glibc(const pthread_rwlock_t* rw) noexcept { return rw->__data.__shared != 0; }
std::atomic<std::uintptr_t>& writer_of(pthread_rwlock_t* rw) noexcept {
  return *reinterpret_cast<std::atomic<std::uintptr_t>*>(reinterpret_cast<char*>(rw) + kRwWriterOffset);
}
template <class L>
L& rw_in(pthread_rwlock_t* rw) noexcept {
  static_assert(sizeof(L) <= 24 && alignof(L) <= 8, "a kind's rwlock must fit bytes 0-23");
  return *reinterpret_cast<L*>(rw);
}

// The read locks this thread holds, up to 8 rwlocks: only so that a thread that takes for writing
// an rwlock it holds for reading gets EDEADLK, not a wait for itself (glibc waits forever there).
// A thread holding more at once is not warned about the ones beyond. Admission never reads it.
struct read_hold {
  pthread_rwlock_t* rw;
  std::uint32_t n;
};
__thread read_hold tl_reads[8] __attribute__((tls_model("initial-exec")));

read_hold* find_read(pthread_rwlock_t* rw) noexcept {
  for (read_hold& h : tl_reads)
    if (h.rw == rw && h.n != 0) return &h;
  return nullptr;
}
void note_read(pthread_rwlock_t* rw) noexcept {
  if (read_hold* h = find_read(rw)) {
    ++h->n;
    return;
  }
  for (read_hold& h : tl_reads) {
    if (h.n == 0) {
      h = {rw, 1};
      return;
    }
  }
}
void drop_read(pthread_rwlock_t* rw) noexcept {
  if (read_hold* h = find_read(rw)) --h->n;
}

// Which readers an rwlock admits. glibc's default (PTHREAD_RWLOCK_PREFER_READER_NP, and
// PREFER_WRITER_NP, which glibc treats the same) prefers readers: a reader enters whenever no
// writer holds the lock, also while a writer waits for the readers inside to leave. Programs rely
// on it: a thread takes a read lock it holds again, or a reader inside waits for another reader
// to come in, while a writer waits; a writer-preferring lock deadlocks both. Only
// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP (glibc's __flags, which the interposer leaves
// alone) asks for writer preference, spinwise's own: there, as in glibc, a reader waits behind a
// waiting writer, its own re-entry included.
bool prefers_writers(const pthread_rwlock_t* rw) noexcept {
  return rw->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

// The lock word of spinwise's rwlocks (detail/rw_word.hpp) is their first member. Checked once
// (rw_word_ok) before the interposer reads or changes it itself.
template <class L>
using rw_word_of = std::conditional_t<std::is_same_v<typename L::policy, spin_shared_mutex::policy>,
                                      detail::rw_word<2>, detail::rw_word<4>>;
template <class L>
std::atomic<std::uint64_t>& rw_word_in(pthread_rwlock_t* rw) noexcept {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(rw);
}
template <class L>
bool rw_word_ok() noexcept {
  static const bool ok = [] {
    alignas(8) unsigned char bytes[sizeof(L)] = {};
    L* l = new (bytes) L;
    l->lock_shared();
    const bool r = reinterpret_cast<std::atomic<std::uint64_t>*>(bytes)->load() == rw_word_of<L>::kReaderOne;
    l->unlock_shared();
    return r;
  }();
  return ok;
}

// How long a reader that waits under reader preference waits inside the lock before it looks at
// the word again: the lock's own wait holds it back while a writer has reserved the lock, and
// only the word says that readers are inside (then it may enter).
constexpr std::chrono::milliseconds kReaderRecheck{4};

// A pthread rwlock's calls on lock L, with statistics St (the lock's own, for what the
// interposer does to the word itself).
template <class L, class St>
struct rw_ops {
  // One attempt to enter as a reader: 0, EBUSY (a writer inside, or with writer preference one
  // waiting), or EAGAIN (the count of readers is full: 2^20 - 1; glibc gives EAGAIN for too many
  // read locks too, at a higher count).
  static int try_enter(pthread_rwlock_t* rw, bool prefer_readers) noexcept {
    using W = rw_word_of<L>;
    if (!rw_word_ok<L>()) return rw_in<L>(rw).try_lock_shared() ? 0 : EBUSY;
    std::atomic<std::uint64_t>& w = rw_word_in<L>(rw);
    std::uint64_t s = w.load(std::memory_order_relaxed);
    for (;;) {
      if ((s & W::kReaderMask) == W::kReaderMask) return EAGAIN;
      // W set and readers inside: a writer waits for them to leave (rw_word.hpp's invariant);
      // W set and none: the writer is inside.
      const bool may = W::reader_may_enter(s) || (prefer_readers && (s & W::kReaderMask) != 0);
      if (!may) return EBUSY;
      // (W, readers): w,n -> w,n+1 (n > 0 when w = 1: the draining writer waits for this reader
      // too, and the last reader's unlock_shared wakes it as ever); acquire pairs with the
      // release of the unlock this entry follows.
      if (w.compare_exchange_weak(s, s + W::kReaderOne, std::memory_order_acquire,
                                  std::memory_order_relaxed)) {
        St::on_acquire(&rw_in<L>(rw), lock_mode::s);
        return 0;
      }
    }
  }
  // Waits until the deadline tp (of any clock; time_point::max() for none) to enter as a reader.
  template <class TP>
  static int enter(pthread_rwlock_t* rw, TP tp) noexcept {
    const bool prefer_readers = !prefers_writers(rw);
    for (;;) {
      const int rc = try_enter(rw, prefer_readers);
      if (rc != EBUSY) return rc;
      const TP now = TP::clock::now();
      if (now >= tp) return ETIMEDOUT;
      // Wait inside the lock, which admits this reader once no writer is inside or reserved.
      // Under reader preference at most kReaderRecheck at a time: readers may be let in (by
      // try_enter) while a writer that came after this one waits, and this reader with them.
      const TP until = prefer_readers && tp - now > kReaderRecheck ? now + kReaderRecheck : tp;
      if (rw_in<L>(rw).try_lock_shared_until(until)) return 0;
    }
  }
  static int rdlock(pthread_rwlock_t* rw) noexcept {
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id()) return EDEADLK;
    const int rc = enter(rw, std::chrono::steady_clock::time_point::max());
    if (rc == 0) note_read(rw);
    return rc;
  }
  static int tryrdlock(pthread_rwlock_t* rw) noexcept {
    const int rc = try_enter(rw, !prefers_writers(rw));
    if (rc == 0) note_read(rw);
    return rc;
  }
  // A bad clock or deadline: EINVAL before anything else, as glibc's rwlock checks them first.
  static int timedrdlock(pthread_rwlock_t* rw, clockid_t clock, const timespec* at) noexcept {
    if (!supported(clock) || !valid(at)) return EINVAL;
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id()) return EDEADLK;
    const int rc = with_deadline(clock, *at, [rw](auto tp) noexcept { return enter(rw, tp); });
    if (rc == 0) note_read(rw);
    return rc;
  }
  // This thread's note of a read lock on rw, unless the lock has no reader inside: then another
  // thread released it (undefined in POSIX, tolerated by glibc, which keeps no reader's name), and
  // the note is stale: dropped, the thread may take the lock for writing, as on glibc. With other
  // readers inside the note stands (the EDEADLK above: a kept divergence, docs/preload.md).
  static bool holds_read(pthread_rwlock_t* rw) noexcept {
    read_hold* h = find_read(rw);
    if (h == nullptr) return false;
    if (!rw_in<L>(rw).is_locked_shared()) {
      h->n = 0;
      return false;
    }
    return true;
  }
  static int wrlock(pthread_rwlock_t* rw) noexcept {
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id() || holds_read(rw)) return EDEADLK;
    rw_in<L>(rw).lock();
    writer_of(rw).store(self_id(), std::memory_order_relaxed);
    return 0;
  }
  static int trywrlock(pthread_rwlock_t* rw) noexcept {
    if (!rw_in<L>(rw).try_lock()) return EBUSY;
    writer_of(rw).store(self_id(), std::memory_order_relaxed);
    return 0;
  }
  static int timedwrlock(pthread_rwlock_t* rw, clockid_t clock, const timespec* at) noexcept {
    if (!supported(clock) || !valid(at)) return EINVAL;
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id() || holds_read(rw)) return EDEADLK;
    if (rw_in<L>(rw).try_lock()) {
      writer_of(rw).store(self_id(), std::memory_order_relaxed);
      return 0;
    }
    const int rc = with_deadline(
        clock, *at, [rw](auto tp) noexcept { return rw_in<L>(rw).try_lock_until(tp) ? 0 : ETIMEDOUT; });
    if (rc == 0) writer_of(rw).store(self_id(), std::memory_order_relaxed);
    return rc;
  }
  static int unlock(pthread_rwlock_t* rw) noexcept {
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id()) {
      writer_of(rw).store(0, std::memory_order_relaxed);
      rw_in<L>(rw).unlock();
      return 0;
    }
    drop_read(rw);
    rw_in<L>(rw).unlock_shared();
    return 0;
  }
};

template <class F>
SPINWISE_ALWAYS_INLINE int on_rwlock(pthread_rwlock_t* rw, F&& f) noexcept {
  const int k = current_kind();
  if (k == k_glibc || rw_is_glibc(rw)) return -1;
  const bool s = g_stats.load(std::memory_order_relaxed) && tl_inside == 0;
  if (s) ++tl_inside;
  int rc;
  switch (k) {
#define SPINWISE_KIND_CASE(K)                                                                   \
  case K:                                                                                       \
    rc = s ? f(rw_ops<typename rw_lock_of<K, true>::type, stats_of<preload_rwlock, true>>{})    \
           : f(rw_ops<typename rw_lock_of<K, false>::type, stats_of<preload_rwlock, false>>{}); \
    break;
    SPINWISE_KIND_CASE(k_hybrid)
    SPINWISE_KIND_CASE(k_adaptive)
    SPINWISE_KIND_CASE(k_ttas)
#undef SPINWISE_KIND_CASE
    default:
      rc = -1;
  }
  if (s) --tl_inside;
  return rc;
}

// --- condition variables ------------------------------------------------------------------------
// In place in pthread_cond_t (48 bytes; PTHREAD_COND_INITIALIZER is zeros): a sequence word that
// every signal and broadcast advances, the count of waiters (a signal with none makes no system
// call) and flags from pthread_cond_init's attributes. A waiter reads the sequence while it holds
// the mutex, releases the mutex, and sleeps on the futex unless the sequence moved; a signal that
// came between the release and the sleep moved it, so none is lost. A signal wakes one sleeper,
// a broadcast all of them; wake-ups may be spurious, as POSIX allows (callers loop on their
// predicate). The mutex is released and retaken through the calls above, so a condition variable
// works with any private mutex, glibc's included.
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

}  // namespace

// --- the interposed calls ------------------------------------------------------------------------

SPINWISE_EXPORT int pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* a) noexcept {
  const errno_keeper keep;
  const int rc = SPINWISE_REAL(pthread_mutex_init)(m, a);
  if (rc != 0 || current_kind() == k_glibc || type_of(m) == mtype::glibc) return rc;
  std::memset(reinterpret_cast<char*>(m) + kLockOffset, 0, 16);  // glibc's init zeroed the rest
  return 0;
}

SPINWISE_EXPORT int pthread_mutex_destroy(pthread_mutex_t* m) noexcept {
  const errno_keeper keep;
  if (current_kind() == k_glibc || type_of(m) == mtype::glibc) return SPINWISE_REAL(pthread_mutex_destroy)(m);
  // Nothing to release. The probe of a normal mutex (a try_lock) is no acquisition: not counted.
  ++tl_inside;
  const int rc = on_mutex(m, [m](auto ops) noexcept { return ops.destroy(m); });
  --tl_inside;
  return rc;
}

SPINWISE_EXPORT int pthread_mutex_lock(pthread_mutex_t* m) noexcept {
  const errno_keeper keep;
  const int rc = on_mutex(m, [m](auto ops) noexcept { return ops.lock(m); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_mutex_lock)(m);
}

SPINWISE_EXPORT int pthread_mutex_trylock(pthread_mutex_t* m) noexcept {
  const errno_keeper keep;
  const int rc = on_mutex(m, [m](auto ops) noexcept { return ops.trylock(m); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_mutex_trylock)(m);
}

SPINWISE_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc = on_mutex(m, [m, at](auto ops) noexcept { return ops.timedlock(m, CLOCK_REALTIME, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_mutex_timedlock)(m, at);
}

SPINWISE_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock,
                                            const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc = on_mutex(m, [m, clock, at](auto ops) noexcept { return ops.timedlock(m, clock, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_mutex_clocklock)(m, clock, at);
}

SPINWISE_EXPORT int pthread_mutex_unlock(pthread_mutex_t* m) noexcept {
  const errno_keeper keep;
  const int rc = on_mutex(m, [m](auto ops) noexcept { return ops.unlock(m); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_mutex_unlock)(m);
}

SPINWISE_EXPORT int pthread_rwlock_init(pthread_rwlock_t* rw, const pthread_rwlockattr_t* a) noexcept {
  const errno_keeper keep;
  const int rc = SPINWISE_REAL(pthread_rwlock_init)(rw, a);
  if (rc != 0 || current_kind() == k_glibc || rw_is_glibc(rw)) return rc;
  std::memset(static_cast<void*>(rw), 0, 24);
  writer_of(rw).store(0, std::memory_order_relaxed);
  return 0;
}

SPINWISE_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  if (current_kind() == k_glibc || rw_is_glibc(rw)) return SPINWISE_REAL(pthread_rwlock_destroy)(rw);
  return 0;
}

SPINWISE_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw](auto ops) noexcept { return ops.rdlock(rw); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_rdlock)(rw);
}

SPINWISE_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw](auto ops) noexcept { return ops.tryrdlock(rw); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_tryrdlock)(rw);
}

SPINWISE_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* rw, const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc =
      on_rwlock(rw, [rw, at](auto ops) noexcept { return ops.timedrdlock(rw, CLOCK_REALTIME, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_timedrdlock)(rw, at);
}

SPINWISE_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* rw, clockid_t clock,
                                               const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw, clock, at](auto ops) noexcept { return ops.timedrdlock(rw, clock, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_clockrdlock)(rw, clock, at);
}

SPINWISE_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw](auto ops) noexcept { return ops.wrlock(rw); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_wrlock)(rw);
}

SPINWISE_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw](auto ops) noexcept { return ops.trywrlock(rw); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_trywrlock)(rw);
}

SPINWISE_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* rw, const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc =
      on_rwlock(rw, [rw, at](auto ops) noexcept { return ops.timedwrlock(rw, CLOCK_REALTIME, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_timedwrlock)(rw, at);
}

SPINWISE_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* rw, clockid_t clock,
                                               const timespec* at) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw, clock, at](auto ops) noexcept { return ops.timedwrlock(rw, clock, at); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_clockwrlock)(rw, clock, at);
}

SPINWISE_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* rw) noexcept {
  const errno_keeper keep;
  const int rc = on_rwlock(rw, [rw](auto ops) noexcept { return ops.unlock(rw); });
  return rc >= 0 ? rc : SPINWISE_REAL(pthread_rwlock_unlock)(rw);
}

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
  cond_state& s = cond_of(c);
  s.seq.fetch_add(1, std::memory_order_seq_cst);
  if (s.waiters.load(std::memory_order_seq_cst) != 0) futex_op(s.seq, FUTEX_WAKE, 1, nullptr);
  return 0;
}

SPINWISE_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) noexcept {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return SPINWISE_REAL(pthread_cond_broadcast)(c);
  cond_state& s = cond_of(c);
  s.seq.fetch_add(1, std::memory_order_seq_cst);
  if (s.waiters.load(std::memory_order_seq_cst) != 0) futex_op(s.seq, FUTEX_WAKE, INT_MAX, nullptr);
  return 0;
}

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

// Not noexcept: a cancellation unwinds through it (cond_cancelled above).
int cond_wait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const timespec* at) {
  if (at != nullptr && (!valid(at) || !supported(clock))) return EINVAL;
  cond_state& s = cond_of(c);
  s.waiters.fetch_add(1, std::memory_order_seq_cst);
  const std::uint32_t seen = s.seq.load(std::memory_order_seq_cst);
  if (const int rc = pthread_mutex_unlock(m); rc != 0) {
    cond_leave(s);
    return rc;  // not the owner (an error-checking mutex): EPERM, as glibc
  }
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
  // Retaken whatever happened: a timed wait returns with the mutex held. A robust mutex's
  // EOWNERDEAD is the caller's to see.
  const int rc = pthread_mutex_lock(m);
  return rc != 0 ? rc : result;
}

// glibc's condition wait releases and retakes the mutex with its own internal calls, which the
// interposer does not see: it can only wait with a mutex that is glibc's too. A process-shared
// condition variable with a private mutex (of no use across processes) gets EINVAL, not a hang.
bool glibc_mutex(pthread_mutex_t* m) noexcept {
  return current_kind() == k_glibc || type_of(m) == mtype::glibc;
}

clockid_t cond_clock(pthread_cond_t* c) noexcept {
  return (cond_of(c).flags & kCondMonotonic) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}
}  // namespace

SPINWISE_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_wait)(c, m) : EINVAL;
  return cond_wait(c, m, CLOCK_REALTIME, nullptr);
}

SPINWISE_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const timespec* at) {
  const errno_keeper keep;
  if (cond_is_glibc(c)) return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_timedwait)(c, m, at) : EINVAL;
  return cond_wait(c, m, cond_clock(c), at);
}

SPINWISE_EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                           const timespec* at) {
  const errno_keeper keep;
  if (cond_is_glibc(c))
    return glibc_mutex(m) ? SPINWISE_REAL(pthread_cond_clockwait)(c, m, clock, at) : EINVAL;
  return cond_wait(c, m, clock, at);
}
