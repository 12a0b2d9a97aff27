#pragma once
// The relax table: what one relax instruction costs on each CPU, and a wait given in nanoseconds
// converted into relax instructions on the calling CPU with it.
//
// This is what makes spin budgets portable: "spin 650 ns" is the same wait on a Broadwell
// (PAUSE ~4 ns), a Skylake (PAUSE ~45 ns) and an Emerald Rapids (PAUSE ~13 ns), where "spin 50
// PAUSEs" is not. The cost per relax comes from, in order:
//   1. a per-CPU table installed by a calibration profile (spinwise::load_profile, or
//      install_relax_ns() directly), valid for the relax kind it was measured with;
//   2. otherwise a quick measurement of the active kind on the first CPU that asks (well under a
//      millisecond, once per kind per process), used for every CPU.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sched.h>
#endif

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/process_state.hpp"

namespace spinwise {

namespace detail {

// The table lives in process() (detail/process_state.hpp): relax_ns_cpu[], 0 = unknown, written by
// install_relax_ns / clear_relax_ns and read on the slow path of a wait; relax_ns_fallback, the
// profile's value for other CPUs; relax_ns_kind, the kind the table describes; relax_ns_quick[],
// the quick measurement per kind. kMaxRelaxCpus is defined there too.

inline int current_cpu() noexcept {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// The cheapest relax a table may say: the floor quick_relax_ns and profile loading already apply
// (below the counter's resolution). A cost far below it would convert a check interval into
// billions of relaxes, issued before a delay first reads its counter or asks until().
inline constexpr double kMinRelaxNs = 0.05;

inline bool plausible_relax_ns(double ns) noexcept {
  return std::isfinite(ns) && ns >= kMinRelaxNs && ns <= 100'000.0;
}

}  // namespace detail

// Times `kind` on the calling CPU against steady_clock: 9 trials of 256 relaxes, median.
// About 30 us with a 13 ns PAUSE, 100 us with Skylake's 43 ns. Never returns less than 0.05 ns.
inline double quick_relax_ns(relax_kind kind) noexcept {
  using clock = std::chrono::steady_clock;
  constexpr int kTrials = 9;
  constexpr std::uint32_t kRelaxes = 256;
  double overhead = 1e30;
  for (int i = 0; i < 8; ++i) {
    const auto a = clock::now();
    const auto b = clock::now();
    overhead = std::min(overhead, std::chrono::duration<double, std::nano>(b - a).count());
  }
  double per[kTrials];
  cpu_relax_n(kind, kRelaxes);  // warm-up
  for (double& p : per) {
    const auto t0 = clock::now();
    cpu_relax_n(kind, kRelaxes);
    const auto t1 = clock::now();
    p = std::max(0.0, std::chrono::duration<double, std::nano>(t1 - t0).count() - overhead) / kRelaxes;
  }
  std::sort(per, per + kTrials);
  return std::max(per[kTrials / 2], detail::kMinRelaxNs);
}

// Nanoseconds one relax of the active kind takes on the calling CPU.
inline double relax_ns_here() noexcept {
  const relax_kind kind = active_relax();
  const auto k = static_cast<std::uint8_t>(kind);
  if (detail::process().relax_ns_kind.load(std::memory_order_acquire) == k) {
    const int cpu = detail::current_cpu();
    if (cpu >= 0 && static_cast<std::size_t>(cpu) < kMaxRelaxCpus) {
      const float v = detail::process().relax_ns_cpu[cpu].load(std::memory_order_relaxed);
      if (v > 0.0f) return v;
    }
    const float f = detail::process().relax_ns_fallback.load(std::memory_order_relaxed);
    if (f > 0.0f) return f;
  }
  std::atomic<float>& quick = detail::process().relax_ns_quick[k % detail::kRelaxKinds];
  float q = quick.load(std::memory_order_relaxed);
  if (SPINWISE_UNLIKELY(q == 0.0f)) {
    q = static_cast<float>(quick_relax_ns(kind));
    quick.store(q, std::memory_order_relaxed);  // racing first callers store similar values
  }
  return q;
}

// Relax instructions that take about `ns` on the calling CPU (rounded; 0 for ns <= 0).
inline std::uint32_t relaxes_for_ns(double ns) noexcept {
  if (!(ns > 0.0)) return 0;
  const double n = ns / relax_ns_here() + 0.5;
  return n >= 4'294'967'295.0 ? 0xffffffffu : static_cast<std::uint32_t>(n);
}

// Installs per-CPU costs of `kind` (ns per relax; 0 = not measured, use `fallback_ns`).
// All or nothing: returns false and changes nothing if the kind is not supported here, if there
// are more CPUs than kMaxRelaxCpus, or if any value is not finite, below kMinRelaxNs (other than
// 0 in the table) or over 100 us.
inline bool install_relax_ns(relax_kind kind, const double* ns_by_cpu, std::size_t cpus,
                             double fallback_ns) noexcept {
  if (!relax_supported(kind) || cpus > kMaxRelaxCpus || (cpus > 0 && ns_by_cpu == nullptr)) return false;
  if (!detail::plausible_relax_ns(fallback_ns)) return false;
  for (std::size_t i = 0; i < cpus; ++i) {
    if (ns_by_cpu[i] != 0.0 && !detail::plausible_relax_ns(ns_by_cpu[i])) return false;
  }
  // Readers check the kind first: hide the table while it changes.
  detail::process().relax_ns_kind.store(detail::kRelaxUnresolved, std::memory_order_relaxed);
  for (std::size_t i = 0; i < kMaxRelaxCpus; ++i) {
    detail::process().relax_ns_cpu[i].store(i < cpus ? static_cast<float>(ns_by_cpu[i]) : 0.0f,
                                            std::memory_order_relaxed);
  }
  detail::process().relax_ns_fallback.store(static_cast<float>(fallback_ns), std::memory_order_relaxed);
  detail::process().relax_ns_kind.store(static_cast<std::uint8_t>(kind), std::memory_order_release);
  return true;
}

// Forgets an installed table; waits go back to the quick measurement.
inline void clear_relax_ns() noexcept {
  detail::process().relax_ns_kind.store(detail::kRelaxUnresolved, std::memory_order_release);
}

// True when a table for the active relax kind is installed.
inline bool relax_ns_installed() noexcept {
  return detail::process().relax_ns_kind.load(std::memory_order_acquire) ==
         static_cast<std::uint8_t>(active_relax());
}

}  // namespace spinwise
