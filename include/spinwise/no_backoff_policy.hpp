#pragma once
// no_backoff_policy: one relax instruction per poll, the baseline the other policies beat (or not).
//
// Up to spin_loops polls, then yield (spin locks) or yield and park (hybrid locks). Default 1000
// polls: with a 13 ns PAUSE (an Emerald Rapids: bench/results/calibration-vms/README.md) about
// the 15 us budget of time_policy's defaults; on Skylake (43 ns) three times that, since this
// policy counts instructions.
//
// It is also the right policy for FIFO queue locks: a ticket or MCS waiter cannot overtake, so a
// delay only postpones its own turn (and every turn behind it), and its polls cost no coherence
// traffic worth thinning (MCS spins on its own line; a ticket waiter only reads).
//

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

struct no_backoff_settings {
  std::uint32_t spin_loops = 1000;  // 0..kMaxSpinLoops
};

namespace detail {

struct no_backoff_spec {
  using settings = no_backoff_settings;
  static constexpr std::size_t kSpinLoops = 0;
  static constexpr std::size_t kCount = 1;
  static constexpr knob_field kFields[kCount] = {
      {"spin_loops", 0, kMaxSpinLoops, 1000, "no_backoff spin_loops must be in 0..1000000"},
  };
  static constexpr const char* kUnknownName = "unknown no_backoff knob (known: spin_loops)";
  static constexpr const char* cross_check(std::uint64_t) noexcept { return nullptr; }
  static constexpr settings to_settings(std::uint64_t w) noexcept { return {knob_get(w, 0)}; }
  static constexpr void from_settings(const settings& s, std::uint32_t* v) noexcept { v[0] = s.spin_loops; }
};

// One relax per round.
struct no_backoff_delay {
  template <class Relax>
  static std::uint64_t delay(std::uint64_t, std::uint32_t) noexcept {
    Relax::relax_n(1);
    return 1;
  }
};

}  // namespace detail

// Tag and Relax as for innodb_policy, in the same order as every policy (before 0.2.0 this one
// took <Relax, Tag>).
template <class Tag = void, class Relax = cpu_relaxer>
struct no_backoff_policy
    : detail::policy_base<detail::no_backoff_spec, Tag, Relax, detail::no_backoff_delay> {
  static constexpr std::string_view name() noexcept { return "no_backoff"; }
};

}  // namespace spinwise
