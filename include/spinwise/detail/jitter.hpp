#pragma once
// The per-thread generator behind every randomized spin delay.
//
// Why per thread: a shared generator (rand(), one atomic seed) would put a contended cache line
// on every spinner's path, which is the traffic backoff exists to avoid. Each thread keeps one
// 64-bit splitmix64 state in thread-local storage, seeded lazily and differently per thread (the
// state's address, a process-wide stream counter and the clock), so spinners that collide once
// do not keep choosing the same delays. spinwise::seed_spin_jitter() makes a thread's sequence
// reproducible (the statistical tests use it).

#include <atomic>
#include <chrono>
#include <cstdint>

#include "spinwise/config.hpp"
#include "spinwise/detail/process_state.hpp"

namespace spinwise::detail {

inline constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

// The calling thread's state is this_thread_state().jitter (0 = not seeded yet; constant-
// initialized, so access needs no TLS init guard), shared by every module of the process
// (detail/process_state.hpp). process().jitter_streams counts seeded threads: touched once per
// thread, at its first randomized delay, never on the spin path.

// splitmix64's output function (Steele, Lea, Flood 2014): a bijection with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SPINWISE_COLD inline std::uint64_t jitter_seed_here() noexcept {
  const auto addr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&this_thread_state()));
  const std::uint64_t stream = process().jitter_streams.fetch_add(1, std::memory_order_relaxed);
  const auto clock = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return mix64(addr ^ mix64(stream * kGoldenGamma + clock)) | 1u;
}

// The next 64 random bits of the calling thread's sequence.
inline std::uint64_t jitter_next() noexcept {
  std::uint64_t& state = this_thread_state().jitter;
  std::uint64_t s = state;
  if (SPINWISE_UNLIKELY(s == 0)) s = jitter_seed_here();
  s += kGoldenGamma;
  state = s;  // wraps to 0 once in 2^64 draws: the next draw then reseeds, harmlessly
  return mix64(s);
}

// Uniform integer in [0, n) for 0 < n < 2^32 by multiply-shift (Lemire): no division, and a bias
// below n / 2^32 (2.3e-7 for n = 1000), far under what any spin delay can resolve.
inline std::uint32_t jitter_below(std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>(((jitter_next() >> 32) * n) >> 32);
}

}  // namespace spinwise::detail

namespace spinwise {

// Seeds the calling thread's spin-jitter generator: the same seed gives the same sequence of
// randomized delays on this thread. Any value is valid (0 is mapped to a fixed non-zero state).
inline void seed_spin_jitter(std::uint64_t seed) noexcept {
  detail::this_thread_state().jitter = seed != 0 ? seed : detail::kGoldenGamma;
}

}  // namespace spinwise
