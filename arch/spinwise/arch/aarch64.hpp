#pragma once
// aarch64 backend: ISB by default; YIELD, SB (when HWCAP_SB) and none selectable.
// Counter = CNTVCT_EL0 at CNTFRQ_EL0 Hz.
//
// Include only through <spinwise/arch.hpp>, which decides whether this backend applies.
//
// Why ISB: YIELD is a NOP on cores without SMT (Neoverse-N1: 0.4 ns, rust-lang/rust#84725), so a
// YIELD spin hammers the lock line; ISB stalls ~30-40 cycles, close to a pre-Skylake PAUSE, and
// is what MySQL, PostgreSQL, Rust, folly and oneTBB use. SB (Armv8.5) is what Corretto picked for
// Neoverse-V2. All four stay selectable because the right one is measured, not assumed.

#include <atomic>
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "spinwise/arch/feature_bit.hpp"
#include "spinwise/arch/relax_kind.hpp"

// Build-time default: -DSPINWISE_AARCH64_RELAX_DEFAULT=<isb|yield|sb|none> (the CMake option
// SPINWISE_AARCH64_RELAX sets it). Run time: spinwise::set_relax() or SPINWISE_RELAX=<kind>.
#define SPINWISE_AARCH64_RELAX_isb ::spinwise::relax_kind::isb
#define SPINWISE_AARCH64_RELAX_yield ::spinwise::relax_kind::yield
#define SPINWISE_AARCH64_RELAX_sb ::spinwise::relax_kind::sb
#define SPINWISE_AARCH64_RELAX_none ::spinwise::relax_kind::none
#define SPINWISE_AARCH64_RELAX_PICK2(k) SPINWISE_AARCH64_RELAX_##k
#define SPINWISE_AARCH64_RELAX_PICK(k) SPINWISE_AARCH64_RELAX_PICK2(k)

namespace spinwise::arch::aarch64 {

inline constexpr std::string_view kName = "aarch64";
inline constexpr std::string_view kCounterName = "cntvct";
// Neoverse and Apple cores prefetch line pairs or use 128-byte lines: pad to 128.
inline constexpr std::size_t kPad = 128;
#if defined(SPINWISE_AARCH64_RELAX_DEFAULT)
inline constexpr relax_kind kDefaultRelax = SPINWISE_AARCH64_RELAX_PICK(SPINWISE_AARCH64_RELAX_DEFAULT);
#else
inline constexpr relax_kind kDefaultRelax = relax_kind::isb;
#endif

namespace detail {
// HWCAP_SB from <asm/hwcap.h>; spelled out so older kernel headers still compile.
inline constexpr unsigned long kHwcapSb = 1ul << 29;

inline bool probe_sb() noexcept {
#if defined(__linux__)
  return (getauxval(AT_HWCAP) & kHwcapSb) != 0;
#else
  return false;
#endif
}
inline bool has_sb() noexcept { return arch::detail::feature_bit<probe_sb>(); }

// SB is encoded by hand: the assembler accepts the mnemonic only with -march=armv8.5-a or later.
__attribute__((always_inline)) inline void sb_once() noexcept {
  asm volatile(".inst 0xd50330ff" ::: "memory");
}
}  // namespace detail

inline bool supports(relax_kind k) noexcept {
  switch (k) {
    case relax_kind::none:
    case relax_kind::isb:
    case relax_kind::yield:
      return true;
    case relax_kind::sb:
      return detail::has_sb();
    default:
      return false;
  }
}

__attribute__((always_inline)) inline void relax(relax_kind k) noexcept {
  switch (k) {
    case relax_kind::isb:
      asm volatile("isb sy" ::: "memory");
      break;
    case relax_kind::yield:
      asm volatile("yield" ::: "memory");
      break;
    case relax_kind::sb:
      detail::sb_once();
      break;
    default:
      asm volatile("" ::: "memory");
      break;
  }
}

inline void relax_n(relax_kind k, std::uint32_t n) noexcept {
  switch (k) {
    case relax_kind::isb:
      for (std::uint32_t i = 0; i < n; ++i) asm volatile("isb sy" ::: "memory");
      break;
    case relax_kind::yield:
      for (std::uint32_t i = 0; i < n; ++i) asm volatile("yield" ::: "memory");
      break;
    case relax_kind::sb:
      for (std::uint32_t i = 0; i < n; ++i) detail::sb_once();
      break;
    default:
      for (std::uint32_t i = 0; i < n; ++i) asm volatile("" ::: "memory");
      break;
  }
}

// ISB first so the read is not hoisted above earlier instructions (the kernel does the same).
__attribute__((always_inline)) inline std::uint64_t read_counter() noexcept {
  std::uint64_t v;
  asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
  return v;
}

// The generic timer is architecturally constant-rate.
inline bool counter_invariant() noexcept { return true; }

// How often a clock-bounded delay (time_policy, exp_backoff_policy) reads the counter: every
// 100 ns of relaxes, and never more often than the counter ticks (clock_bounded_delay.hpp takes the larger).
// A CNTVCT_EL0 read is cheap, but the counter's rate varies: the Arm Architecture Reference Manual
// fixes it at 1 GHz from Armv8.6 (Generic Timer chapter), while older parts run it at tens of MHz
// (24 MHz is common: one tick per 42 ns), and reading it faster than it ticks learns nothing.
inline constexpr double kDelayCheckNs = 100;
// How often a delay asks an eagerly polling lock whether it looks free (x86_64.hpp says why):
// the eager poll was measured on x86 only; here it stays at the check interval until measured.
inline constexpr double kDelayPollNs = kDelayCheckNs;

inline std::uint64_t measure_counter_frequency() noexcept {
  std::uint64_t f;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(f));
  return f;
}

}  // namespace spinwise::arch::aarch64
