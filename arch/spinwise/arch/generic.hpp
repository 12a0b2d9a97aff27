#pragma once
// Generic backend: a compiler barrier for relax, std::chrono::steady_clock for the counter.
// Compiles on any platform with a C++17 standard library; chosen when no other backend applies
// or when SPINWISE_FORCE_GENERIC is defined (the CMake option SPINWISE_ARCH=generic).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "spinwise/arch/relax_kind.hpp"

namespace spinwise::arch::generic {

inline constexpr std::string_view kName = "generic";
inline constexpr std::string_view kCounterName = "steady_clock";
inline constexpr std::size_t kPad = 128;
inline constexpr relax_kind kDefaultRelax = relax_kind::barrier;

inline bool supports(relax_kind k) noexcept { return k == relax_kind::barrier || k == relax_kind::none; }

// Both kinds are the same here: stop the compiler from caching the polled value, nothing more.
inline void relax(relax_kind) noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

inline void relax_n(relax_kind, std::uint32_t n) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
}

inline std::uint64_t read_counter() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

inline bool counter_invariant() noexcept { return std::chrono::steady_clock::is_steady; }

inline std::uint64_t measure_counter_frequency() noexcept { return 1'000'000'000; }

// How often a clock-bounded delay (time_policy, exp_backoff_policy) reads the counter:
// steady_clock::now() costs more than a bare counter read even through the vDSO (it reads the
// counter, checks the sequence count and scales the result), so every 200 ns of relaxes, twice
// x86's interval, keeps the reads a small share of the loop.
inline constexpr double kDelayCheckNs = 200;
// How often a delay asks an eagerly polling lock whether it looks free (x86_64.hpp says why):
// unmeasured on the CPUs this backend serves, so at the check interval.
inline constexpr double kDelayPollNs = kDelayCheckNs;

}  // namespace spinwise::arch::generic
