#pragma once
// cpu_relaxer, the default Relax of every wait policy (wait_policy.hpp), and what a Relax is.

#include <cstdint>

#include "spinwise/arch.hpp"

namespace spinwise {

// The default Relax of every policy: n relax instructions of the active backend kind.
// A Relax is any type with `static void relax_n(std::uint32_t n) noexcept`. It may also have
// `static double relax_ns() noexcept`, the time one of its relaxes takes on the calling CPU; the
// time-based policies then convert nanoseconds with it instead of spinwise::relax_ns_here()
// (an emulated Broadwell PAUSE must be converted at its own length, not the host's).
struct cpu_relaxer {
  static void relax_n(std::uint32_t n) noexcept { cpu_relax_n(n); }
};

}  // namespace spinwise
