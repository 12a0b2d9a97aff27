#include "spinwise/runtime/cycles.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "common/enum_names.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/env.hpp"
#include "spinwise/runtime/counter_timing.hpp"

namespace spinwise {
namespace {

constexpr detail::enum_name<cycles_source> kCyclesSourceNames[] = {
    {cycles_source::automatic, "auto"}, {cycles_source::perf, "perf"}, {cycles_source::estimate, "estimate"}};

// The chains read their operands through volatile pointers so the compiler cannot precompute
// them, and use signed arithmetic: GCC reassociates unsigned additions (it summed the 16 loads
// first and added them to the chain once per iteration, measured), but not signed ones, whose
// overflow is undefined. The sanitizers are kept out so their checks do not join the chain.
// Inline asm would be the airtight way; it is kept to arch/, and chain_check catches a compiler
// that finds another way to shorten the chain.
volatile std::int64_t g_one = 1;
volatile std::int64_t g_zero = 0;

#define SPINWISE_CHAIN_ATTRS __attribute__((noinline, no_sanitize("address", "thread", "undefined")))

// 16 dependent additions per block: x waits for the previous x every time.
SPINWISE_CHAIN_ATTRS std::int64_t add_chain(const volatile std::int64_t* one, std::uint32_t blocks) {
  std::int64_t x = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) {
#define SPINWISE_ADD1 x += *one;
    SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1
        SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1 SPINWISE_ADD1
            SPINWISE_ADD1 SPINWISE_ADD1
#undef SPINWISE_ADD1
  }
  return x;
}

// The same with an xor after every add: two dependent operations per step, so twice the time.
SPINWISE_CHAIN_ATTRS std::int64_t add_xor_chain(const volatile std::int64_t* one,
                                                const volatile std::int64_t* zero, std::uint32_t blocks) {
  std::int64_t x = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) {
#define SPINWISE_ADD2 x = (x + *one) ^ *zero;
    SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2
        SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2 SPINWISE_ADD2
            SPINWISE_ADD2 SPINWISE_ADD2
#undef SPINWISE_ADD2
  }
  return x;
}

#undef SPINWISE_CHAIN_ATTRS

}  // namespace

std::string_view to_string(cycles_source s) noexcept { return detail::name_in(kCyclesSourceNames, s); }

bool parse_cycles_source(std::string_view text, cycles_source& out) noexcept {
  return detail::parse_in(kCyclesSourceNames, text, out);
}

// --- perf_event ---------------------------------------------------------------------------

perf_cycle_counter::perf_cycle_counter(perf_cycle_counter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), error_(std::move(other.error_)) {}

perf_cycle_counter& perf_cycle_counter::operator=(perf_cycle_counter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    error_ = std::move(other.error_);
  }
  return *this;
}

perf_cycle_counter::~perf_cycle_counter() {
  if (fd_ >= 0) ::close(fd_);
}

bool perf_cycle_counter::open() {
  if (fd_ >= 0) return true;
  if (const char* off = detail::env("SPINWISE_NO_PERF"); off != nullptr && std::strcmp(off, "1") == 0) {
    error_ = "disabled by SPINWISE_NO_PERF=1";
    return false;
  }
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2; the relax loops run in user mode
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */, -1, 0);
  if (fd < 0) {
    const int e = errno;
    error_ = std::string("perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: ") + std::strerror(e);
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) error_ += " (no hardware cycle counter exposed)";
    if (e == EACCES || e == EPERM) error_ += " (see /proc/sys/kernel/perf_event_paranoid)";
    return false;
  }
  fd_ = static_cast<int>(fd);
  // A counter that opens but never runs (no free PMU slot) is as good as none.
  std::uint64_t a = 0, b = 0;
  volatile std::uint64_t sink = 0;
  if (read(a)) {
    for (int i = 0; i < 10000; ++i) sink = sink + 1;
  }
  if (!read(b) || b <= a) {
    ::close(fd_);
    fd_ = -1;
    error_ = "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) opened but did not count";
    return false;
  }
  error_.clear();
  return true;
}

bool perf_cycle_counter::read(std::uint64_t& cycles) const noexcept {
  if (fd_ < 0) return false;
  std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
  if (::read(fd_, v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) return false;
  if (v[2] < v[1]) return false;  // multiplexed: the value would be an extrapolation
  cycles = v[0];
  return true;
}

// --- core clock estimate --------------------------------------------------------------------

core_clock_estimate estimate_core_clock(std::uint32_t trials, std::uint32_t adds_per_trial) {
  if (trials == 0) return {};
  const std::uint32_t blocks = std::max<std::uint32_t>(1, adds_per_trial / 16);
  const std::uint32_t adds = 16 * blocks;
  const double overhead = runtime::counter_read_overhead(32);
  volatile std::int64_t sink = 0;
  sink = sink + add_chain(&g_one, blocks);  // warm-up: fault in the code, settle the branch predictor

  std::vector<double> per_add, per_step2;
  per_add.reserve(trials);
  per_step2.reserve(trials);
  for (std::uint32_t t = 0; t < trials; ++t) {
    // Interleaved, so a clock change affects both chains alike.
    per_add.push_back(runtime::time_trial(adds, overhead, [&] { sink = sink + add_chain(&g_one, blocks); }));
    per_step2.push_back(
        runtime::time_trial(adds, overhead, [&] { sink = sink + add_xor_chain(&g_one, &g_zero, blocks); }));
  }
  return detail::core_clock_from_trials(per_add, per_step2, counter_frequency());
}

namespace detail {

core_clock_estimate core_clock_from_trials(const std::vector<double>& ticks_per_add,
                                           const std::vector<double>& ticks_per_step2,
                                           std::uint64_t counter_hz) {
  core_clock_estimate est;
  est.ticks_per_add = summarize(ticks_per_add);
  const sample_summary two = summarize(ticks_per_step2);
  est.ticks_per_cycle = est.ticks_per_add.median;
  if (est.ticks_per_cycle > 0) {
    est.hz = static_cast<double>(counter_hz) / est.ticks_per_cycle;
    est.chain_check = two.median / est.ticks_per_cycle;
  }
  est.plausible = est.chain_check >= 1.6 && est.chain_check <= 2.4 && est.hz >= 1e8 && est.hz <= 1e10;
  return est;
}

}  // namespace detail

}  // namespace spinwise
