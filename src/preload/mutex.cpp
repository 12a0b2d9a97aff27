// pthread_mutex_t on the kind's locks (interposer.hpp). Layout, glibc 2.36 (40 bytes on x86_64,
// 48 on aarch64):
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

#include <climits>
#include <cstring>

#include "interposer.hpp"

namespace spinwise::preload {

namespace {

using mutex_data = decltype(pthread_mutex_t::__data);
constexpr std::size_t kLockOffset = offsetof(mutex_data, __list);
constexpr std::size_t kOwnerOffset = offsetof(mutex_data, __owner);
static_assert(kLockOffset == 24 && sizeof(pthread_mutex_t) >= kLockOffset + 16,
              "glibc's pthread_mutex_t layout");
static_assert(profiled<preload_mutex>::offset == kLockOffset, "the profile's key: the pthread_mutex_t");
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

// A mutex type's calls on kind K's lock L, made from `caller` (the interposed call's return
// address: the profile's site of a wait). Returns pthread's error codes.
template <class L, mtype T>
struct mutex_ops {
  const void* caller;

  int lock(pthread_mutex_t* m) const noexcept {
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) == self_id()) return relock(m);
    }
    lock_from(lock_in<L>(m), caller);
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
  int timedlock(pthread_mutex_t* m, clockid_t clock, const timespec* at) const noexcept {
    if (!supported(clock)) return EINVAL;
    if constexpr (T != mtype::normal) {
      if (owner_of(m).load(std::memory_order_relaxed) == self_id()) return relock(m);
    }
    if (lock_in<L>(m).try_lock()) {
      own(m);
      return 0;
    }
    if (!valid(at)) return EINVAL;  // checked only when the call would wait, as glibc does
    note_wait_site<L>(caller);
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
int on_mutex_typed(mtype t, const void* caller, F&& f) noexcept {
  switch (t) {
    case mtype::recursive:
      return f(mutex_ops<typename L::template of<preload_recursive>, mtype::recursive>{caller});
    case mtype::errorcheck:
      return f(mutex_ops<typename L::template of<preload_errorcheck>, mtype::errorcheck>{caller});
    default:
      return f(mutex_ops<typename L::template of<preload_mutex>, mtype::normal>{caller});
  }
}

template <int K, int S>
struct kind_locks {
  template <class Class>
  using of = typename mutex_lock_of<K, Class, S>::type;
};

// Calls f(ops) with the ops of m's type on the process's kind (on_kind), made from caller
// (SPINWISE_CALLER).
// Returns -1 when m is glibc's (the caller passes it through).
template <class F>
SPINWISE_ALWAYS_INLINE int on_mutex(pthread_mutex_t* m, const void* caller, F&& f) noexcept {
  const int k = current_kind();
  const mtype t = type_of(m);
  if (k == k_glibc || t == mtype::glibc) return -1;
  return on_kind(k, [t, caller, &f](auto kind, auto stats) noexcept {
    return on_mutex_typed<kind_locks<decltype(kind)::value, decltype(stats)::value>>(t, caller, f);
  });
}

}  // namespace

// glibc's condition wait releases and retakes the mutex with its own internal calls, which the
// interposer does not see: it can only wait with a mutex that is glibc's too. A process-shared
// condition variable with a private mutex (of no use across processes) gets EINVAL, not a hang.
bool glibc_mutex(pthread_mutex_t* m) noexcept {
  return current_kind() == k_glibc || type_of(m) == mtype::glibc;
}

}  // namespace spinwise::preload

using namespace spinwise::preload;

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
  ++tl_state.inside;
  const int rc = on_mutex(m, SPINWISE_CALLER, [m](auto ops) noexcept { return ops.destroy(m); });
  --tl_state.inside;
  return rc;
}

SPINWISE_INTERPOSE(pthread_mutex_t, on_mutex, pthread_mutex_lock, lock)
SPINWISE_INTERPOSE(pthread_mutex_t, on_mutex, pthread_mutex_trylock, trylock)
SPINWISE_INTERPOSE_TIMED(pthread_mutex_t, on_mutex, pthread_mutex_timedlock, pthread_mutex_clocklock,
                         timedlock)
SPINWISE_INTERPOSE(pthread_mutex_t, on_mutex, pthread_mutex_unlock, unlock)
