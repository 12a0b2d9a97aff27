// spinwise::c: <spinwise/spinwise.h> over the C++ locks, knobs, profiles and statistics. Nothing
// here is a second implementation: a C lock is a C++ lock living in the C object's storage, a
// knob call is apply_knobs, a report is the runtime's. What is here: the kinds' table, the
// dispatch on a lock's kind byte, the translation of deadlines and errors, and the catch of every
// exception at the boundary. One source a job:
//
//   c_lock_object.hpp  a C lock object: its layout and invariant, the kind table, init, destroy and
//                      the dispatch on the kind byte, deadlines
//   c_api.cpp          the mutex kinds, spinwise_mutex_* and spinwise_recursive_mutex_* (here)
//   c_rwlock.cpp       the rwlock kinds and spinwise_rwlock_*
//   c_runtime.cpp      knobs, profiles and statistics through the runtime; the error codes and the
//                      thread's last message (spinwise_strerror, spinwise_last_message)

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "c_lock_kinds.hpp"
#include "c_lock_object.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/spinwise.h"

namespace {

using namespace spinwise;

// --- the kinds -------------------------------------------------------------------------------

SPINWISE_STATS_CLASS(c_hybrid, "c.hybrid")
SPINWISE_STATS_CLASS(c_adaptive, "c.adaptive")
SPINWISE_STATS_CLASS(c_tas, "c.tas")
SPINWISE_STATS_CLASS(c_ttas, "c.ttas")
SPINWISE_STATS_CLASS(c_ticket, "c.ticket")
SPINWISE_STATS_CLASS(c_mcs, "c.mcs")

// The mutex kinds are c_lock_kinds.hpp's, each counting into its class c.<kind>; the adaptive
// kind's class is one, so every C adaptive mutex learns one budget.
using hybrid_lock = c_kinds::hybrid::lock<c_hybrid>;
using adaptive_lock = c_kinds::adaptive::lock<c_adaptive>;
using tas_lock = c_kinds::tas::lock<c_tas>;
using ttas_lock = c_kinds::ttas::lock<c_ttas>;
using ticket_lock = c_kinds::ticket::lock<c_ticket>;
using mcs_lock = c_kinds::mcs::lock<c_mcs>;

using mutex_kinds =
    kind_table<kind_row<hybrid_lock, SPINWISE_MUTEX_HYBRID>, kind_row<adaptive_lock, SPINWISE_MUTEX_ADAPTIVE>,
               kind_row<tas_lock, SPINWISE_MUTEX_TAS>, kind_row<ttas_lock, SPINWISE_MUTEX_TTAS>,
               kind_row<ticket_lock, SPINWISE_MUTEX_TICKET>, kind_row<mcs_lock, SPINWISE_MUTEX_MCS>>;
static_assert(fits<hybrid_lock>() && fits<adaptive_lock>() && fits<tas_lock>() && fits<ttas_lock>() &&
              fits<ticket_lock>() && fits<mcs_lock>());

// The names, by kind value.
constexpr const auto& kMutexNames = c_kinds::kNames;

// --- the recursive mutex's owner and depth ---------------------------------------------------

// The owner is the thread's process-wide token (c_lock_kinds.hpp, as SQLite's recursive mutexes
// name theirs), not an address of this module's own: a plugin with its own copy of this library
// takes a recursive mutex its host holds on the same thread as the owner it is.
struct recursion {
  std::atomic<const void*> owner;  // nullptr: none; else the owner's this_thread_token(). Written by
                                   // the owner only, so a thread reads its own token here only while
                                   // it owns
  std::uint32_t depth;             // the owner's only
};
static_assert(sizeof(recursion) <= sizeof(spinwise_recursive_mutex_t::owner_) &&
              alignof(recursion) <= alignof(spinwise_recursive_mutex_t));
static_assert(std::atomic<const void*>::is_always_lock_free);

recursion& recursion_of(spinwise_recursive_mutex_t* r) noexcept {
  return *std::launder(reinterpret_cast<recursion*>(r->owner_.bytes));
}

using c_kinds::this_thread_token;

template <class Acquire>
int recursive_acquire(spinwise_recursive_mutex_t* r, Acquire&& acquire) noexcept {
  if (r == nullptr) return EINVAL;
  recursion& rec = recursion_of(r);
  const void* self = this_thread_token();
  if (rec.owner.load(std::memory_order_relaxed) == self) {
    if (rec.depth == UINT32_MAX) return EAGAIN;
    ++rec.depth;
    return 0;
  }
  const int rc = acquire(&r->mutex_);
  if (rc != 0) return rc;
  rec.owner.store(self, std::memory_order_relaxed);  // the mutex orders it for the next owner
  rec.depth = 1;
  return 0;
}
}  // namespace

