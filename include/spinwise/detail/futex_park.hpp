#pragma once
// Sleeping until a lock word's condition holds, without a lost wake-up: the park/wake protocol of
// hybrid_shared_mutex and sx_lock. (hybrid_mutex sleeps on its lock word itself, Drepper's
// mutex 3; its header carries its own argument.)
//
// A lock word `state` (32 or 64 bits) holds, besides the lock's own fields, a parked bit P per
// kind of sleeper; each kind sleeps on its own 32-bit sequence word `seq`.
//
// A sleeper, in order (park below):
//   1. e = seq.load(acquire)
//   2. read the state; if its condition holds, do not sleep. Else if P is clear, CAS it in
//      (acq_rel); a failed CAS goes back to the start of 2.
//   3. futex_wait(seq, e): the kernel sleeps only while seq == e.
// A waker is whoever makes the condition of some sleeper of that kind true:
//   a. in the same RMW that changes the state, or in a later RMW, it clears P (acq_rel);
//   b. if P was set: seq.fetch_add(1, release), then futex_wake_all(seq) (wake_sleepers below).
//
// Why no wake-up is lost. Take the sleeper's last read of the state in 2 (value V: condition
// false, P set). The condition can only become true by a later RMW, whose waker finds P set and
// wakes, unless some RMW between V and it cleared P, and that clearer bumps seq and wakes.
// Either way a bump B follows V in the state's modification order. If the sleeper's read of seq
// in 1 had seen B, the release/acquire pair would make the clear of P visible to the read in 2
// (message passing): it would not have read V. So e predates B, and futex_wait either returns
// at once (seq != e) or sleeps and is woken by B's futex_wake_all. Wake-ups go to all sleepers,
// so none is consumed by a thread that then gives up: a timed-out sleeper just leaves.
//
// The protocol is model-checked with each lock that uses it (tests/models/, docs/model-checking.md).

#include <atomic>
#include <cstdint>

#include "spinwise/detail/futex.hpp"

namespace spinwise::detail {

// Steps 1-3 for a sleeper whose condition is ready(state), until Deadline (detail/deadline.hpp).
// Returns on a wake-up, a spurious return, a timeout, or at once when the condition holds; true
// only if the thread slept in the kernel (statistics count those parks). The caller re-checks.
template <class Word, class Ready, class Deadline>
bool park(std::atomic<Word>& state, std::atomic<std::uint32_t>& seq, Word parked_bit, Ready ready,
          const Deadline& d) noexcept {
  // acquire pairs with the release bump in wake_sleepers().
  const std::uint32_t e = seq.load(std::memory_order_acquire);
  Word s = state.load(std::memory_order_relaxed);
  for (;;) {
    if (ready(s)) return false;
    if (s & parked_bit) break;
    // (P): 0 -> 1; release orders our read of seq before the waker's bump.
    if (state.compare_exchange_weak(s, s | parked_bit, std::memory_order_acq_rel, std::memory_order_relaxed))
      break;
  }
  if constexpr (Deadline::kTimed) {
    return futex_wait_for(seq, e, d.park_limit());
  } else {
    return futex_wait(seq, e);
  }
}

// Step b, for a waker that cleared a parked bit it found set.
inline void wake_sleepers(std::atomic<std::uint32_t>& seq) noexcept {
  // (seq): e -> e+1; release pairs with the sleeper's acquire load of seq.
  seq.fetch_add(1, std::memory_order_release);
  futex_wake_all(seq);
}

}  // namespace spinwise::detail
