#pragma once
// What the thread-safety cases share (good.cpp, bad.cpp, shared_good.cpp): a minimal annotated
// shared lock, and data guarded by a shared lock, read under S and written under X.
#include <spinwise/spinwise.hpp>

// A minimal annotated shared lock, so the shared guards are checked without the shared locks.
class SPINWISE_CAPABILITY("mutex") fake_shared_mutex {
 public:
  void lock() SPINWISE_ACQUIRE() {}
  void unlock() SPINWISE_RELEASE() {}
  void lock_shared() SPINWISE_ACQUIRE_SHARED() {}
  void unlock_shared() SPINWISE_RELEASE_SHARED() {}
};

// Correct uses of a shared lock L. Only the members a case calls are instantiated, so
// fake_shared_mutex (no try_*) serves for read() and write().
template <class L>
struct config {
  L rw;
  int value SPINWISE_GUARDED_BY(rw) = 0;

  int read() SPINWISE_EXCLUDES(rw) {
    spinwise::shared_lock_guard<L> g(rw);
    return value;
  }
  int read_manual() SPINWISE_EXCLUDES(rw) {
    rw.lock_shared();
    const int v = value;
    rw.unlock_shared();
    return v;
  }
  bool read_try() SPINWISE_EXCLUDES(rw) {
    if (!rw.try_lock_shared()) return false;
    const bool odd = (value & 1) != 0;
    rw.unlock_shared();
    return odd;
  }
  void write(int v) SPINWISE_EXCLUDES(rw) {
    spinwise::lock_guard<L> g(rw);
    value = v;
  }
  bool write_try(int v) SPINWISE_EXCLUDES(rw) {
    if (!rw.try_lock()) return false;
    value = v;
    rw.unlock();
    return true;
  }
};
