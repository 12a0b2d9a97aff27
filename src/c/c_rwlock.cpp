// spinwise::c's rwlocks (spinwise_rwlock_*): the kinds, each a C++ shared lock counting into its
// class c.rwlock.<kind>, in the C object c_lock_object.hpp describes.

#include <cerrno>

#include "c_lock_kinds.hpp"
#include "c_lock_object.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/spin_shared_mutex.hpp"
#include "spinwise/spinwise.h"

namespace {

using namespace spinwise;

SPINWISE_STATS_CLASS(c_rw_hybrid, "c.rwlock.hybrid")
SPINWISE_STATS_CLASS(c_rw_spin, "c.rwlock.spin")

using rwlock_kinds =
    kind_table<kind_row<hybrid_shared_mutex::with_stats<c_rw_hybrid>, SPINWISE_RWLOCK_HYBRID>,
               kind_row<spin_shared_mutex::with_stats<c_rw_spin>, SPINWISE_RWLOCK_SPIN>>;
static_assert(fits<hybrid_shared_mutex::with_stats<c_rw_hybrid>>() &&
              fits<spin_shared_mutex::with_stats<c_rw_spin>>());

// The names, by kind value.
constexpr const char* kRwlockNames[] = {"hybrid", "spin"};

}  // namespace

extern "C" {

int spinwise_rwlock_init(spinwise_rwlock_t* rw, int kind) { return init_lock<rwlock_kinds>(rw, kind); }

int spinwise_rwlock_init_kind(spinwise_rwlock_t* rw, const char* kind_name) {
  return init_lock<rwlock_kinds>(rw, kind_by_name(kRwlockNames, kind_name));
}

int spinwise_rwlock_destroy(spinwise_rwlock_t* rw) { return destroy_lock<rwlock_kinds>(rw); }

const char* spinwise_rwlock_kind_name(const spinwise_rwlock_t* rw) {
  return rw != nullptr && rwlock_kinds::known(kind_of(rw)) ? kRwlockNames[kind_of(rw)] : nullptr;
}

int spinwise_rwlock_rdlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    l->lock_shared();
    return 0;
  });
}

int spinwise_rwlock_tryrdlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept { return l->try_lock_shared() ? 0 : EBUSY; });
}

int spinwise_rwlock_timedrdlock(spinwise_rwlock_t* rw, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<rwlock_kinds>(
      rw, [&](auto* l) noexcept { return l->try_lock_shared_until(at) ? 0 : ETIMEDOUT; });
}

// An unlock of a mode nobody holds is EPERM and changes nothing: the lock word would wrap around
// (readers inside 0 -> 2^20 - 1, or W 0 -> all ones in spin_shared_mutex) and say EBUSY for ever.
int spinwise_rwlock_rdunlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    if (!l->is_locked_shared()) return EPERM;
    l->unlock_shared();
    return 0;
  });
}

int spinwise_rwlock_wrlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    l->lock();
    return 0;
  });
}

int spinwise_rwlock_trywrlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept { return l->try_lock() ? 0 : EBUSY; });
}

int spinwise_rwlock_timedwrlock(spinwise_rwlock_t* rw, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<rwlock_kinds>(rw, [&](auto* l) noexcept { return l->try_lock_until(at) ? 0 : ETIMEDOUT; });
}

int spinwise_rwlock_wrunlock(spinwise_rwlock_t* rw) {
  return with_lock<rwlock_kinds>(rw, [](auto* l) noexcept {
    if (!l->is_locked()) return EPERM;
    l->unlock();
    return 0;
  });
}

}  // extern "C"
