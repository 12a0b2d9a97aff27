#pragma once
// How the time-based policies turn nanoseconds into relax counts for a given Relax.

#include <type_traits>

#include "spinwise/relax_time.hpp"

namespace spinwise::detail {

template <class Relax, class = void>
struct has_relax_ns : std::false_type {};
template <class Relax>
struct has_relax_ns<Relax, std::void_t<decltype(Relax::relax_ns())>> : std::true_type {};

// Relaxes of `Relax` per nanosecond on the calling CPU. Called once per wait (its first snooze),
// never per round: relax_ns_here() costs a sched_getcpu and, once per process, a ~30 us
// measurement. A Relax with its own relax_ns() (an emulated PAUSE) is converted at its own length.
template <class Relax>
inline double relaxes_per_ns() noexcept {
  double ns;
  if constexpr (has_relax_ns<Relax>::value) {
    ns = static_cast<double>(Relax::relax_ns());
  } else {
    ns = relax_ns_here();
  }
  return ns > 0.0 ? 1.0 / ns : 1.0;
}

// Relaxes that take about `ns`, given relaxes_per_ns(); saturates instead of overflowing.
inline std::uint32_t relaxes_in(double ns, double per_ns) noexcept {
  const double n = ns * per_ns + 0.5;
  return n >= 4'294'967'295.0 ? 0xffffffffu : static_cast<std::uint32_t>(n);
}

}  // namespace spinwise::detail
