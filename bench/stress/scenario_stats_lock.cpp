// stats-lock: the MySQL incident's statistics latch (workload.hpp). Every sub-query does
// `work_before_ns` of CPU work, takes the one shared latch for `cs_ns` while it updates the
// index statistics the latch guards, and does `work_after_ns` more.

#include <cstdint>
#include <memory>
#include <vector>

#include "emulated_relaxer.hpp"
#include "scenario.hpp"

namespace spinwise::stress {

namespace {

// The incident's statistics: what the latch protects. Plain fields: the lock is their only guard.
struct alignas(kCacheLinePad) index_statistics {
  std::uint64_t updates = 0;
  std::uint64_t rows_estimate = 0;
};

class stats_lock_workload final : public scenario_workload {
 public:
  stats_lock_workload(const workload_config& c, holder_stall& stall) : cfg_(c), latch_(c.lock, 1, stall) {}

  void subquery(worker_stats& w, rng&, bool measuring) override {
    busy_work_ns(cfg_.work_before_ns);
    const std::uint64_t t = latch_.acquire(w, 0, false, nullptr, measuring, SPINWISE_SITE);
    ++stats_.updates;
    stats_.rows_estimate = stats_.rows_estimate * 31 + 7;
    busy_work_ns(cfg_.cs_ns);
    latch_.release(w, 0, false, t, measuring);
    busy_work_ns(cfg_.work_after_ns);
  }

  // Every sub-query updated the statistics once, under the latch: a lost update means two holders.
  std::uint64_t exclusion_errors(const std::vector<worker_stats>& workers) const override {
    std::uint64_t executed = 0;
    for (const worker_stats& w : workers) executed += w.executed_all;
    return stats_.updates != executed ? 1 : 0;
  }

 private:
  const workload_config& cfg_;
  metered_latches latch_;
  index_statistics stats_;  // guarded by latch 0
};

}  // namespace

std::unique_ptr<scenario_workload> make_stats_lock(const workload_config& c, holder_stall& stall) {
  return std::make_unique<stats_lock_workload>(c, stall);
}

}  // namespace spinwise::stress
