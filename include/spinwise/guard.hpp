#pragma once
// Scoped guards that Clang's thread-safety analysis understands.
//
// libstdc++'s std::lock_guard / std::unique_lock / std::shared_lock carry no annotations, so with
// -Wthread-safety a member GUARDED_BY a spinwise lock looks unguarded under them. These guards
// are the annotated equivalents (with the std ones still usable for everything else):
//
//   spinwise::lock_guard g(mu);         // exclusive, like std::lock_guard
//   spinwise::shared_lock_guard g(rw);  // shared (lock_shared / unlock_shared)
//
// Both work with any type of the right shape (std::mutex included) and take std::adopt_lock for a
// lock the caller already holds. With a site, they pass it to a spinwise lock for tracking:
//
//   spinwise::lock_guard g(mu, SPINWISE_SITE);

#include <mutex>

#include "spinwise/lock_site.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise {

template <class Mutex>
class SPINWISE_SCOPED_CAPABILITY lock_guard {
 public:
  using mutex_type = Mutex;

  explicit lock_guard(Mutex& m) SPINWISE_ACQUIRE(m) : m_(m) { m_.lock(); }
  lock_guard(Mutex& m, lock_site site) SPINWISE_ACQUIRE(m) : m_(m) { m_.lock(site); }
  lock_guard(Mutex& m, std::adopt_lock_t) SPINWISE_REQUIRES(m) : m_(m) {}
  ~lock_guard() SPINWISE_RELEASE() { m_.unlock(); }

  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  Mutex& m_;
};

template <class Mutex>
class SPINWISE_SCOPED_CAPABILITY shared_lock_guard {
 public:
  using mutex_type = Mutex;

  explicit shared_lock_guard(Mutex& m) SPINWISE_ACQUIRE_SHARED(m) : m_(m) { m_.lock_shared(); }
  shared_lock_guard(Mutex& m, lock_site site) SPINWISE_ACQUIRE_SHARED(m) : m_(m) { m_.lock_shared(site); }
  shared_lock_guard(Mutex& m, std::adopt_lock_t) SPINWISE_REQUIRES_SHARED(m) : m_(m) {}
  ~shared_lock_guard() SPINWISE_RELEASE_GENERIC() { m_.unlock_shared(); }

  shared_lock_guard(const shared_lock_guard&) = delete;
  shared_lock_guard& operator=(const shared_lock_guard&) = delete;

 private:
  Mutex& m_;
};

}  // namespace spinwise
