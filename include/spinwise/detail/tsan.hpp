#pragma once
// ThreadSanitizer mutex hooks. Under TSan every spinwise lock reports its lock and unlock events
// (__tsan_mutex_*), so TSan orders accesses through our locks the way it does through
// pthread mutexes and can report lock-order inversions on them. Elsewhere these are empty
// inline functions and the flags are zero: nothing reaches the fast path.
//
// Protocol, per lock operation:
//   lock:     pre_lock(m, f)   ... acquired ...  post_lock(m, f)
//   try_lock: pre_lock(m, f | kTryLock) ... post_lock(m, f | kTryLock | (ok ? 0 : kTryLockFailed))
//   unlock:   pre_unlock(m, f) ... released ...  post_unlock(m, f)
// with f = kReadLock for shared acquisitions. A constexpr constructor cannot announce the mutex;
// TSan creates its state at the first pre_lock.
//
// TSan ignores every access and every synchronization between a pre and its post: the lock's own
// word orders nothing, the annotation does. Code inside that is not the lock's (the statistics
// hooks a wait calls) runs between divert_begin(m) and divert_end(m), where TSan sees it again;
// otherwise what that code orders is lost to TSan (a thread that found its class's statistics
// record only inside the window was, for TSan, unordered after the record's construction, and its
// exit hook's lock of the record's mutex was reported as a race). The wait's policy code (the spin
// budget, the adaptive policy's tallies) stays inside: it touches only atomics, and what it
// orders it finds again with acquire loads outside the window.

#if defined(__SANITIZE_THREAD__)
#define SPINWISE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPINWISE_TSAN 1
#endif
#endif

#if defined(SPINWISE_TSAN) && defined(__has_include)
#if __has_include(<sanitizer/tsan_interface.h>)
#include <sanitizer/tsan_interface.h>
#define SPINWISE_TSAN_HOOKS 1
#endif
#endif

namespace spinwise::detail::tsan {

#if defined(SPINWISE_TSAN_HOOKS)
inline constexpr unsigned kReadLock = __tsan_mutex_read_lock;
inline constexpr unsigned kTryLock = __tsan_mutex_try_lock;
inline constexpr unsigned kTryLockFailed = __tsan_mutex_try_lock_failed;
inline void pre_lock(const void* m, unsigned f) noexcept { __tsan_mutex_pre_lock(const_cast<void*>(m), f); }
inline void post_lock(const void* m, unsigned f) noexcept {
  __tsan_mutex_post_lock(const_cast<void*>(m), f, 0);
}
inline void pre_unlock(const void* m, unsigned f) noexcept {
  __tsan_mutex_pre_unlock(const_cast<void*>(m), f);
}
inline void post_unlock(const void* m, unsigned f) noexcept {
  __tsan_mutex_post_unlock(const_cast<void*>(m), f);
}
inline void divert_begin(const void* m) noexcept { __tsan_mutex_pre_divert(const_cast<void*>(m), 0); }
inline void divert_end(const void* m) noexcept { __tsan_mutex_post_divert(const_cast<void*>(m), 0); }
inline void destroy(const void* m) noexcept { __tsan_mutex_destroy(const_cast<void*>(m), 0); }
#else
inline constexpr unsigned kReadLock = 0;
inline constexpr unsigned kTryLock = 0;
inline constexpr unsigned kTryLockFailed = 0;
inline void pre_lock(const void*, unsigned) noexcept {}
inline void post_lock(const void*, unsigned) noexcept {}
inline void pre_unlock(const void*, unsigned) noexcept {}
inline void post_unlock(const void*, unsigned) noexcept {}
inline void divert_begin(const void*) noexcept {}
inline void divert_end(const void*) noexcept {}
inline void destroy(const void*) noexcept {}
#endif

}  // namespace spinwise::detail::tsan
