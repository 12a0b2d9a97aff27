#pragma once
// The locks spinwise-stress can put under load, chosen by name at run time: spinwise's, from the
// tools' catalogue (bench/spinwise_locks.hpp), and std::mutex and std::shared_mutex.
//
// Every spinwise lock is instantiated with the stress Tag (its knobs are set without touching
// the process-wide ones) and the emulated relaxer (so the spin delay is the emulated CPU's), and
// records into the lock class "stress_latch" (<spinwise/lock_stats.hpp>): the run reads its time
// in spin delays, relaxes, contended waits, yields and exact parks from there. A thin wrapper
// around the policy (counted_policy.hpp) adds what the statistics do not count to the thread's
// spin_tally: rounds that delayed, zero-length and preempted rounds, spin episodes, spent
// budgets. A spinwise lock without a statistics policy (lock_stats false; none is today) would
// report no spin time, and spent budgets would stand for its parks. std::mutex and
// std::shared_mutex are the references: they have no policy, and their parks are not counted
// (voluntary context switches show them).
//
// A latch_set is N latches of one type behind one virtual call per operation: a few ns against
// critical sections and work measured in microseconds, and the workload is compiled once instead
// of once per lock type.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spinwise/lock_site.hpp"

namespace spinwise::stress {

// The lock statistics class (<spinwise/lock_stats.hpp>) of the stress locks that take one.
struct stress_latch_class {
  static constexpr std::string_view name = "stress_latch";
};
inline constexpr std::string_view kStressLatchClass = stress_latch_class::name;

// Lock tracking of kStressLatchClass (<spinwise/runtime/lock_watch.hpp>): who holds and who waits
// for each stress lock, for --stuck-after-ms. Settable before any stress lock is used.
void set_stress_tracking(bool on) noexcept;
bool stress_tracking() noexcept;

enum class policy_kind : std::uint8_t { innodb, time, exp_backoff, no_backoff, adaptive, none };

std::string_view to_string(policy_kind p) noexcept;
bool parse_policy(std::string_view s, policy_kind& out) noexcept;

struct lock_info {
  std::string name;
  bool spinwise = false;              // has a wait policy (and class statistics)
  bool shared = false;                // has lock_shared (readers take it shared)
  bool parks = false;                 // sleeps in the kernel once its spin budget is spent (else yields)
  bool lock_stats = false;            // takes a statistics policy: records into kStressLatchClass
  std::vector<policy_kind> policies;  // the first is the default: the library alias's own policy
};
const std::vector<lock_info>& lock_catalog();
const lock_info* find_lock(std::string_view name);

// The lock under test and its knobs; unset knobs keep the policy's documented defaults.
struct lock_choice {
  std::string lock;                   // empty: the scenario's default (workload_config.hpp default_lock)
  std::optional<policy_kind> policy;  // unset: the lock's default policy
  std::optional<std::uint32_t> spin_wait_delay, pause_multiplier, spin_loops, delay_unit_ns;
};

// The policy a choice resolves to (none for the std locks). Throws std::invalid_argument for an
// unknown lock, a policy the lock does not take, or a knob its policy does not have.
policy_kind resolve_policy(const lock_choice& c);

// Sets the stress Tag's knobs to exactly `c`'s (defaults for unset ones), all or nothing.
// Throws std::invalid_argument with the policy's message for an out-of-range value.
void apply_knobs(const lock_choice& c);

// What the adaptive policy of the stress locks has learnt: its budget now, and its decisions since
// the last apply_knobs (which makes each adaptive run learn from scratch).
std::uint32_t adaptive_budget_ns() noexcept;
std::uint64_t adaptive_decisions() noexcept;

// The knob values the stress locks use now, by name, for the resolved policy.
std::vector<std::pair<std::string, std::uint32_t>> effective_knobs(policy_kind p);

class latch_set {
 public:
  virtual ~latch_set() = default;
  virtual std::size_t size() const noexcept = 0;
  virtual bool shared_capable() const noexcept = 0;
  // `site` reaches the locks that take one (their tracked holds and waits name it); the others
  // ignore it.
  virtual bool try_lock(std::size_t i, lock_site site) noexcept = 0;
  virtual void lock(std::size_t i, lock_site site) noexcept = 0;
  virtual void unlock(std::size_t i) noexcept = 0;
  // Exclusive-only locks take these exclusively.
  virtual bool try_lock_shared(std::size_t i, lock_site site) noexcept = 0;
  virtual void lock_shared(std::size_t i, lock_site site) noexcept = 0;
  virtual void unlock_shared(std::size_t i) noexcept = 0;
};

// `n` latches of the chosen lock. Throws std::invalid_argument as resolve_policy does.
std::unique_ptr<latch_set> make_latch_set(const lock_choice& c, std::size_t n);

}  // namespace spinwise::stress
