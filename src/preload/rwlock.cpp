// pthread_rwlock_t on the kind's rwlocks (interposer.hpp). Layout, glibc 2.36 (56 bytes): the
// lock in bytes 0-23 (hybrid_shared_mutex 16, spin_shared_mutex 8), the write owner in __pad2
// (offset 40); __shared (process-shared: glibc's) and __flags (the reader or writer preference,
// read here) are glibc's.

#include <new>

#include "interposer.hpp"

namespace spinwise::preload {
namespace {

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
// The lock itself: the profile mode's profile_lock (interposer.hpp) seen with no statistics, so
// that the check below counts nothing.
template <class L>
struct plain_lock {
  using type = L;
};
template <class Off, class Waits, class Hooks>
struct plain_lock<profile_lock<Off, Waits, Hooks>> {
  using type = Off;
};
template <class L>
bool rw_word_ok() noexcept {
  static const bool ok = [] {
    using P = typename plain_lock<L>::type;
    alignas(8) unsigned char bytes[sizeof(P)] = {};
    P* l = new (bytes) P;
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

// A pthread rwlock's calls on lock L, with statistics St (the lock's own, or in the profile mode
// its hooks for an acquisition that did not wait: for the readers the interposer lets in itself),
// made from `caller` (the interposed call's return address: the profile's site of a wait).
template <class L, class St>
struct rw_ops {
  const void* caller;

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
  static int enter(pthread_rwlock_t* rw, TP tp, const void* caller) noexcept {
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
      note_wait_site<L>(caller);
      if (rw_in<L>(rw).try_lock_shared_until(until)) return 0;
    }
  }
  int rdlock(pthread_rwlock_t* rw) const noexcept {
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id()) return EDEADLK;
    const int rc = enter(rw, std::chrono::steady_clock::time_point::max(), caller);
    if (rc == 0) note_read(rw);
    return rc;
  }
  static int tryrdlock(pthread_rwlock_t* rw) noexcept {
    const int rc = try_enter(rw, !prefers_writers(rw));
    if (rc == 0) note_read(rw);
    return rc;
  }
  // A bad clock or deadline: EINVAL before anything else, as glibc's rwlock checks them first.
  int timedrdlock(pthread_rwlock_t* rw, clockid_t clock, const timespec* at) const noexcept {
    if (!supported(clock) || !valid(at)) return EINVAL;
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id()) return EDEADLK;
    const void* from = caller;
    const int rc = with_deadline(clock, *at, [rw, from](auto tp) noexcept { return enter(rw, tp, from); });
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
  int wrlock(pthread_rwlock_t* rw) const noexcept {
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id() || holds_read(rw)) return EDEADLK;
    lock_from(rw_in<L>(rw), caller);
    writer_of(rw).store(self_id(), std::memory_order_relaxed);
    return 0;
  }
  static int trywrlock(pthread_rwlock_t* rw) noexcept {
    if (!rw_in<L>(rw).try_lock()) return EBUSY;
    writer_of(rw).store(self_id(), std::memory_order_relaxed);
    return 0;
  }
  int timedwrlock(pthread_rwlock_t* rw, clockid_t clock, const timespec* at) const noexcept {
    if (!supported(clock) || !valid(at)) return EINVAL;
    if (writer_of(rw).load(std::memory_order_relaxed) == self_id() || holds_read(rw)) return EDEADLK;
    if (rw_in<L>(rw).try_lock()) {
      writer_of(rw).store(self_id(), std::memory_order_relaxed);
      return 0;
    }
    note_wait_site<L>(caller);
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

// Calls f(ops) with the rwlock ops of the process's kind (on_kind), made from caller
// (SPINWISE_CALLER).
// Returns -1 when rw is glibc's (the caller passes it through).
template <class F>
SPINWISE_ALWAYS_INLINE int on_rwlock(pthread_rwlock_t* rw, const void* caller, F&& f) noexcept {
  const int k = current_kind();
  if (k == k_glibc || rw_is_glibc(rw)) return -1;
  return on_kind(k, [caller, &f](auto kind, auto stats) noexcept {
    constexpr int S = decltype(stats)::value;
    return f(
        rw_ops<typename rw_lock_of<decltype(kind)::value, S>::type, hooks_of<preload_rwlock, S>>{caller});
  });
}

}  // namespace
}  // namespace spinwise::preload

using namespace spinwise::preload;

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

SPINWISE_INTERPOSE(pthread_rwlock_t, on_rwlock, pthread_rwlock_rdlock, rdlock)
SPINWISE_INTERPOSE(pthread_rwlock_t, on_rwlock, pthread_rwlock_tryrdlock, tryrdlock)
SPINWISE_INTERPOSE_TIMED(pthread_rwlock_t, on_rwlock, pthread_rwlock_timedrdlock, pthread_rwlock_clockrdlock,
                         timedrdlock)
SPINWISE_INTERPOSE(pthread_rwlock_t, on_rwlock, pthread_rwlock_wrlock, wrlock)
SPINWISE_INTERPOSE(pthread_rwlock_t, on_rwlock, pthread_rwlock_trywrlock, trywrlock)
SPINWISE_INTERPOSE_TIMED(pthread_rwlock_t, on_rwlock, pthread_rwlock_timedwrlock, pthread_rwlock_clockwrlock,
                         timedwrlock)
SPINWISE_INTERPOSE(pthread_rwlock_t, on_rwlock, pthread_rwlock_unlock, unlock)
