#pragma once
// The one place that picks the relax / timing backend. Nothing else in spinwise tests the
// architecture: algorithms call the functions below.
//
// Contract (each backend in arch/spinwise/arch/ provides it):
//   cpu_relax()            one relax instruction of the active kind
//   cpu_relax_n(n)         n of them, with the kind's branch hoisted out of the loop
//   read_counter()         the cycle counter (TSC, CNTVCT_EL0, steady_clock ns)
//   counter_frequency()    its rate in Hz
//   counter_is_invariant() whether that rate is constant across power states
//   kCacheLinePad          the padding that keeps two hot words off one prefetch pair
//   backend_name()         "x86_64", "aarch64" or "generic"
//
// The relax kind is chosen at run time: the backend's default (x86 PAUSE, aarch64 ISB unless
// SPINWISE_AARCH64_RELAX says otherwise, generic barrier), overridden by the SPINWISE_RELAX
// environment variable at first use, or by set_relax() at any time.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "spinwise/arch/relax_kind.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/env.hpp"
#include "spinwise/detail/process_state.hpp"

#if defined(SPINWISE_FORCE_GENERIC)
#include "spinwise/arch/generic.hpp"
namespace spinwise::detail {
namespace backend = ::spinwise::arch::generic;
}
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include "spinwise/arch/x86_64.hpp"
namespace spinwise::detail {
namespace backend = ::spinwise::arch::x86_64;
}
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#include "spinwise/arch/aarch64.hpp"
namespace spinwise::detail {
namespace backend = ::spinwise::arch::aarch64;
}
#else
#include "spinwise/arch/generic.hpp"
namespace spinwise::detail {
namespace backend = ::spinwise::arch::generic;
}
#endif

namespace spinwise {

inline constexpr std::size_t kCacheLinePad = detail::backend::kPad;

constexpr std::string_view backend_name() noexcept { return detail::backend::kName; }
constexpr std::string_view counter_name() noexcept { return detail::backend::kCounterName; }
constexpr relax_kind default_relax() noexcept { return detail::backend::kDefaultRelax; }

// True when this CPU can execute `k` through this build's backend.
inline bool relax_supported(relax_kind k) noexcept { return detail::backend::supports(k); }

namespace detail {

// The active kind is process().relax (detail/process_state.hpp): one byte, written rarely
// (set_relax), read with a relaxed load per relax.

// First use: SPINWISE_RELAX if it names a kind this CPU supports, else the backend default.
// An unusable value is ignored here; relax_env_status() lets tools report it.
SPINWISE_COLD inline relax_kind resolve_relax() noexcept {
  relax_kind k = backend::kDefaultRelax;
  if (const char* env = detail::env("SPINWISE_RELAX")) {
    relax_kind wanted{};
    if (parse_relax_kind(env, wanted) && backend::supports(wanted)) k = wanted;
  }
  std::uint8_t expected = kRelaxUnresolved;
  process().relax.compare_exchange_strong(expected, static_cast<std::uint8_t>(k), std::memory_order_relaxed);
  return static_cast<relax_kind>(process().relax.load(std::memory_order_relaxed));
}

SPINWISE_ALWAYS_INLINE relax_kind load_relax() noexcept {
  const std::uint8_t v = process().relax.load(std::memory_order_relaxed);
  if (SPINWISE_UNLIKELY(v == kRelaxUnresolved)) return resolve_relax();
  return static_cast<relax_kind>(v);
}

}  // namespace detail

// The relax kind cpu_relax() issues now.
inline relax_kind active_relax() noexcept { return detail::load_relax(); }

// Switches the relax kind for the whole process; running spinners see it at their next relax.
// Returns false and changes nothing when this CPU or backend cannot issue `k`.
inline bool set_relax(relax_kind k) noexcept {
  if (!relax_supported(k)) return false;
  detail::process().relax.store(static_cast<std::uint8_t>(k), std::memory_order_relaxed);
  return true;
}

// Why SPINWISE_RELAX was or was not applied: 0 unset, 1 applied, -1 unknown name,
// -2 a kind this CPU or backend cannot issue.
inline int relax_env_status() noexcept {
  const char* env = detail::env("SPINWISE_RELAX");
  if (env == nullptr) return 0;
  relax_kind k{};
  if (!parse_relax_kind(env, k)) return -1;
  return relax_supported(k) ? 1 : -2;
}

SPINWISE_ALWAYS_INLINE void cpu_relax() noexcept { detail::backend::relax(detail::load_relax()); }

inline void cpu_relax_n(std::uint32_t n) noexcept { detail::backend::relax_n(detail::load_relax(), n); }

// n relaxes of a given kind, whatever the active one is (calibration measures each kind this
// way without disturbing other threads). An unsupported kind degrades to a compiler barrier.
inline void cpu_relax_n(relax_kind k, std::uint32_t n) noexcept {
  detail::backend::relax_n(relax_supported(k) ? k : relax_kind::none, n);
}

SPINWISE_ALWAYS_INLINE std::uint64_t read_counter() noexcept { return detail::backend::read_counter(); }

inline bool counter_is_invariant() noexcept { return detail::backend::counter_invariant(); }

// Counter ticks per second. Measured once on first use (about 1 ms on x86 without CPUID leaf
// 0x15) unless a calibration profile has set it.
inline std::uint64_t counter_frequency() noexcept {
  std::uint64_t hz = detail::process().counter_hz.load(std::memory_order_relaxed);
  if (SPINWISE_UNLIKELY(hz == 0)) {
    hz = detail::backend::measure_counter_frequency();
    std::uint64_t expected = 0;
    if (!detail::process().counter_hz.compare_exchange_strong(expected, hz, std::memory_order_relaxed))
      hz = expected;
  }
  return hz;
}

// Installs a counter frequency measured elsewhere (a calibration profile). Zero is refused.
inline bool set_counter_frequency(std::uint64_t hz) noexcept {
  if (hz == 0) return false;
  detail::process().counter_hz.store(hz, std::memory_order_relaxed);
  return true;
}

}  // namespace spinwise
