#pragma once
// What the wait statistics count (<spinwise/lock_stats.hpp> records it): the counter tables, a
// contended acquisition's wait_record, the totals per mode and per class that a snapshot holds,
// and the buckets of the wait-time histogram. Plain data, for the locks that record and the
// reports that read alike.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spinwise/lock_site.hpp"

namespace spinwise {

// The counters of a lock class, one line each: X(member, key, help). `member` names the field of
// lock_stats_totals, of a thread's shard and (for a wait's counters) of wait_record; `key` the
// counter in the reports (the JSON key); `help` what it counts. Every place that stores, sums,
// subtracts or reports counters expands these tables or loops over kLockStatsCounters, made from
// them: the shards, the exited threads' totals and the overflow block (detail/stats_shards.hpp);
// snapshots, diffs, reset and the text and JSON reports in spinwise::runtime. So a counter is
// added by adding its line. The maximum wait and the histogram are not sums: they follow the
// tables by hand.
//
// The counters a contended acquisition's wait_record carries, each added to its class as is:
#define SPINWISE_WAIT_RECORD_COUNTERS(X)                                   \
  X(rounds, "spin_rounds", "spin rounds (snoozes)")                        \
  X(relaxes, "relaxes", "relax instructions issued in those rounds")       \
  X(spin_ticks, "spin_ticks", "counter ticks spent in the rounds' delays") \
  X(yields, "yields", "sched_yield calls")                                 \
  X(parks, "os_waits", "futex waits (InnoDB's \"OS waits\")")              \
  X(wait_ticks, "wait_ticks", "counter ticks from the first failed attempt to acquisition")

// Every counter: the acquisitions, the upgrades, then the wait record's. An upgrade is counted
// under the mode it enters (x); it is no acquisition, and its wait for the S holders to leave is
// in no counter.
#define SPINWISE_STATS_COUNTERS(X)                                              \
  X(acquisitions, "acquisitions", "acquisitions, contended or not")             \
  X(contended, "contended", "contended acquisitions (InnoDB's \"spin waits\")") \
  X(spin_won, "spin_won", "contended acquisitions won before any futex wait")   \
  X(upgrades, "upgrades", "upgrades from SX to X without release (sx_lock)")    \
  SPINWISE_WAIT_RECORD_COUNTERS(X)

#define SPINWISE_STATS_FIELD_(member, key, help) std::uint64_t member = 0;

// What a lock's slow path reports for one contended acquisition.
struct wait_record {
  SPINWISE_WAIT_RECORD_COUNTERS(SPINWISE_STATS_FIELD_)
};

// Bucket b counts waits of [2^b, 2^(b+1)) counter ticks (bucket 0 also counts 0 and 1 tick).
// 48 buckets reach 2^48 ticks: 34 hours at 2.3 GHz.
inline constexpr std::size_t kWaitHistogramBuckets = 48;

constexpr std::size_t wait_histogram_bucket(std::uint64_t ticks) noexcept {
  std::size_t b = 0;
  while (ticks > 1 && b + 1 < kWaitHistogramBuckets) {
    ticks >>= 1;
    ++b;
  }
  return b;
}

// The counters of one mode, or of a whole class.
struct lock_stats_counts {
  SPINWISE_STATS_COUNTERS(SPINWISE_STATS_FIELD_)
};

// Plain totals: what a snapshot holds per class. The class's counters are the sums of its modes'
// (lock_mode: a mutex counts everything as x; the shared locks split S, SX and X, InnoDB's
// RW-shared, RW-sx and RW-excl lines).
struct lock_stats_totals : lock_stats_counts {
  std::uint64_t max_wait_ticks = 0;
  std::uint64_t histogram[kWaitHistogramBuckets] = {};
  lock_stats_counts modes[kLockModes] = {};

  const lock_stats_counts& mode(lock_mode m) const noexcept { return modes[static_cast<std::size_t>(m)]; }
};
#undef SPINWISE_STATS_FIELD_

// One line of SPINWISE_STATS_COUNTERS, for code that iterates the counters.
struct lock_stats_counter {
  std::uint64_t lock_stats_counts::*total;
  std::string_view key;
  std::string_view help;
};

#define SPINWISE_STATS_DESCRIBE_(member, key, help) lock_stats_counter{&lock_stats_counts::member, key, help},
inline constexpr lock_stats_counter kLockStatsCounters[] = {
    SPINWISE_STATS_COUNTERS(SPINWISE_STATS_DESCRIBE_)};
#undef SPINWISE_STATS_DESCRIBE_

}  // namespace spinwise
