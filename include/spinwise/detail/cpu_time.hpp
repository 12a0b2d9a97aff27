#pragma once
// The process's CPU time, read one way everywhere: the adaptive policy's spin budget, the
// statistics report's share of CPU and the benchmarks' CPU per acquisition all divide by this.
//
// CLOCK_PROCESS_CPUTIME_ID, not getrusage(RUSAGE_SELF): the kernel accounts it exactly (user +
// system of every thread, those that have exited included), where getrusage's user time is split
// from the total by the tick-sampled ratio, so two readers of the same interval disagreed.

#include <cstdint>
#include <ctime>

namespace spinwise::detail {

// This process's CPU time in ns (0 if the clock cannot be read).
inline std::uint64_t process_cpu_ns() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace spinwise::detail
