// The engine behind run_workload(): a pool of worker threads, closed-loop clients that hand them
// requests, and the measurement window. What a sub-query does is the scenario's (scenario.hpp);
// what the window's edges measured is measurement.cpp's.
//
// A client publishes a request of `fanout` sub-queries; idle workers claim its indexes one at a
// time; the worker that finishes the last one hands the request back, and the client issues the
// next. At the end workers stop claiming, so a run ends on time whatever the lock does, and a
// request cut off that way is not counted. The window ends at `duration_s`, or once it has counted
// `min_requests` requests if that is later, and never after `max_duration_s`.
//
// --relax-drift starts the emulated relax's pattern at the run's start, before any thread, and
// stops it after the last join (drift_scope). --stall-holder-ms is armed at the middle of the
// planned window (scenario.hpp holder_stall); a stall that outlasts the window delays the join.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "measurement.hpp"
#include "running_monitor.hpp"
#include "scenario.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "workload.hpp"

namespace spinwise::stress {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds(clock_type::duration d) { return std::chrono::duration<double>(d).count(); }

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
  bool complete = false;             // guarded by mu
  bool counted = false;              // guarded by mu: completed inside the window
  std::uint64_t complete_ticks = 0;  // guarded by mu

  // the client's own
  std::uint64_t issued = 0, completed = 0;
  bench::latency_histogram rt;
};

// The window's two edges.
struct window_edges {
  instant a, b;
};

// The drifting relax for the life of a run (a run cut short by an exception stops it too).
class drift_scope {
 public:
  drift_scope(const workload_config& c, std::uint64_t start_ticks) : on_(c.relax_drift > 1.0) {
    if (on_) emulated_relaxer::start_drift({c.relax_drift, drift_seed(c.seed)}, start_ticks);
  }
  ~drift_scope() {
    if (on_) emulated_relaxer::stop_drift();
  }
  drift_scope(const drift_scope&) = delete;
  drift_scope& operator=(const drift_scope&) = delete;

 private:
  bool on_;
};

class engine {
 public:
  explicit engine(const workload_config& c)
      : cfg_(c), stall_(c.stall_holder_ms), scenario_(make_scenario(c, stall_)), workers_(c.threads) {
    for (unsigned i = 0; i < c.clients; ++i) {
      slots_.push_back(std::make_unique<request_slot>());
      if (c.verify) slots_.back()->executed = std::vector<std::atomic<std::uint8_t>>(c.fanout);
    }
  }

  // A run cut short by an exception still stops and joins its threads.
  ~engine() {
    if (!threads_.empty()) stop_threads();
  }
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  run_result run();

 private:
  // --- the threads ---
  void worker_main(unsigned id);
  void client_main(unsigned id);
  bool claim_and_run(unsigned id, rng& r);
  void run_subquery(unsigned id, rng& r);
  void complete_request(request_slot& s);
  void post_work();

  // --- run(), step by step ---
  run_result prepare_emulation_and_knobs() const;
  void start_threads();
  window_edges measure_window(clock_type::time_point t_start);
  void shut_down();  // stop claiming, wake every waiting worker and client
  void stop_threads();
  void prepare_delay_samples();
  void add_worker_figures(run_result& res) const;
  void add_client_figures(run_result& res) const;
  spin_tally measured_spin() const;
  void add_accounting(run_result& res) const;

  const workload_config& cfg_;
  holder_stall stall_;  // before scenario_, whose latches refer to it
  std::unique_ptr<scenario_workload> scenario_;
  std::vector<worker_stats> workers_;
  std::vector<std::unique_ptr<request_slot>> slots_;
  std::vector<std::thread> threads_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::atomic<std::uint64_t> post_seq_{0};
  std::atomic<std::uint64_t> double_executed_{0};
  std::atomic<std::uint64_t> missing_{0};
  std::atomic<std::uint64_t> counted_requests_{0};  // completed inside the window, so far
};

// --- the threads ----------------------------------------------------------------------------

void engine::run_subquery(unsigned id, rng& r) {
  worker_stats& w = workers_[id];
  const bool measuring = measuring_.load(std::memory_order_relaxed);
  const spin_tally before = this_thread_tally();
  t_delay_sink = measuring ? &w.delays : nullptr;
  const std::uint64_t t0 = read_counter();
  scenario_->subquery(w, r, measuring);
  const std::uint64_t t1 = read_counter();
  t_delay_sink = nullptr;
  ++w.executed_all;
  if (measuring) {
    ++w.subqueries;
    w.subquery_rt.record(t1 - t0);
    w.spin += this_thread_tally() - before;
  }
}

void engine::complete_request(request_slot& s) {
  const std::uint64_t end = read_counter();
  const bool counted = measuring_.load(std::memory_order_relaxed) && !stop_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> g(s.mu);
    s.complete = true;
    s.counted = counted;
    s.complete_ticks = end;
  }
  if (counted) counted_requests_.fetch_add(1, std::memory_order_relaxed);
  s.cv.notify_one();
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
    if (s.done.fetch_add(1, std::memory_order_acq_rel) + 1 == cfg_.fanout) complete_request(s);
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

// --- run(), step by step --------------------------------------------------------------------------

// The configuration, the lock's policy and knobs, and the emulated relax: set before any thread
// starts, since the relaxer's plan is read without ordering.
run_result engine::prepare_emulation_and_knobs() const {
  run_result res;
  res.config = cfg_;
  res.cpus = available_cpus();
  res.policy = resolve_policy(cfg_.lock);

  use_loop_calibration(cfg_.calibrate_ms);  // before the plan: its loop part uses the figure
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
  return res;
}

