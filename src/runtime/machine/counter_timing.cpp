#include "spinwise/runtime/counter_timing.hpp"

#include <algorithm>

namespace spinwise::runtime {

double counter_read_overhead(unsigned pairs) noexcept {
  std::uint64_t best = ~std::uint64_t{0};
  for (unsigned i = 0; i < pairs; ++i) {
    const std::uint64_t a = read_counter();
    const std::uint64_t b = read_counter();
    best = std::min(best, b - a);
  }
  return pairs > 0 ? static_cast<double>(best) : 0.0;
}

double ticks_per_op(std::uint64_t c0, std::uint64_t c1, double overhead_ticks, std::uint32_t ops) noexcept {
  return std::max(0.0, static_cast<double>(c1 - c0) - overhead_ticks) / ops;
}

double ticks_to_ns(double ticks, std::uint64_t counter_hz) noexcept {
  return ticks * 1e9 / static_cast<double>(counter_hz);
}

}  // namespace spinwise::runtime
