#include "workload.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "histogram.hpp"
#include "running_monitor.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace spinwise::stress {

std::string_view to_string(scenario s) noexcept { return s == scenario::stats_lock ? "stats-lock" : "hot-page"; }

bool parse_scenario(std::string_view s, scenario& out) noexcept {
  for (scenario x : {scenario::stats_lock, scenario::hot_page}) {
    if (to_string(x) == s) {
      out = x;
      return true;
    }
  }
  return false;
}

std::string_view default_lock(scenario s) noexcept { return s == scenario::stats_lock ? "hybrid_mutex" : "sx_lock"; }

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned default_threads(unsigned cpus) {
  return std::max(2u, static_cast<unsigned>(std::lround(12.5 * static_cast<double>(cpus))));
}

namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

workload_config resolve(workload_config c) {
  const bool stats = c.sc == scenario::stats_lock;
  if (c.lock.lock.empty()) c.lock.lock = std::string(default_lock(c.sc));
  if (c.threads == 0) c.threads = default_threads(available_cpus());
  if (c.clients == 0) c.clients = stats ? 1 : 100;
  if (c.fanout == 0) c.fanout = stats ? 256 : 1;
  require(c.threads <= 4096, "--threads must be in 1..4096, got " + std::to_string(c.threads));
  require(c.clients <= 4096, "--clients must be in 1..4096, got " + std::to_string(c.clients));
  require(c.fanout <= 65536, "--fanout must be in 1..65536, got " + std::to_string(c.fanout));
  require(c.duration_s > 0 && c.duration_s <= 86400, "--duration must be in (0, 86400] s, got " + num(c.duration_s));
  if (c.warmup_s < 0) c.warmup_s = std::min(1.0, c.duration_s / 5);
  require(c.warmup_s < c.duration_s, "--warmup must be shorter than --duration (" + num(c.warmup_s) +
                                         " s >= " + num(c.duration_s) + " s)");
  const auto ns_ok = [](double v) { return v >= 0 && v <= 1e9; };
  require(ns_ok(c.work_before_ns), "--work-before-ns must be in 0..1e9, got " + num(c.work_before_ns));
  require(ns_ok(c.cs_ns), "--cs-ns must be in 0..1e9, got " + num(c.cs_ns));
  require(ns_ok(c.work_after_ns), "--work-after-ns must be in 0..1e9, got " + num(c.work_after_ns));
  require(c.inserts + c.updates + c.selects > 0 && c.inserts <= 1000 && c.updates <= 1000 && c.selects <= 1000,
          "--inserts, --updates and --selects must each be in 0..1000 and not all 0");
  require(c.rows_per_page >= 1 && c.rows_per_page <= 1'000'000,
          "--rows-per-page must be in 1..1000000, got " + std::to_string(c.rows_per_page));
  require(c.pages >= 1 && c.pages <= 1'000'000, "--pages must be in 1..1000000, got " + std::to_string(c.pages));
  require(c.sample_ms >= 0.1 && c.sample_ms <= 10000, "--sample-ms must be in 0.1..10000, got " + num(c.sample_ms));
  if (c.cpu == cpu_model::custom) {
    require(c.relax_ns > 0 && c.relax_ns <= 100'000, "--relax-ns must be in (0, 100000] ns, got " + num(c.relax_ns));
  }
  resolve_policy(c.lock);  // unknown lock, wrong policy or a knob the policy lacks
  return c;
}

namespace {

using clock_type = std::chrono::steady_clock;

double now_process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

latency_summary summarize_ticks(const latency_histogram& h) {
  latency_summary s;
  s.count = h.count();
  s.mean_ns = h.mean() * 1e9 / calibration().counter_hz;
  s.p50_ns = ticks_to_ns(h.percentile(50));
  s.p99_ns = ticks_to_ns(h.percentile(99));
  s.p999_ns = ticks_to_ns(h.percentile(99.9));
  s.max_ns = ticks_to_ns(h.max());
  return s;
}

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
  std::uint32_t below(std::uint32_t n) noexcept { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
};

// One client's request in flight. The client writes the fields, then publishes the request by
// storing next = 0 (release); a worker claims index i by fetch_add on next (acquire: pairs with
// that store) and reports it done with fetch_add on done. The worker that completes the request
// hands it back under mu.
struct alignas(kCacheLinePad) request_slot {
  std::atomic<std::uint32_t> next{~0u >> 1};  // no request yet: every claim fails
  alignas(kCacheLinePad) std::atomic<std::uint32_t> done{0};
  std::vector<std::atomic<std::uint8_t>> executed;  // verify mode: index i ran (once)

  std::mutex mu;
  std::condition_variable cv;
  bool complete = false;            // guarded by mu
  bool counted = false;             // guarded by mu: completed inside the window
  std::uint64_t complete_ticks = 0; // guarded by mu

  // the client's own
  std::uint64_t issued = 0, completed = 0;
  latency_histogram rt;
};

struct alignas(kCacheLinePad) worker_stats {
  latency_histogram subquery_rt, hold, wait;
  std::uint64_t executed_all = 0;  // every sub-query run, window or not
  std::uint64_t subqueries = 0, acquisitions = 0, waits = 0;
  std::uint64_t hold_ticks = 0;
  std::uint64_t inserts = 0, updates = 0, selects = 0;
  std::uint64_t insert_waits = 0, update_waits = 0, select_waits = 0;
  std::uint64_t x_writes_all = 0;  // exclusive page writes (window or not), for the exclusion check
  std::uint64_t read_sink = 0;
};

// The incident's statistics: what the latch protects. Plain fields: the lock is their only guard.
struct alignas(kCacheLinePad) index_statistics {
  std::uint64_t updates = 0;
  std::uint64_t rows_estimate = 0;
};

struct alignas(kCacheLinePad) page_data {
  std::uint64_t rows = 0;
  std::uint64_t version = 0;  // bumped by every exclusive holder
  std::uint64_t checksum = 0;
};

class engine {
 public:
  explicit engine(const workload_config& c)
      : cfg_(c),
        latches_(make_latch_set(c.lock, c.sc == scenario::stats_lock ? 1 : c.pages)),
        pages_(c.sc == scenario::hot_page ? c.pages : 0),
        workers_(c.threads) {
    for (unsigned i = 0; i < c.clients; ++i) {
      slots_.push_back(std::make_unique<request_slot>());
      if (c.verify) slots_.back()->executed = std::vector<std::atomic<std::uint8_t>>(c.fanout);
    }
    statement_kinds_.insert(statement_kinds_.end(), c.inserts, 0);
    statement_kinds_.insert(statement_kinds_.end(), c.updates, 1);
    statement_kinds_.insert(statement_kinds_.end(), c.selects, 2);
  }

  run_result run();

 private:
  void worker_main(unsigned id);
  void client_main(unsigned id);
  bool claim_and_run(unsigned id, rng& r);
  void run_subquery(unsigned id, rng& r);
  void stats_subquery(worker_stats& w, bool measuring);
  void transaction(worker_stats& w, rng& r, bool measuring);
  void post_work();
  void shut_down();  // stop claiming, wake every waiting worker and client

  // The latch, instrumented: a failed try is a latch wait (SQL Server's and InnoDB's meaning).
  // `measuring` is read once per sub-query, so all of its counts land on the same side of the
  // window's edges.
  std::uint64_t acquire(worker_stats& w, std::size_t i, bool shared, std::uint64_t* waits, bool measuring);
  void release(worker_stats& w, std::size_t i, bool shared, std::uint64_t t_acquired, bool measuring);

  const workload_config& cfg_;
  std::unique_ptr<latch_set> latches_;
  index_statistics stats_;       // guarded by latch 0 (stats-lock)
  std::vector<page_data> pages_;  // page i guarded by latch i (hot-page)
  std::atomic<std::uint64_t> next_key_{0};
  std::vector<worker_stats> workers_;
  std::vector<std::unique_ptr<request_slot>> slots_;
  std::vector<std::uint8_t> statement_kinds_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::atomic<std::uint64_t> post_seq_{0};
  std::atomic<std::uint64_t> double_executed_{0};
  std::atomic<std::uint64_t> missing_{0};
};

std::uint64_t engine::acquire(worker_stats& w, std::size_t i, bool shared, std::uint64_t* waits, bool measuring) {
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

void engine::release(worker_stats& w, std::size_t i, bool shared, std::uint64_t t_acquired, bool measuring) {
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

void engine::stats_subquery(worker_stats& w, bool measuring) {
  busy_work_ns(cfg_.work_before_ns);
  const std::uint64_t t = acquire(w, 0, false, nullptr, measuring);
  ++stats_.updates;
  stats_.rows_estimate = stats_.rows_estimate * 31 + 7;
  busy_work_ns(cfg_.cs_ns);
  release(w, 0, false, t, measuring);
  busy_work_ns(cfg_.work_after_ns);
}

void engine::transaction(worker_stats& w, rng& r, bool measuring) {
  // Statement order shuffled per transaction (Fisher-Yates over a small local copy).
  std::uint8_t order[3000];
  const std::size_t n = statement_kinds_.size();
  std::copy(statement_kinds_.begin(), statement_kinds_.end(), order);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[r.below(static_cast<std::uint32_t>(i))]);
  for (std::size_t s = 0; s < n; ++s) {
    busy_work_ns(cfg_.work_before_ns);
    if (order[s] == 0) {  // insert: the next key lands on the last page
      const std::uint64_t key = next_key_.fetch_add(1, std::memory_order_relaxed);
      const std::size_t p = static_cast<std::size_t>((key / cfg_.rows_per_page) % cfg_.pages);
      const std::uint64_t t = acquire(w, p, false, &w.insert_waits, measuring);
      page_data& pg = pages_[p];
      pg.rows = key % cfg_.rows_per_page + 1;
      pg.checksum += key;
      ++pg.version;
      busy_work_ns(cfg_.cs_ns);
      release(w, p, false, t, measuring);
      ++w.x_writes_all;
      if (measuring) ++w.inserts;
    } else if (order[s] == 1) {  // update: a random page, exclusively
      const std::size_t p = r.below(cfg_.pages);
      const std::uint64_t t = acquire(w, p, false, &w.update_waits, measuring);
      page_data& pg = pages_[p];
      pg.checksum ^= r.next();
      ++pg.version;
      busy_work_ns(cfg_.cs_ns);
      release(w, p, false, t, measuring);
      ++w.x_writes_all;
      if (measuring) ++w.updates;
    } else {  // select: a random page, shared
      const std::size_t p = r.below(cfg_.pages);
      const std::uint64_t t = acquire(w, p, true, &w.select_waits, measuring);
      const page_data& pg = pages_[p];
      w.read_sink += pg.rows + pg.version + pg.checksum;
      busy_work_ns(cfg_.cs_ns);
      release(w, p, true, t, measuring);
      if (measuring) ++w.selects;
    }
    busy_work_ns(cfg_.work_after_ns);
  }
}

void engine::run_subquery(unsigned id, rng& r) {
  worker_stats& w = workers_[id];
  const bool measuring = measuring_.load(std::memory_order_relaxed);
  const std::uint64_t t0 = read_counter();
  if (cfg_.sc == scenario::stats_lock) {
    stats_subquery(w, measuring);
  } else {
    transaction(w, r, measuring);
  }
  const std::uint64_t t1 = read_counter();
  ++w.executed_all;
  if (measuring) {
    ++w.subqueries;
    w.subquery_rt.record(t1 - t0);
  }
}

bool engine::claim_and_run(unsigned id, rng& r) {
  const std::size_t n = slots_.size();
  for (std::size_t k = 0; k < n; ++k) {
    request_slot& s = *slots_[(id + k) % n];
    if (s.next.load(std::memory_order_relaxed) >= cfg_.fanout) continue;
    // acquire: pairs with the client's release store of next = 0 that published the request.
    const std::uint32_t i = s.next.fetch_add(1, std::memory_order_acquire);
    if (i >= cfg_.fanout) continue;
    if (cfg_.verify && s.executed[i].exchange(1, std::memory_order_relaxed) != 0) {
      double_executed_.fetch_add(1, std::memory_order_relaxed);
    }
    run_subquery(id, r);
    // acq_rel: the last finisher sees every other sub-query's effects before completing.
    if (s.done.fetch_add(1, std::memory_order_acq_rel) + 1 == cfg_.fanout) {
      const std::uint64_t end = read_counter();
      const bool counted = measuring_.load(std::memory_order_relaxed) && !stop_.load(std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> g(s.mu);
        s.complete = true;
        s.counted = counted;
        s.complete_ticks = end;
      }
      s.cv.notify_one();
    }
    return true;
  }
  return false;
}

void engine::post_work() {
  {
    std::lock_guard<std::mutex> g(pool_mu_);
    post_seq_.fetch_add(1, std::memory_order_relaxed);
  }
  pool_cv_.notify_all();
}

void engine::worker_main(unsigned id) {
  seed_spin_jitter(detail::mix64(cfg_.seed * 0x9e3779b97f4a7c15ull + id + 1));
  rng r(cfg_.seed * 1000003u + id);
  for (;;) {
    if (stop_.load(std::memory_order_relaxed)) break;
    const std::uint64_t seen = post_seq_.load(std::memory_order_acquire);
    if (claim_and_run(id, r)) continue;
    std::unique_lock<std::mutex> lk(pool_mu_);
    pool_cv_.wait(lk, [&] {
      return post_seq_.load(std::memory_order_relaxed) != seen || stop_.load(std::memory_order_relaxed);
    });
  }
}

void engine::client_main(unsigned id) {
  request_slot& s = *slots_[id];
  while (!stop_.load(std::memory_order_relaxed)) {
    s.done.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> g(s.mu);
      s.complete = false;
    }
    const std::uint64_t issue = read_counter();
    ++s.issued;
    s.next.store(0, std::memory_order_release);  // publish: workers may claim from here on
    post_work();
    bool complete, counted;
    std::uint64_t end;
    {
      std::unique_lock<std::mutex> lk(s.mu);
      s.cv.wait(lk, [&] { return s.complete || stop_.load(std::memory_order_relaxed); });
      complete = s.complete;
      counted = s.counted;
      end = s.complete_ticks;
    }
    if (!complete) break;  // cut off by the end of the run
    ++s.completed;
    if (counted) s.rt.record(end - issue);
    if (cfg_.verify) {
      for (auto& e : s.executed) {
        if (e.exchange(0, std::memory_order_relaxed) == 0) missing_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
}

// The run's CPU and scheduling counters at one instant.
struct instant {
  clock_type::time_point wall;
  double cpu_ns = 0;
  rusage ru{};
  spin_totals spin;
  stats_snapshot stats;  // the lock classes' statistics (<spinwise/runtime/stats_report.hpp>)

  static instant now() {
    instant i;
    i.wall = clock_type::now();
    i.cpu_ns = now_process_cpu_ns();
    getrusage(RUSAGE_SELF, &i.ru);
    i.spin = spin_snapshot();
    i.stats = take_stats_snapshot();
    return i;
  }
};

void engine::shut_down() {
  stop_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> g(pool_mu_);  // a worker between its check and its wait sees stop
  }
  pool_cv_.notify_all();
  for (auto& s : slots_) {
    { std::lock_guard<std::mutex> g(s->mu); }  // likewise a client
    s->cv.notify_all();
  }
}

run_result engine::run() {
  run_result res;
  res.config = cfg_;
  res.cpus = available_cpus();
  res.policy = resolve_policy(cfg_.lock);

  const relax_calibration& cal = calibration();
  const relax_plan plan = make_plan(cfg_.cpu, cfg_.relax_ns);
  emulated_relaxer::configure(plan);
  apply_knobs(cfg_.lock);
  res.knobs = effective_knobs(res.policy);
  res.native_kind = cal.kind;
  res.native_relax_ns = cal.native_relax_ns;
  res.loop_iter_ns = cal.loop_iter_ns;
  res.emulated_relax_ns = plan.target_ns;
  res.achieved_relax_ns = emulated_relaxer::measure_achieved_ns(2000);

  const auto t_start = clock_type::now();
  std::vector<std::thread> threads;
  threads.reserve(cfg_.threads + cfg_.clients);
  try {
    for (unsigned i = 0; i < cfg_.threads; ++i) threads.emplace_back([this, i] { worker_main(i); });
    for (unsigned i = 0; i < cfg_.clients; ++i) threads.emplace_back([this, i] { client_main(i); });
  } catch (const std::system_error& e) {  // out of threads: stop the ones started, then say so
    shut_down();
    for (std::thread& t : threads) t.join();
    throw std::runtime_error(std::string("cannot start ") + std::to_string(cfg_.threads + cfg_.clients) +
                             " threads: " + e.what());
  }
  running_monitor monitor(cfg_.sample_ms, measuring_);

  const auto warm_end = t_start + std::chrono::duration_cast<clock_type::duration>(
                                      std::chrono::duration<double>(cfg_.warmup_s));
  const auto run_end = t_start + std::chrono::duration_cast<clock_type::duration>(
                                     std::chrono::duration<double>(cfg_.duration_s));
  std::this_thread::sleep_until(warm_end);
  const instant a = instant::now();
  measuring_.store(true, std::memory_order_relaxed);
  std::this_thread::sleep_until(run_end);
  measuring_.store(false, std::memory_order_relaxed);
  const instant b = instant::now();

  monitor.stop();
  shut_down();
  for (std::thread& t : threads) t.join();
  res.total_s = std::chrono::duration<double>(clock_type::now() - t_start).count();

  // --- what the window measured ---
  res.window_s = std::chrono::duration<double>(b.wall - a.wall).count();
  latency_histogram req, sub, hold, wait;
  std::uint64_t hold_ticks = 0;
  for (const worker_stats& w : workers_) {
    sub.merge(w.subquery_rt);
    hold.merge(w.hold);
    wait.merge(w.wait);
    hold_ticks += w.hold_ticks;
    res.subqueries += w.subqueries;
    res.acquisitions += w.acquisitions;
    res.latch_waits += w.waits;
    res.inserts += w.inserts;
    res.updates += w.updates;
    res.selects += w.selects;
    res.insert_waits += w.insert_waits;
    res.update_waits += w.update_waits;
    res.select_waits += w.select_waits;
    res.subqueries_executed_all += w.executed_all;
  }
  for (const auto& s : slots_) {
    req.merge(s->rt);
    res.requests_issued += s->issued;
    res.requests_completed_all += s->completed;
    if (s->issued > s->completed) res.subqueries_in_cut_requests += s->done.load(std::memory_order_relaxed);
  }
  res.requests = req.count();
  res.requests_per_s = static_cast<double>(res.requests) / res.window_s;
  res.subqueries_per_s = static_cast<double>(res.subqueries) / res.window_s;
  res.request_rt = summarize_ticks(req);
  res.subquery_rt = summarize_ticks(sub);
  res.lock_hold = summarize_ticks(hold);
  res.lock_wait = summarize_ticks(wait);
  res.latch_waits_per_s = static_cast<double>(res.latch_waits) / res.window_s;
  res.lock_busy_share = ticks_to_ns(hold_ticks) / (res.window_s * 1e9);

  res.spin_ns = ticks_to_ns(b.spin.ticks - a.spin.ticks);
  res.process_cpu_ns = b.cpu_ns - a.cpu_ns;
  res.spin_cpu_share = res.process_cpu_ns > 0 ? res.spin_ns / res.process_cpu_ns : 0;
  res.spin_machine_share = res.spin_ns / (res.window_s * 1e9 * res.cpus);
  res.spin_rounds = b.spin.calls - a.spin.calls;
  res.zero_rounds = b.spin.zero_calls - a.spin.zero_calls;
  res.relaxes = b.spin.relaxes - a.spin.relaxes;
  res.clipped_rounds = b.spin.clipped - a.spin.clipped;

  const lock_info* info = find_lock(cfg_.lock.lock);
  res.counted = info->spinwise;
  res.parking_lock = info->parks;
  if (res.counted) {
    res.spin_episodes = b.spin.episodes - a.spin.episodes;
    res.budgets_spent = b.spin.budgets_spent - a.spin.budgets_spent;
    res.parks = res.parking_lock ? res.budgets_spent : 0;
    if (info->lock_stats) {
      const stats_snapshot d = diff_stats(a.stats, b.stats);
      for (const lock_class_stats& c : d.classes) {
        if (c.name != kStressLatchClass) continue;
        res.parks_exact = true;
        res.parks = c.totals.parks;
        res.yields = c.totals.yields;
        res.contended = c.totals.contended;
        stats_snapshot only = d;
        only.classes = {c};
        res.semaphores = format_stats_text(only);
      }
    }
    res.parks_per_s = static_cast<double>(res.parks) / res.window_s;
    res.budgets_spent_per_s = static_cast<double>(res.budgets_spent) / res.window_s;
  }
  if (res.counted && res.semaphores.empty()) {
    char buf[512];
    const std::uint64_t rounds = res.spin_rounds + res.zero_rounds;
    std::snprintf(buf, sizeof buf,
                  "  SEMAPHORES (%s, window): spin waits %llu, rounds %llu, %s %llu\n"
                  "    spin rounds per wait: %.2f; time in spin delays %.3f s (%.1f%% of process CPU)\n",
                  cfg_.lock.lock.c_str(), static_cast<unsigned long long>(res.spin_episodes),
                  static_cast<unsigned long long>(rounds), res.parking_lock ? "OS waits" : "yield phases",
                  static_cast<unsigned long long>(res.budgets_spent),
                  res.spin_episodes ? static_cast<double>(rounds) / static_cast<double>(res.spin_episodes) : 0.0,
                  res.spin_ns / 1e9, 100.0 * res.spin_cpu_share);
    res.semaphores = buf;
  }

  res.vcsw = static_cast<std::uint64_t>(b.ru.ru_nvcsw - a.ru.ru_nvcsw);
  res.ivcsw = static_cast<std::uint64_t>(b.ru.ru_nivcsw - a.ru.ru_nivcsw);
  res.vcsw_per_s = static_cast<double>(res.vcsw) / res.window_s;
  res.ivcsw_per_s = static_cast<double>(res.ivcsw) / res.window_s;

  const running_monitor::summary rs = monitor.result();
  res.run_samples = rs.samples;
  res.running_mean = rs.mean;
  res.running_stddev = rs.stddev;
  res.running_p50 = rs.p50;
  res.running_p99 = rs.p99;
  res.running_max = rs.max;
  res.running_series = rs.series;

  res.double_executed = double_executed_.load(std::memory_order_relaxed);
  res.missing = missing_.load(std::memory_order_relaxed);
  if (cfg_.sc == scenario::stats_lock) {
    if (stats_.updates != res.subqueries_executed_all) ++res.exclusion_errors;
  } else {
    std::uint64_t versions = 0, writes = 0;
    for (const page_data& p : pages_) versions += p.version;
    for (const worker_stats& w : workers_) writes += w.x_writes_all;
    if (versions != writes) ++res.exclusion_errors;
  }
  return res;
}

}  // namespace

run_result run_workload(const workload_config& config) {
  const workload_config c = resolve(config);
  engine e(c);
  return e.run();
}

}  // namespace spinwise::stress
