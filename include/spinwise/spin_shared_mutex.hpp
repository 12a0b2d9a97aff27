#pragma once
// spin_shared_mutex: a writer-preferring spin reader-writer lock in one 64-bit word
// (SharedTimedLockable). Called rw_spinlock before 0.2.0; that name stays as an alias (rw_spinlock.hpp).
//
// Readers share, writers exclude everyone; writers are preferred, and a reader queued behind them
// that spent its spin budget starts a readers' turn that writers wait out, so neither side
// starves: the protocol, its state diagram and its model are detail/rw_protocol.hpp's, shared with
// hybrid_shared_mutex. This lock is that protocol with the wait below.
//
// Waiting spins through the Policy (rounds of randomized relax delays), then yields between
// polls for as long as it waits: progress when threads outnumber CPUs, without parking.
//
// When not to use it: critical sections that block, allocate or run long (use
// hybrid_shared_mutex, which parks); read-mostly data whose readers are so many that the shared
// counter's cache line is the bottleneck (a seqlock or a sharded lock scales, this does not).
// Do not take the lock exclusively while holding it shared (the writer waits for itself).
// Cost: lock_shared and unlock_shared are one locked RMW each on the same line (CAS, fetch_sub);
// lock is one CAS and unlock one fetch_sub, uncontended. 8 bytes.
//
// Lock word: detail/rw_word.hpp (W, S, readers inside, queued readers; no flags of its own).

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "spinwise/detail/rw_protocol.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// How a spin_shared_mutex waiter waits (detail/rw_protocol.hpp's Wait): Policy rounds, then a
// yield per poll (spin_then_yield); nobody sleeps, so a release is one RMW and wakes nobody. Its
// waits cannot give up: a timed call neither reserves nor queues, it polls try_lock /
// try_lock_shared (lock_shell.hpp's poll_until).
struct rw_spin_wait : rw_wait_kind<2, false, spin_then_yield> {
  std::atomic<std::uint64_t> state_{0};

  void release() noexcept {
    // (W): 1 -> 0; release pairs with the acquire of the next writer's or reader's CAS.
    state_.fetch_sub(word::kWriter, std::memory_order_release);
  }
  void release_shared() noexcept {
    // (readers): n -> n-1; release pairs with the acquire of the writer that drains them.
    state_.fetch_sub(word::kReaderOne, std::memory_order_release);
  }
  bool leave_queue(std::uint64_t& s, std::uint64_t next) noexcept {
    return state_.compare_exchange_weak(s, next, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // A round while the budget lasts (ended early once ready(word) holds, where the policy hands
  // off promptly), then a yield.
  template <class Waiter, class Ready, class Deadline>
  void pause(Waiter& wt, rw_role, Ready ready, const Deadline&) noexcept {
    wt.pause([this, ready] { return ready(state_.load(std::memory_order_relaxed)); });
  }
};

}  // namespace detail

template <class Policy, class Stats = no_stats>
using spin_shared_mutex_t = detail::shared_lock_shell<detail::rw_raw<Policy, detail::rw_spin_wait>, Stats>;

struct spin_shared_mutex_tag;

// The default policy is time_policy: InnoDB's randomized rounds with the unit in nanoseconds, so
// the spin budget (and with it how long a reader waits before it asks for its turn) is the same
// time on every CPU, under spin_shared_mutex's own knobs.
using spin_shared_mutex = spin_shared_mutex_t<time_policy<spin_shared_mutex_tag>>;

static_assert(sizeof(spin_shared_mutex) == 8, "spin_shared_mutex is one 64-bit word");
static_assert(sizeof(spin_shared_mutex::with_stats<struct spin_shared_mutex_tag>) == 8,
              "statistics live outside the lock");
static_assert(std::is_nothrow_default_constructible_v<spin_shared_mutex>);
static_assert(std::is_same_v<spin_shared_mutex::with_stats<struct spin_shared_mutex_tag>::policy,
                             spin_shared_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
