#pragma once
// x86-64 backend: PAUSE by default, TPAUSE where CPUID says WAITPKG, counter = RDTSC.
//
// Include only through <spinwise/arch.hpp>, which decides whether this backend applies.
//
// What PAUSE costs in TSC ticks, nanoseconds and core cycles on one Emerald Rapids KVM guest, as
// spinwise-calibrate measured it: bench/results/calibration-vms/README.md. TSC ticks are not core
// cycles (the TSC ticks at a fixed rate, the core at its own clock): the tool reports both.

#include <cpuid.h>
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "spinwise/arch/feature_bit.hpp"
#include "spinwise/arch/relax_kind.hpp"

namespace spinwise::arch::x86_64 {

inline constexpr std::string_view kName = "x86_64";
inline constexpr std::string_view kCounterName = "tsc";
// Adjacent-line prefetch pulls cache lines in pairs, so false sharing reaches 128 bytes.
inline constexpr std::size_t kPad = 128;
inline constexpr relax_kind kDefaultRelax = relax_kind::pause;
// TPAUSE deadline, in TSC ticks: a few PAUSEs' worth, so a TPAUSE relax stays a short wait.
inline constexpr std::uint32_t kTpauseTicks = 100;

namespace detail {

inline bool cpuid_bit(unsigned leaf, unsigned subleaf, int reg, unsigned bit) noexcept {
  unsigned r[4] = {0, 0, 0, 0};
  if (static_cast<unsigned>(__get_cpuid_max(leaf & 0x80000000u, nullptr)) < leaf) return false;
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  return (r[reg] >> bit) & 1u;
}

// CPUID.(EAX=7,ECX=0):ECX[5] = WAITPKG (UMONITOR/UMWAIT/TPAUSE).
inline bool probe_waitpkg() noexcept { return cpuid_bit(7, 0, 2, 5); }
inline bool has_waitpkg() noexcept { return arch::detail::feature_bit<probe_waitpkg>(); }

__attribute__((always_inline)) inline void tpause_once() noexcept {
  // ECX[0] = 1 selects C0.1, the lighter state with the faster wake-up.
  const std::uint64_t deadline = __rdtsc() + kTpauseTicks;
  const auto lo = static_cast<std::uint32_t>(deadline);
  const auto hi = static_cast<std::uint32_t>(deadline >> 32);
  // tpause %ecx, encoded by hand so no -mwaitpkg is needed to build.
  asm volatile(".byte 0x66, 0x0f, 0xae, 0xf1" : : "c"(1u), "a"(lo), "d"(hi) : "memory", "cc");
}

}  // namespace detail

inline bool supports(relax_kind k) noexcept {
  switch (k) {
    case relax_kind::none:
    case relax_kind::pause:
      return true;
    case relax_kind::tpause:
      return detail::has_waitpkg();
    default:
      return false;
  }
}

__attribute__((always_inline)) inline void relax(relax_kind k) noexcept {
  if (k == relax_kind::pause) {
    _mm_pause();
  } else if (k == relax_kind::tpause) {
    detail::tpause_once();
  } else {
    asm volatile("" ::: "memory");
  }
}

inline void relax_n(relax_kind k, std::uint32_t n) noexcept {
  // The branch on the kind sits outside the loop: the loop body is the bare instruction.
  if (k == relax_kind::pause) {
    for (std::uint32_t i = 0; i < n; ++i) _mm_pause();
  } else if (k == relax_kind::tpause) {
    for (std::uint32_t i = 0; i < n; ++i) detail::tpause_once();
  } else {
    for (std::uint32_t i = 0; i < n; ++i) asm volatile("" ::: "memory");
  }
}

__attribute__((always_inline)) inline std::uint64_t read_counter() noexcept { return __rdtsc(); }

// How often a clock-bounded delay (time_policy, exp_backoff_policy) reads the counter: every
// 100 ns of relaxes. RDTSC costs some tens of core cycles back to back (it is not serializing,
// so it overlaps the PAUSEs around it; one guest's figure: bench/results/starvation/README.md),
// so a read per 100 ns keeps the reads a small share of the loop while a delay ends within 100 ns
// of its deadline.
inline constexpr double kDelayCheckNs = 100;

// How often a delay asks a lock that polls eagerly (detail::poll_eagerly: ttas_mutex, tas_mutex)
// whether its word looks free: every 25 ns of relaxes, between the counter reads. The poll is a
// relaxed load of a line that stays in the waiter's cache until the holder writes it. On a 2-vCPU
// KVM guest (Xeon model 167) it made ttas_mutex's handoff quicker and did not cost its contended
// throughput (the landed change against the code before, one interleaved run); hybrid_mutex lost
// throughput polled that often and keeps the check interval (bench/results/full-runs/README.md,
// the model 167 run).
inline constexpr double kDelayPollNs = 25;

// CPUID.80000007H:EDX[8]: the TSC ticks at a constant rate in every P-, C- and T-state.
inline bool probe_invariant_tsc() noexcept { return detail::cpuid_bit(0x80000007u, 0, 3, 8); }
inline bool counter_invariant() noexcept { return arch::detail::feature_bit<probe_invariant_tsc>(); }

// TSC frequency in Hz. CPUID leaf 0x15 gives it on bare metal; KVM guests often report zero
// there, so otherwise the TSC is timed against CLOCK_MONOTONIC for about a millisecond, once.
inline std::uint64_t measure_counter_frequency() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) >= 0x15) {
    __cpuid_count(0x15, 0, a, b, c, d);
    if (a != 0 && b != 0 && c != 0) return static_cast<std::uint64_t>(c) * b / a;
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const std::uint64_t c0 = __rdtsc();
  auto t1 = t0;
  do {
    t1 = clock::now();
  } while (t1 - t0 < std::chrono::microseconds(1000));
  const std::uint64_t c1 = __rdtsc();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  return static_cast<std::uint64_t>(static_cast<double>(c1 - c0) * 1e9 / static_cast<double>(ns));
}

}  // namespace spinwise::arch::x86_64