extern "C" {

// --- mutex -----------------------------------------------------------------------------------

int spinwise_mutex_init(spinwise_mutex_t* m, int kind) { return init_lock<mutex_kinds>(m, kind); }

int spinwise_mutex_init_kind(spinwise_mutex_t* m, const char* kind_name) {
  return init_lock<mutex_kinds>(m, kind_by_name(kMutexNames, kind_name));
}

int spinwise_mutex_destroy(spinwise_mutex_t* m) { return destroy_lock<mutex_kinds>(m); }

const char* spinwise_mutex_kind_name(const spinwise_mutex_t* m) {
  return m != nullptr && mutex_kinds::known(kind_of(m)) ? kMutexNames[kind_of(m)] : nullptr;
}

int spinwise_mutex_lock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept {
    l->lock();
    return 0;
  });
}

int spinwise_mutex_trylock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept { return l->try_lock() ? 0 : EBUSY; });
}

int spinwise_mutex_timedlock(spinwise_mutex_t* m, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return with_lock<mutex_kinds>(m, [&](auto* l) noexcept { return l->try_lock_until(at) ? 0 : ETIMEDOUT; });
}

int spinwise_mutex_unlock(spinwise_mutex_t* m) {
  return with_lock<mutex_kinds>(m, [](auto* l) noexcept {
    if (!l->is_locked()) return EPERM;
    l->unlock();
    return 0;
  });
}

// --- recursive mutex -------------------------------------------------------------------------

int spinwise_recursive_mutex_init(spinwise_recursive_mutex_t* r, int kind) {
  if (r == nullptr) return EINVAL;
  const int rc = spinwise_mutex_init(&r->mutex_, kind);
  if (rc == 0) std::memset(r->owner_.bytes, 0, sizeof r->owner_.bytes);
  return rc;
}

int spinwise_recursive_mutex_init_kind(spinwise_recursive_mutex_t* r, const char* kind_name) {
  if (r == nullptr) return EINVAL;
  const int rc = spinwise_mutex_init_kind(&r->mutex_, kind_name);
  if (rc == 0) std::memset(r->owner_.bytes, 0, sizeof r->owner_.bytes);
  return rc;
}

int spinwise_recursive_mutex_destroy(spinwise_recursive_mutex_t* r) {
  return r == nullptr ? EINVAL : spinwise_mutex_destroy(&r->mutex_);
}

int spinwise_recursive_mutex_lock(spinwise_recursive_mutex_t* r) {
  return recursive_acquire(r, [](spinwise_mutex_t* m) noexcept { return spinwise_mutex_lock(m); });
}

int spinwise_recursive_mutex_trylock(spinwise_recursive_mutex_t* r) {
  return recursive_acquire(r, [](spinwise_mutex_t* m) noexcept { return spinwise_mutex_trylock(m); });
}

int spinwise_recursive_mutex_timedlock(spinwise_recursive_mutex_t* r, const struct timespec* abstime) {
  monotonic_clock::time_point at;
  if (const int rc = to_deadline(abstime, at); rc != 0) return rc;
  return recursive_acquire(
      r, [&](spinwise_mutex_t* m) noexcept { return spinwise_mutex_timedlock(m, abstime); });
}

int spinwise_recursive_mutex_unlock(spinwise_recursive_mutex_t* r) {
  // A destroyed (or never a) mutex is EINVAL, as for every call but init, before the owner test.
  if (r == nullptr || !mutex_kinds::known(kind_of(&r->mutex_))) return EINVAL;
  recursion& rec = recursion_of(r);
  if (rec.owner.load(std::memory_order_relaxed) != this_thread_token()) return EPERM;
  if (--rec.depth != 0) return 0;
  rec.owner.store(nullptr, std::memory_order_relaxed);
  return spinwise_mutex_unlock(&r->mutex_);
}

unsigned spinwise_recursive_mutex_depth(const spinwise_recursive_mutex_t* r) {
  if (r == nullptr) return 0;
  const recursion& rec = recursion_of(const_cast<spinwise_recursive_mutex_t*>(r));
  return rec.owner.load(std::memory_order_relaxed) == this_thread_token() ? rec.depth : 0u;
}

}  // extern "C"
