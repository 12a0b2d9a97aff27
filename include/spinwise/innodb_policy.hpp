#pragma once
// innodb_policy: MySQL InnoDB's spin wait, exactly (MySQL 8.0 ut0mutex.h is_free / ut_delay).
//
// A waiter polls the lock word with a plain load and, while it is busy, waits
//     uniform integer in [0, spin_wait_delay) x pause_multiplier   relax instructions
// per round, for up to spin_loops rounds; then a spin lock yields between polls and a hybrid lock
// yields once and parks. spin_wait_delay = 0 means no delay at all (MySQL's ut_delay(0)).
//
// When not to use it: on any CPU newer than the one your settings were tuned on. The unit is an
// instruction count, and a relax instruction's cost moved under it: 50 PAUSEs were ~0.2 us before
// Skylake, ~0.65 us on an Emerald Rapids KVM guest (bench/results/calibration-vms/README.md) and
// ~2.8 us on Skylake (14x). That is the incident spinwise exists for (README). Use it to replay a
// MySQL configuration, or to migrate one; time_policy is the same shape with the unit in
// nanoseconds.
//
// Cost per round: one or two relaxed loads of a read-mostly knob word, one thread-local PRNG step
// (no shared line, no division), then the relax loop.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// Defaults and bounds are MySQL's (8.0.16+ for the multiplier).
struct innodb_settings {
  std::uint32_t spin_wait_delay = 6;    // innodb_spin_wait_delay, 0..1000
  std::uint32_t pause_multiplier = 50;  // innodb_spin_wait_pause_multiplier, 1..100
  std::uint32_t spin_loops = 30;        // innodb_sync_spin_loops, 0..kMaxSpinLoops (MySQL: 0..2^32-1)
};

namespace detail {

struct innodb_spec {
  using settings = innodb_settings;
  static constexpr std::size_t kSpinLoops = 2;
  static constexpr std::size_t kCount = 3;
  static constexpr knob_field kFields[kCount] = {
      {"spin_wait_delay", 0, 1000, 6, "innodb spin_wait_delay must be in 0..1000"},
      {"pause_multiplier", 1, 100, 50, "innodb pause_multiplier must be in 1..100"},
      {"spin_loops", 0, kMaxSpinLoops, 30, "innodb spin_loops must be in 0..1000000"},
  };
  static constexpr const char* kUnknownName =
      "unknown innodb knob (known: spin_wait_delay, pause_multiplier, spin_loops)";
  static constexpr const char* cross_check(std::uint64_t) noexcept { return nullptr; }
  static constexpr settings to_settings(std::uint64_t w) noexcept {
    return {knob_get(w, 0), knob_get(w, 1), knob_get(w, 2)};
  }
  static constexpr void from_settings(const settings& s, std::uint32_t* v) noexcept {
    v[0] = s.spin_wait_delay;
    v[1] = s.pause_multiplier;
    v[2] = s.spin_loops;
  }
};

// One round: ut_delay(ut::random_from_interval(0, spin_wait_delay)), i.e. [0, spin_wait_delay)
// x pause_multiplier relaxes, an instruction count (not bounded by the clock: that is this
// policy's definition).
struct innodb_delay {
  template <class Relax>
  static std::uint64_t delay(std::uint64_t w, std::uint32_t) noexcept {
    const std::uint32_t spin_wait_delay = knob_get(w, 0);
    const std::uint32_t units = spin_wait_delay == 0 ? 0 : jitter_below(spin_wait_delay);
    const std::uint32_t n = units * knob_get(w, 1);  // <= 999 x 100: no overflow
    Relax::relax_n(n);
    return n;
  }
};

}  // namespace detail

// Tag = void: the process-wide knobs. Any other Tag: per-field overrides for the locks using this
// Tag, falling back to the process-wide values while unset. Relax: see cpu_relaxer.
template <class Tag = void, class Relax = cpu_relaxer>
struct innodb_policy : detail::policy_base<detail::innodb_spec, Tag, Relax, detail::innodb_delay> {
  static constexpr std::string_view name() noexcept { return "innodb"; }

  static knob_status set_spin_wait_delay(std::uint32_t v) noexcept { return api::set_field(0, v); }
  static knob_status set_pause_multiplier(std::uint32_t v) noexcept { return api::set_field(1, v); }
  static std::uint32_t spin_wait_delay() noexcept { return base::field(0); }
  static std::uint32_t pause_multiplier() noexcept { return base::field(1); }

 private:
  using base = detail::policy_base<detail::innodb_spec, Tag, Relax, detail::innodb_delay>;
  using api = typename base::api;
};

}  // namespace spinwise
