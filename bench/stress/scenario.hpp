#pragma once
// What a scenario is to the engine: the work of one sub-query, on a worker's thread, against the
// latches it owns, and a check of the data those latches protect once every thread has stopped.
// Internal to spinwise-stress (engine.cpp, scenario_stats_lock.cpp, scenario_hot_page.cpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "delay_sample.hpp"
#include "histogram.hpp"
#include "lock_catalog.hpp"
#include "spin_tally.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/jitter.hpp"
#include "workload_config.hpp"

namespace spinwise::stress {

// xorshift64*: the workload's own random choices (pages, statement order), per worker.
struct rng {
  std::uint64_t s;
  explicit rng(std::uint64_t seed) : s(detail::mix64(seed) | 1) {}
  std::uint64_t next() noexcept {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545f4914f6cdd1dull;
  }
  std::uint32_t below(std::uint32_t n) noexcept {
    return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32);
  }
};

// One worker's figures: written by its thread only, read after the join. The "_all" fields count
// window or not; the others only sub-queries that began inside the window.
struct alignas(kCacheLinePad) worker_stats {
  latency_histogram subquery_rt, hold, wait;
  std::uint64_t executed_all = 0;  // every sub-query run, window or not
  std::uint64_t subqueries = 0, acquisitions = 0, waits = 0;
  std::uint64_t hold_ticks = 0;
  std::uint64_t inserts = 0, updates = 0, selects = 0;
  std::uint64_t insert_waits = 0, update_waits = 0, select_waits = 0;
  std::uint64_t x_writes_all = 0;  // exclusive page writes (window or not), for the exclusion check
  std::uint64_t read_sink = 0;
  spin_tally spin;      // what the relaxer and the policy wrapper counted (spin_tally.hpp)
  delay_sample delays;  // measured sub-queries' delays (delay_sample.hpp)
};

// The latches of a scenario, instrumented: a failed try is a latch wait (SQL Server's and
// InnoDB's meaning), timed to the acquisition, and every hold is timed. `measuring` is read once
// per sub-query by the engine, so all of a sub-query's counts land on the same side of the
// window's edges.
class metered_latches {
 public:
  metered_latches(const lock_choice& lock, std::size_t n) : latches_(make_latch_set(lock, n)) {}

  // Takes latch i; returns the counter reading at which it was held. `waits`, when given, also
  // counts a wait (the statement kind's own counter).
  std::uint64_t acquire(worker_stats& w, std::size_t i, bool shared, std::uint64_t* waits, bool measuring) {
    const std::uint64_t t0 = read_counter();
    const bool got = shared ? latches_->try_lock_shared(i) : latches_->try_lock(i);
    if (got) return t0;
    if (shared) {
      latches_->lock_shared(i);
    } else {
      latches_->lock(i);
    }
    const std::uint64_t t1 = read_counter();
    if (measuring) {
      ++w.waits;
      if (waits != nullptr) ++*waits;
      w.wait.record(t1 - t0);
    }
    return t1;
  }

  void release(worker_stats& w, std::size_t i, bool shared, std::uint64_t t_acquired, bool measuring) {
    const std::uint64_t t = read_counter();
    if (shared) {
      latches_->unlock_shared(i);
    } else {
      latches_->unlock(i);
    }
    if (measuring) {
      ++w.acquisitions;
      w.hold.record(t - t_acquired);
      w.hold_ticks += t - t_acquired;
    }
  }

 private:
  std::unique_ptr<latch_set> latches_;
};

class scenario_workload {
 public:
  virtual ~scenario_workload() = default;
  // One sub-query, on a worker's thread.
  virtual void subquery(worker_stats& w, rng& r, bool measuring) = 0;
  // After every thread has joined: 0 when the protected data agrees with what its writers did.
  virtual std::uint64_t exclusion_errors(const std::vector<worker_stats>& workers) const = 0;
};

std::unique_ptr<scenario_workload> make_stats_lock(const workload_config& c);
std::unique_ptr<scenario_workload> make_hot_page(const workload_config& c);

inline std::unique_ptr<scenario_workload> make_scenario(const workload_config& c) {
  return c.sc == scenario::stats_lock ? make_stats_lock(c) : make_hot_page(c);
}

}  // namespace spinwise::stress
