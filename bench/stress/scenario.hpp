#pragma once
// What a scenario is to the engine: the work of one sub-query, on a worker's thread, against the
// latches it owns, and a check of the data those latches protect once every thread has stopped.
// Internal to spinwise-stress (engine.cpp, scenario_stats_lock.cpp, scenario_hot_page.cpp).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "delay_sample.hpp"
#include "histogram.hpp"  // bench/common: the tools' histograms
#include "lock_catalog.hpp"
#include "spin_tally.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/lock_site.hpp"
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
  bench::latency_histogram subquery_rt, hold, wait;
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

// --stall-holder-ms: one holder keeps its latch `ms` longer, once per run, as a holder that was
// descheduled or got stuck would. The engine arms it at the middle of the planned window,
// (warmup_s + duration_s) / 2 after the run's start; the first latch acquisition to complete after
// that, in whichever worker and statement, claims it (one exchange: exactly once) and sleeps while
// it holds the latch. Done around the critical section, never inside a lock, so every lock stalls
// alike.
class alignas(kCacheLinePad) holder_stall {
 public:
  explicit holder_stall(std::uint32_t ms) noexcept : ms_(ms) {}

  void arm() noexcept { armed_.store(ms_ > 0, std::memory_order_relaxed); }

  // In a worker that has just taken a latch: one relaxed load of a line nobody writes until armed.
  // True for the one call that stalled.
  bool hold_if_armed() noexcept {
    if (SPINWISE_LIKELY(!armed_.load(std::memory_order_relaxed)) ||
        !armed_.exchange(false, std::memory_order_relaxed)) {
      return false;
    }
    fired_.store(true, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return true;
  }

  // After the join: whether a holder stalled.
  bool fired() const noexcept { return fired_.load(std::memory_order_relaxed); }

 private:
  const std::uint32_t ms_;  // 0: never armed
  std::atomic<bool> armed_{false};
  std::atomic<bool> fired_{false};
};

// The latches of a scenario, instrumented: a failed try is a latch wait (SQL Server's and
// InnoDB's meaning), timed to the acquisition, and every hold is timed. `measuring` is read once
// per sub-query by the engine, so all of a sub-query's counts land on the same side of the
// window's edges. `site` is the scenario's line that takes the latch (SPINWISE_SITE), which lock
// tracking lists for the hold and the wait.
class metered_latches {
 public:
  metered_latches(const lock_choice& lock, std::size_t n, holder_stall& stall)
      : latches_(make_latch_set(lock, n)), stall_(stall) {}

  // Takes latch i; returns the counter reading at which it was held. `waits`, when given, also
  // counts a wait (the statement kind's own counter).
  std::uint64_t acquire(worker_stats& w, std::size_t i, bool shared, std::uint64_t* waits, bool measuring,
                        lock_site site) {
    const std::uint64_t t0 = read_counter();
    const bool waited = take(i, shared, site);
    const std::uint64_t t1 = waited ? read_counter() : t0;
    if (waited && measuring) {
      ++w.waits;
      if (waits != nullptr) ++*waits;
      w.wait.record(t1 - t0);
    }
    stall_.hold_if_armed();
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
  // Takes latch i; true when it had to wait (its try failed).
  bool take(std::size_t i, bool shared, lock_site site) {
    if (shared ? latches_->try_lock_shared(i, site) : latches_->try_lock(i, site)) return false;
    lock(i, shared, site);
    return true;
  }

  void lock(std::size_t i, bool shared, lock_site site) {
    if (shared) {
      latches_->lock_shared(i, site);
    } else {
      latches_->lock(i, site);
    }
  }

  std::unique_ptr<latch_set> latches_;
  holder_stall& stall_;
};

class scenario_workload {
 public:
  virtual ~scenario_workload() = default;
  // One sub-query, on a worker's thread.
  virtual void subquery(worker_stats& w, rng& r, bool measuring) = 0;
  // After every thread has joined: 0 when the protected data agrees with what its writers did.
  virtual std::uint64_t exclusion_errors(const std::vector<worker_stats>& workers) const = 0;
};

std::unique_ptr<scenario_workload> make_stats_lock(const workload_config& c, holder_stall& stall);
std::unique_ptr<scenario_workload> make_hot_page(const workload_config& c, holder_stall& stall);

inline std::unique_ptr<scenario_workload> make_scenario(const workload_config& c, holder_stall& stall) {
  return c.sc == scenario::stats_lock ? make_stats_lock(c, stall) : make_hot_page(c, stall);
}

}  // namespace spinwise::stress
