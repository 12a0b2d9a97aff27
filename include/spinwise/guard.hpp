#pragma once
// Scoped guards that Clang's thread-safety analysis understands.
//
// libstdc++'s std::lock_guard / std::unique_lock / std::shared_lock carry no annotations, so with
// -Wthread-safety a member GUARDED_BY a spinwise lock looks unguarded under them. These guards
// are the annotated equivalents (with the std ones still usable for everything else):
//
//   spinwise::lock_guard g(mu);         // exclusive, like std::lock_guard
//   spinwise::shared_lock_guard g(rw);  // shared (lock_shared / unlock_shared)
//   spinwise::sx_guard g(latch);         // SX of an sx_lock, with upgrade() / downgrade()
//
// The first two work with any type of the right shape (std::mutex included), sx_guard with an
// sx_lock; all take std::adopt_lock for a lock the caller already holds. With a site, they pass it to a
// spinwise lock for tracking:
//
//   spinwise::lock_guard g(mu, SPINWISE_SITE);

#include <mutex>

#include "spinwise/lock_site.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise {

// The guard `name` holds a Mutex in one mode for a scope: lock_fn / unlock_fn take and drop that
// mode, ACQUIRE / REQUIRES / RELEASE are its thread-safety annotations. The exclusive and the
// shared guard differ in nothing else (a template cannot choose an annotation, so a macro writes
// both).
#define SPINWISE_DETAIL_MODE_GUARD(name, lock_fn, unlock_fn, ACQUIRE, REQUIRES, RELEASE) \
  template <class Mutex>                                                                 \
  class SPINWISE_SCOPED_CAPABILITY name {                                                \
   public:                                                                               \
    using mutex_type = Mutex;                                                            \
                                                                                         \
    explicit name(Mutex& m) ACQUIRE(m) : m_(m) { m_.lock_fn(); }                         \
    name(Mutex& m, lock_site site) ACQUIRE(m) : m_(m) { m_.lock_fn(site); }              \
    name(Mutex& m, std::adopt_lock_t) REQUIRES(m) : m_(m) {}                             \
    ~name() RELEASE() { m_.unlock_fn(); }                                                \
                                                                                         \
    name(const name&) = delete;                                                          \
    name& operator=(const name&) = delete;                                               \
                                                                                         \
   private:                                                                              \
    Mutex& m_;                                                                           \
  }

// Exclusive: lock() / unlock(), as std::lock_guard.
SPINWISE_DETAIL_MODE_GUARD(lock_guard, lock, unlock, SPINWISE_ACQUIRE, SPINWISE_REQUIRES, SPINWISE_RELEASE);
// Shared: lock_shared() / unlock_shared().
SPINWISE_DETAIL_MODE_GUARD(shared_lock_guard, lock_shared, unlock_shared, SPINWISE_ACQUIRE_SHARED,
                           SPINWISE_REQUIRES_SHARED, SPINWISE_RELEASE_GENERIC);
#undef SPINWISE_DETAIL_MODE_GUARD

// Holds SX for a scope: the annotated guard for lock_sx / unlock_sx (S: shared_lock_guard or
// std::shared_lock; X: lock_guard or std::lock_guard). Its upgrade()
// and downgrade() change the latch's mode and the one it records, and it releases the mode it
// holds: X after an upgrade() that no downgrade() followed. Change the mode through the guard: a
// guard whose latch was upgraded behind its back would release SX while X is held, which leaves the
// latch locked for good (sx_lock.hpp's mode checks abort there instead).
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
