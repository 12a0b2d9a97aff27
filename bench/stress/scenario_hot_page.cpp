// hot-page: SQL Server's last-page latch hot spot (workload.hpp). A sub-query is a transaction of
// `inserts` + `updates` + `selects` statements in random order, each with the same work / latch /
// work shape. An insert takes the next key of an increasing sequence and latches the page that
// key lands on (the last page) exclusively; an update latches a random page exclusively; a select
// latches a random page shared.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "emulated_relaxer.hpp"
#include "scenario.hpp"

namespace spinwise::stress {

namespace {

struct alignas(kCacheLinePad) page_data {
  std::uint64_t rows = 0;
  std::uint64_t version = 0;  // bumped by every exclusive holder
  std::uint64_t checksum = 0;
};

enum statement : std::uint8_t { kInsert = 0, kUpdate = 1, kSelect = 2 };

class hot_page_workload final : public scenario_workload {
 public:
  hot_page_workload(const workload_config& c, holder_stall& stall)
      : cfg_(c), latches_(c.lock, c.pages, stall), pages_(c.pages) {
    statement_kinds_.insert(statement_kinds_.end(), c.inserts, kInsert);
    statement_kinds_.insert(statement_kinds_.end(), c.updates, kUpdate);
    statement_kinds_.insert(statement_kinds_.end(), c.selects, kSelect);
  }

  void subquery(worker_stats& w, rng& r, bool measuring) override {
    // Statement order shuffled per transaction (Fisher-Yates over a small local copy).
    std::uint8_t order[3000];
    const std::size_t n = statement_kinds_.size();
    std::copy(statement_kinds_.begin(), statement_kinds_.end(), order);
    for (std::size_t i = n; i > 1; --i)
      std::swap(order[i - 1], order[r.below(static_cast<std::uint32_t>(i))]);
    for (std::size_t s = 0; s < n; ++s) {
      busy_work_ns(cfg_.work_before_ns);
      if (order[s] == kInsert) {
        insert(w, measuring);
      } else if (order[s] == kUpdate) {
        update(w, r, measuring);
      } else {
        select(w, r, measuring);
      }
      busy_work_ns(cfg_.work_after_ns);
    }
  }

  // Every exclusive holder bumped its page's version once: a lost bump means two holders.
  std::uint64_t exclusion_errors(const std::vector<worker_stats>& workers) const override {
    std::uint64_t versions = 0, writes = 0;
    for (const page_data& p : pages_) versions += p.version;
    for (const worker_stats& w : workers) writes += w.x_writes_all;
    return versions != writes ? 1 : 0;
  }

 private:
  // The next key lands on the last page.
  void insert(worker_stats& w, bool measuring) {
    const std::uint64_t key = next_key_.fetch_add(1, std::memory_order_relaxed);
    const std::size_t p = static_cast<std::size_t>((key / cfg_.rows_per_page) % cfg_.pages);
    write_page(w, p, &w.insert_waits, &w.inserts, measuring, SPINWISE_SITE, [&](page_data& pg) {
      pg.rows = key % cfg_.rows_per_page + 1;
      pg.checksum += key;
    });
  }

  // A random page, exclusively.
  void update(worker_stats& w, rng& r, bool measuring) {
    const std::size_t p = r.below(cfg_.pages);
    write_page(w, p, &w.update_waits, &w.updates, measuring, SPINWISE_SITE,
               [&](page_data& pg) { pg.checksum ^= r.next(); });
  }

  // Page p under its latch, exclusively: `change` it and bump its version, which the exclusion
  // check counts against the writes. `waits` and `done` are the statement kind's counters, `site`
  // its line (the insert's or the update's, as lock tracking reports it).
  template <class Change>
  void write_page(worker_stats& w, std::size_t p, std::uint64_t* waits, std::uint64_t* done, bool measuring,
                  lock_site site, Change&& change) {
    const std::uint64_t t = latches_.acquire(w, p, false, waits, measuring, site);
    page_data& pg = pages_[p];
    change(pg);
    ++pg.version;
    busy_work_ns(cfg_.cs_ns);
    latches_.release(w, p, false, t, measuring);
    ++w.x_writes_all;
    if (measuring) ++*done;
  }

  // A random page, shared.
  void select(worker_stats& w, rng& r, bool measuring) {
    const std::size_t p = r.below(cfg_.pages);
    const std::uint64_t t = latches_.acquire(w, p, true, &w.select_waits, measuring, SPINWISE_SITE);
    const page_data& pg = pages_[p];
    w.read_sink += pg.rows + pg.version + pg.checksum;
    busy_work_ns(cfg_.cs_ns);
    latches_.release(w, p, true, t, measuring);
    if (measuring) ++w.selects;
  }

  const workload_config& cfg_;
  metered_latches latches_;
  std::vector<page_data> pages_;  // page i guarded by latch i
  std::atomic<std::uint64_t> next_key_{0};
  std::vector<std::uint8_t> statement_kinds_;
};

}  // namespace

std::unique_ptr<scenario_workload> make_hot_page(const workload_config& c, holder_stall& stall) {
  return std::make_unique<hot_page_workload>(c, stall);
}

}  // namespace spinwise::stress