// What every worker's delay sample needs to time a delay, before the workers start.
void engine::prepare_delay_samples() {
  const double hz = static_cast<double>(counter_frequency());
  const double overhead = runtime::counter_read_overhead();
  for (worker_stats& w : workers_) {
    w.delays.hz = hz;
    w.delays.read_overhead_ticks = overhead;
  }
}

void engine::start_threads() {
  threads_.reserve(cfg_.threads + cfg_.clients);
  try {
    for (unsigned i = 0; i < cfg_.threads; ++i) threads_.emplace_back([this, i] { worker_main(i); });
    for (unsigned i = 0; i < cfg_.clients; ++i) threads_.emplace_back([this, i] { client_main(i); });
  } catch (const std::system_error& e) {  // out of threads: stop the ones started, then say so
    stop_threads();
    throw std::runtime_error(std::string("cannot start ") + std::to_string(cfg_.threads + cfg_.clients) +
                             " threads: " + e.what());
  }
}

// Sleeps through the warm-up, then measures until the end of the run: `duration_s`, or later if
// the window has not yet counted `min_requests` requests, but never past `max_duration_s`.
window_edges engine::measure_window(clock_type::time_point t_start) {
  const auto at = [&](double s) {
    return t_start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
  };
  window_edges w;
  std::this_thread::sleep_until(at(cfg_.warmup_s));
  w.a = instant::now();
  measuring_.store(true, std::memory_order_relaxed);
  if (cfg_.stall_holder_ms > 0) {
    std::this_thread::sleep_until(at((cfg_.warmup_s + cfg_.duration_s) / 2));
    stall_.arm();
  }
  std::this_thread::sleep_until(at(cfg_.duration_s));
  const clock_type::time_point last = at(cfg_.max_duration_s);
  for (;;) {
    const std::uint64_t n = counted_requests_.load(std::memory_order_relaxed);
    const clock_type::time_point now = clock_type::now();
    if (n >= cfg_.min_requests || now >= last) break;
    // The time the missing requests take at the rate so far (10 ms when none has completed yet),
    // in steps of at most 100 ms so a rate that picks up is seen.
    const double elapsed = seconds(now - w.a.wall);
    const double need =
        n > 0 ? static_cast<double>(cfg_.min_requests - n) * elapsed / static_cast<double>(n) : 0.01;
    const double step = std::min(0.1, std::max(0.001, need));
    std::this_thread::sleep_until(std::min(
        last, now + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(step))));
  }
  measuring_.store(false, std::memory_order_relaxed);
  w.b = instant::now();
  return w;
}

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

void engine::stop_threads() {
  shut_down();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

// Sub-queries, latch holds and waits, and hot-page statements, summed over the workers.
void engine::add_worker_figures(run_result& res) const {
  bench::latency_histogram sub, hold, wait;
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
  res.subqueries_per_s = static_cast<double>(res.subqueries) / res.window_s;
  res.subquery_rt = summarize_ticks(sub);
  res.lock_hold = summarize_ticks(hold);
  res.lock_wait = summarize_ticks(wait);
  res.latch_waits_per_s = static_cast<double>(res.latch_waits) / res.window_s;
  res.lock_busy_share = ticks_to_ns(static_cast<double>(hold_ticks)) / (res.window_s * 1e9);
  delay_sample delays;
  for (const worker_stats& w : workers_) delays.merge(w.delays);
  add_delay_figures(res, delays);
}

// Requests and their response times, summed over the clients.
void engine::add_client_figures(run_result& res) const {
  bench::latency_histogram req;
  for (const auto& s : slots_) {
    req.merge(s->rt);
    res.requests_issued += s->issued;
    res.requests_completed_all += s->completed;
    if (s->issued > s->completed) res.subqueries_in_cut_requests += s->done.load(std::memory_order_relaxed);
  }
  res.requests = req.count();
  res.requests_per_s = static_cast<double>(res.requests) / res.window_s;
  res.request_rt = summarize_ticks(req);
}

spin_tally engine::measured_spin() const {
  spin_tally t;
  for (const worker_stats& w : workers_) t += w.spin;
  return t;
}

void engine::add_accounting(run_result& res) const {
  res.double_executed = double_executed_.load(std::memory_order_relaxed);
  res.missing = missing_.load(std::memory_order_relaxed);
  res.exclusion_errors = scenario_->exclusion_errors(workers_);
}

run_result engine::run() {
  run_result res = prepare_emulation_and_knobs();
  prepare_delay_samples();
  const clock_type::time_point t_start = clock_type::now();
  const drift_scope drift(cfg_, read_counter());
  start_threads();
  running_monitor monitor(cfg_.sample_ms, measuring_);
  const window_edges w = measure_window(t_start);
  monitor.stop();
  stop_threads();
  res.total_s = seconds(clock_type::now() - t_start);
  res.window_s = seconds(w.b.wall - w.a.wall);
  res.holder_stalled = stall_.fired();
  if (cfg_.relax_drift > 1.0) {
    const drift_pattern p{cfg_.relax_drift, drift_seed(cfg_.seed)};
    res.drift_mean_level =
        drift_mean_level(p, seconds(w.a.wall - t_start) * 1e9, seconds(w.b.wall - t_start) * 1e9);
  }

  add_worker_figures(res);
  add_client_figures(res);
  add_spin_and_waits(res, w.a, w.b, measured_spin());
  add_context_switches(res, w.a, w.b);
  res.running = monitor.result();
  add_accounting(res);
  if (res.policy == policy_kind::adaptive) {
    res.adaptive_budget_ns = adaptive_budget_ns();
    res.adaptive_decisions = adaptive_decisions();
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
