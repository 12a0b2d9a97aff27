#pragma once
// The locks spinwise is measured against, each behind the std shape (lock / unlock, and
// lock_shared / unlock_shared for the shared ones) so one benchmark template drives them all.
//
// A peer whose library was not found at configure time is compiled out here
// (SPINWISE_BENCH_HAVE_TBB, SPINWISE_BENCH_HAVE_ABSL); lock_list.hpp says so at run time.

#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "spinwise/arch.hpp"
#include "spinwise/thread_annotations.hpp"

#if SPINWISE_BENCH_HAVE_TBB
#include <oneapi/tbb/queuing_mutex.h>
#include <oneapi/tbb/spin_mutex.h>
#include <oneapi/tbb/spin_rw_mutex.h>
#endif
#if SPINWISE_BENCH_HAVE_ABSL
#include <absl/synchronization/mutex.h>
#endif

namespace spinwise::bench {

[[noreturn]] inline void die(const char* what, int err) {
  std::fprintf(stderr, "spinwise-bench: %s failed (error %d)\n", what, err);
  std::abort();
}

// The floor for an uncontended lock: one locked exchange to take it, one plain store to drop it.
// Nothing can be cheaper and still be a lock. Not a usable lock: it never waits.
class xchg_floor {
 public:
  void lock() noexcept { (void)word_.exchange(1, std::memory_order_acquire); }  // 0 -> 1; pairs with unlock
  void unlock() noexcept { word_.store(0, std::memory_order_release); }         // 1 -> 0

 private:
  std::atomic<int> word_{0};
};

// The test-and-test-and-set lock of the textbooks: exchange, and while that fails, poll with a
// plain load and one relax (PAUSE on x86, the active relax kind elsewhere) per poll. No backoff, no
// yield: what spinwise's policies are meant to improve on.
class textbook_ttas {
 public:
  void lock() noexcept {
    // 0 -> 1; pairs with the release store in unlock().
    while (word_.exchange(1, std::memory_order_acquire) != 0) {
      while (word_.load(std::memory_order_relaxed) != 0) spinwise::cpu_relax();
    }
  }
  void unlock() noexcept { word_.store(0, std::memory_order_release); }  // 1 -> 0

 private:
  std::atomic<int> word_{0};
};

// glibc's pthread_spinlock_t: test-and-set with a relaxed poll, never yields.
class pthread_spin {
 public:
  pthread_spin() {
    if (const int e = pthread_spin_init(&s_, PTHREAD_PROCESS_PRIVATE)) die("pthread_spin_init", e);
  }
  ~pthread_spin() { pthread_spin_destroy(&s_); }
  pthread_spin(const pthread_spin&) = delete;
  pthread_spin& operator=(const pthread_spin&) = delete;
  void lock() noexcept { pthread_spin_lock(&s_); }
  void unlock() noexcept { pthread_spin_unlock(&s_); }

 private:
  pthread_spinlock_t s_;
};

// glibc's adaptive mutex (PTHREAD_MUTEX_ADAPTIVE_NP): spins a bounded, self-tuning number of
// times before parking in futex_wait; the closest thing in glibc to InnoDB's spin-then-park.
class pthread_adaptive {
 public:
  pthread_adaptive() {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    if (const int e = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP))
      die("pthread_mutexattr_settype", e);
    if (const int e = pthread_mutex_init(&m_, &a)) die("pthread_mutex_init", e);
    pthread_mutexattr_destroy(&a);
  }
  ~pthread_adaptive() { pthread_mutex_destroy(&m_); }
  pthread_adaptive(const pthread_adaptive&) = delete;
  pthread_adaptive& operator=(const pthread_adaptive&) = delete;
  void lock() noexcept { pthread_mutex_lock(&m_); }
  void unlock() noexcept { pthread_mutex_unlock(&m_); }

 private:
  pthread_mutex_t m_;
};

#if SPINWISE_BENCH_HAVE_ABSL
// absl::Mutex in this Debian version has only the CamelCase names. (The split lock / unlock is
// what Clang's -Wthread-safety cannot follow through a wrapper; the benchmarks pair them.)
class absl_mutex {
 public:
  void lock() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.Lock(); }
  void unlock() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.Unlock(); }
  void lock_shared() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.ReaderLock(); }
  void unlock_shared() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.ReaderUnlock(); }

 private:
  absl::Mutex m_;
};
#endif

// How a benchmark takes and drops a lock: a holder with explicit acquire() / release(). The default
// is the std shape; a lock driven through a scoped object (oneTBB's queuing_mutex: the queue node
// lives in its scoped_lock, on the waiter's stack) specializes it. The split acquire / release is
// beyond Clang's -Wthread-safety; the benchmark bodies pair them.
template <class M>
class exclusive_holder {
 public:
  explicit exclusive_holder(M& m) noexcept : m_(m) {}
  void acquire() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.lock(); }
  void release() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.unlock(); }

 private:
  M& m_;
};

#if SPINWISE_BENCH_HAVE_TBB
template <>
class exclusive_holder<tbb::queuing_mutex> {
 public:
  explicit exclusive_holder(tbb::queuing_mutex& m) noexcept : m_(m) {}
  void acquire() { s_.acquire(m_); }
  void release() { s_.release(); }

 private:
  tbb::queuing_mutex& m_;
  tbb::queuing_mutex::scoped_lock s_;
};
#endif

template <class M>
class exclusive_guard {
 public:
  explicit exclusive_guard(M& m) : h_(m) { h_.acquire(); }
  ~exclusive_guard() { h_.release(); }
  exclusive_guard(const exclusive_guard&) = delete;
  exclusive_guard& operator=(const exclusive_guard&) = delete;

 private:
  exclusive_holder<M> h_;
};

template <class M>
class shared_guard {
 public:
  explicit shared_guard(M& m) SPINWISE_NO_THREAD_SAFETY_ANALYSIS : m_(m) { m_.lock_shared(); }
  ~shared_guard() SPINWISE_NO_THREAD_SAFETY_ANALYSIS { m_.unlock_shared(); }
  shared_guard(const shared_guard&) = delete;
  shared_guard& operator=(const shared_guard&) = delete;

 private:
  M& m_;
};

}  // namespace spinwise::bench
