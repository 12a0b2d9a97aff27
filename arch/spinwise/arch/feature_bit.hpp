#pragma once
// A CPU feature bit, read once per process and cached without a guard.
//
// A function-local `static const bool v = probe();` is initialized under __cxa_guard_acquire: a
// thread stopped in the middle of it holds every other thread that asks until it runs again. The
// backends ask on a lock's wait path (the first relax resolves SPINWISE_RELAX, which asks whether
// this CPU has SB or WAITPKG), so a waiter stopped there made every other waiter wait for it: the
// FIFO locks' "no wait for a waiter that does not run" test hung under qemu-aarch64 with
// SPINWISE_RELAX=sb, the second waiter blocked in the guard of has_sb() while the stopped head
// held it (a gdb backtrace showed it: docs/testing.md, "Two waits on a stopped thread"). Here
// racing first callers each run the probe and store the same answer; the cache is
// constant-initialized, so there is no guard.
//
// Included by the backends that probe a CPU feature (x86_64, aarch64).

#include <atomic>

namespace spinwise::arch::detail {

template <bool (*Probe)() noexcept>
inline bool feature_bit() noexcept {
  static std::atomic<signed char> cached{-1};  // -1: not probed yet
  signed char v = cached.load(std::memory_order_relaxed);
  if (v < 0) {
    v = Probe() ? 1 : 0;
    cached.store(v, std::memory_order_relaxed);
  }
  return v != 0;
}

}  // namespace spinwise::arch::detail
