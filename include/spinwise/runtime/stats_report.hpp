#pragma once
// Snapshots and reports of the wait statistics that locks with a class_stats<> policy record
// (see <spinwise/lock_stats.hpp>). Part of spinwise::runtime.
//
// Counters are cumulative since the process started (or since reset_stats()), like InnoDB's
// SEMAPHORES counters and SQL Server's sys.dm_os_wait_stats: to see what a test did, take a
// snapshot before and after it and report diff_stats(before, after).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spinwise/lock_stats.hpp"

namespace spinwise {

struct lock_class_stats {
  std::string name;
  lock_stats_totals totals;
};

struct stats_snapshot {
  std::vector<lock_class_stats> classes;  // by name
  double wall_seconds = 0;                // steady_clock at the snapshot (for a diff: the interval)
  double process_cpu_seconds = 0;         // user + system CPU of the process (for a diff: in the interval)
  std::uint64_t counter_hz = 0;           // to convert ticks to time
};

// Every class used so far, cumulative since start or the last reset_stats().
stats_snapshot take_stats_snapshot();

// after - before, class by class (a class missing from `before` counts from zero). Counters are
// subtracted modulo 2^64, so a wrapped counter still gives the right difference. The maximum
// wait of a diff is the later snapshot's maximum when it grew in the interval, else the upper
// bound of the highest histogram bucket that grew.
stats_snapshot diff_stats(const stats_snapshot& before, const stats_snapshot& after);

// Makes the next snapshots count from now (keeps a baseline; the maximum waits restart at 0).
void reset_stats();

// fork() in a process that counts, as pthread_atfork's three handlers (libspinwise-preload.so
// registers them): a child has only the forking thread, so a registry lock that another thread held
// at fork would stay held there, and the child's report (at exit) would wait forever. prepare takes
// the registry's locks (the class list's, every class's, the baseline's), so that the child's copy
// is consistent; the parent releases them; the child makes them free anew (its copies of locks the
// vanished threads queued on could not be released normally by every lock kind).
void stats_atfork_prepare() noexcept;
void stats_atfork_parent() noexcept;
void stats_atfork_child() noexcept;

// Whether the reports list mode m of a class: x always (a mutex's only mode), s and sx once any of
// their counters is non-zero. The text, the JSON's "modes" and the Prometheus samples agree.
bool mode_reported(const lock_stats_totals& t, lock_mode m);

// Derived figures of one class in a snapshot.
struct lock_class_summary {
  double spin_rounds_per_wait = 0;  // rounds / contended acquisitions (InnoDB's "Spin rounds per wait")
  double spin_efficiency = 0;       // spin_won / contended: the contended acquisitions won before
                                    // any futex wait (does spinning pay on this machine?)
  double contended_share = 0;       // contended / acquisitions
  double spin_ns = 0;               // time in spin delays
  double spin_cpu_share = 0;        // spin time / process CPU time of the snapshot (0..1, can exceed
                                    // 1 only if the CPU clock and the counter disagree)
  double wait_ns = 0, mean_wait_ns = 0, max_wait_ns = 0;
  double p50_wait_ns = 0, p99_wait_ns = 0;  // upper bounds of the histogram buckets holding them
};
lock_class_summary summarize(const stats_snapshot& s, const lock_class_stats& c);

// The figures of a lock_class_summary under their keys in the JSON report.
struct lock_class_figure {
  std::string_view key;
  double lock_class_summary::*value;
};
inline constexpr lock_class_figure kLockClassFigures[] = {
    {"spin_rounds_per_wait", &lock_class_summary::spin_rounds_per_wait},
    {"spin_efficiency", &lock_class_summary::spin_efficiency},
    {"contended_share", &lock_class_summary::contended_share},
    {"spin_ns", &lock_class_summary::spin_ns},
    {"spin_cpu_share", &lock_class_summary::spin_cpu_share},
    {"wait_ns", &lock_class_summary::wait_ns},
    {"mean_wait_ns", &lock_class_summary::mean_wait_ns},
    {"max_wait_ns", &lock_class_summary::max_wait_ns},
    {"p50_wait_ns_upper", &lock_class_summary::p50_wait_ns},
    {"p99_wait_ns_upper", &lock_class_summary::p99_wait_ns}};

// InnoDB SEMAPHORES-shaped text, classes sorted by total wait time, longest first.
std::string format_stats_text(const stats_snapshot& s);

// The same as one JSON object, for monitoring exporters: {"format": kStatsFormat, "version":
// kStatsFormatVersion, "wall_seconds", "process_cpu_seconds", "counter_hz", "classes": [{"name",
// each counter of kLockStatsCounters under its key, "modes": {"x"|"s"|"sx": {each counter}} for
// the modes mode_reported lists, "max_wait_ticks", each figure of kLockClassFigures,
// "wait_histogram_log2_ticks": [...]}]}. Counters are integers, figures doubles that read back
// exactly. Version 1 named the format "schema" and printed figures with 6 significant digits;
// version 3 added "spin_won" and "spin_efficiency"; version 4 "modes"; version 5 "upgrades".
inline constexpr std::string_view kStatsFormat = "spinwise.lock_stats";
inline constexpr int kStatsFormatVersion = 5;
std::string format_stats_json(const stats_snapshot& s);

// The same in the Prometheus text exposition format (version 0.0.4), for a /metrics endpoint or
// node_exporter's textfile collector: one family per counter of kLockStatsCounters, named
// spinwise_lock_<key>_total (spin ticks as seconds: spinwise_lock_spin_seconds_total; the wait
// ticks are the histogram's _sum), each with # HELP and # TYPE and one sample per class and mode,
// labelled class="<name>" (backslash, double quote and newline escaped) and mode="x"|"s"|"sx" (the
// modes mode_reported lists; sum by class for the class's total); the wait histogram as a
// histogram family spinwise_lock_wait_seconds (cumulative buckets at every bound of
// kPrometheusWaitBoundsNs, le in seconds, then +Inf, _sum, _count); gauges
// spinwise_lock_max_wait_seconds and spinwise_lock_spin_efficiency; and the snapshot's process CPU
// and wall seconds. Counter values are integers, exactly the JSON's.
std::string format_stats_prometheus(const stats_snapshot& s);

// The bounds (le) of the Prometheus wait histogram, in ns: fixed, the same on every host whatever
// its counter rate, so a fleet's histograms sum and histogram_quantile() reads them alike. From
// 100 ns, about the shortest contended wait (a failed attempt and a cache-line transfer or two;
// below it the counter itself is coarse on some hosts: 41.7 ns a tick at 24 MHz), to 10 s, past
// which a wait is a stall (the watchdog's business; +Inf counts it, the max-wait gauge says how
// long). Steps of 1, 2.5, 5 per decade, Prometheus' own default spacing: x2 to x2.5 apart, about
// the log2 buckets' x2, which they are filled from, so a finer list would only add empty buckets.
// A decade a line.
// clang-format off
inline constexpr std::uint64_t kPrometheusWaitBoundsNs[] = {
    100,           250,           500,            // ns
    1'000,         2'500,         5'000,          // us
    10'000,        25'000,        50'000,
    100'000,       250'000,       500'000,
    1'000'000,     2'500'000,     5'000'000,      // ms
    10'000'000,    25'000'000,    50'000'000,
    100'000'000,   250'000'000,   500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000,  // s
    10'000'000'000};
// clang-format on

// The cumulative wait counts of `t` at each bound of kPrometheusWaitBoundsNs (the +Inf count is
// the histogram's total). The log2 buckets are in counter ticks and cannot be split, so each is
// counted whole at the first bound at or above its longest wait (bucket b: 2^(b+1) - 1 ticks,
// compared exactly in integer ticks; the last bucket, unbounded above, at +Inf only): every wait
// counted at a bound lasted at most that long, so each cumulative count is a lower bound of the
// true one, never more; as the bounds are at least x2 apart and a bucket spans less than x2, a wait
// is counted at most one bound above its own. counter_hz 0 (rate unknown): every wait at +Inf only.
std::array<std::uint64_t, std::size(kPrometheusWaitBoundsNs)> prometheus_wait_buckets(
    const lock_stats_totals& t, std::uint64_t counter_hz);

}  // namespace spinwise
