#include "spinwise/runtime/lock_watch.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "spinwise/arch.hpp"
#include "spinwise/detail/lock_tracking.hpp"
#include "spinwise/lock_stats.hpp"

namespace spinwise {
namespace {

std::error_code switch_class(std::string_view name, std::uint8_t mask, bool on) {
  detail::stats_class_record* r = detail::stats_class_named(name);
  if (r == nullptr) return make_error_code(errc::unknown_stats_class);
  r->set_switches(mask, on);
  return {};
}

std::string trim(std::string_view v) {  // any whitespace: a spec may come from a file or a variable
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!v.empty() && space(v.front())) v.remove_prefix(1);
  while (!v.empty() && space(v.back())) v.remove_suffix(1);
  return std::string(v);
}

// A copy of one tracked entry, taken inside the thread's sequence lock.
struct entry_copy {
  std::uintptr_t lock = 0;
  const detail::stats_class_record* cls = nullptr;
  const char* file = nullptr;
  int line = 0;
  std::uint8_t mode = 0;
  std::uint64_t since = 0;
};

entry_copy copy_entry(const detail::tracked_entry& e) {
  entry_copy c;
  c.lock = e.lock.load(std::memory_order_acquire);
  c.cls = e.cls.load(std::memory_order_acquire);
  c.file = e.file.load(std::memory_order_acquire);
  c.line = e.line.load(std::memory_order_acquire);
  c.mode = e.mode.load(std::memory_order_acquire);
  c.since = e.since.load(std::memory_order_acquire);
  return c;
}

struct thread_copy {
  std::uint64_t tid = 0;
  std::uint64_t wait_id = 0;
  std::uint64_t unlisted = 0;
  entry_copy wait;
  std::vector<entry_copy> holds;
};

// A consistent copy of t's record (its sequence even and unchanged around the reads); false if
// the owner kept writing through every try. Called under the registry's mutex, which a thread
// registering its first tracked lock or exiting waits for: a bounded number of tries and no
// yield, so a snapshot holds it for microseconds.
bool copy_thread(const detail::tracked_thread& t, thread_copy& out) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::uint32_t s1 = t.seq.load(std::memory_order_acquire);
    if (s1 & 1) continue;
    out.holds.clear();
    out.wait_id = t.wait_id.load(std::memory_order_acquire);
    out.unlisted = t.unlisted.load(std::memory_order_acquire);
    out.wait = copy_entry(t.wait);
    const std::uint32_t n = std::min<std::uint32_t>(t.holds.load(std::memory_order_acquire),
                                                    static_cast<std::uint32_t>(detail::kTrackedHolds));
    for (std::uint32_t i = 0; i < n; ++i) out.holds.push_back(copy_entry(t.hold[i]));
    // Every load above is an acquire (tracked_thread::begin): this load sees an odd or newer
    // sequence if any of them read a write begun after s1.
    if (t.seq.load(std::memory_order_relaxed) == s1) {
      out.tid = t.tid;
      return true;
    }
  }
  return false;
}

// Copies every tracked thread's record; `visit(copy, record)` runs on each copy while the
// registry's mutex still keeps the record alive (the watchdog marks the waits it reports there).
template <class Visit>
std::vector<thread_copy> copy_threads(std::size_t* busy, Visit&& visit) {
  std::vector<thread_copy> out;
  detail::tracking_registry* r = detail::tracking_threads();
  if (r == nullptr) return out;
  std::lock_guard<std::mutex> g(r->mu);  // no thread is unlisted (and freed) while we read it
  for (detail::tracked_thread* t = r->head; t != nullptr; t = t->next) {
    thread_copy c;
    if (copy_thread(*t, c)) {
      visit(c, *t);
      out.push_back(std::move(c));
    } else if (busy != nullptr) {
      ++*busy;
    }
  }
  return out;
}

// Milliseconds since `since` (0 for a counter read behind it, on another CPU).
double age_ms(std::uint64_t since, std::uint64_t now, double ms_per_tick) {
  return now > since ? static_cast<double>(now - since) * ms_per_tick : 0.0;
}

tracked_lock to_tracked(std::uint64_t tid, const entry_copy& e, std::uint64_t now, double ms_per_tick) {
  tracked_lock l;
  l.tid = tid;
  l.lock = e.lock;
  if (e.cls != nullptr) l.lock_class = std::string(e.cls->name);
  l.mode = e.mode < kLockModes ? static_cast<lock_mode>(e.mode) : lock_mode::x;
  if (e.file != nullptr) l.site = std::string(e.file) + ":" + std::to_string(e.line);
  l.ms = age_ms(e.since, now, ms_per_tick);
  return l;
}

double ms_per_tick() { return 1e3 / static_cast<double>(counter_frequency()); }

// "X", "S", "SX": the mode's key, as InnoDB's reports write modes.
std::string mode_word(lock_mode m) {
  std::string w(lock_mode_key(m));
  for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return w;
}

std::string hex(std::uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%jx", static_cast<std::uintmax_t>(v));
  return buf;
}

std::string where(const std::string& site) { return site.empty() ? "an unnamed site" : site; }

// --- the watchdog ---------------------------------------------------------------------------

// The monitor thread's state. `running` is true from a start until the thread leaves its loop;
// a stop from the thread itself (a callback calling stop_watchdog(), or exit()) only asks it to
// leave, and the next start or stop from another thread joins it.
struct watchdog {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;      // guarded by mu
  bool running = false;   // guarded by mu
  std::thread::id id;     // guarded by mu: the monitor thread's while it runs
  std::thread thread;     // started and joined under control_mu
  std::mutex control_mu;  // serializes starts and stops from other threads
  std::atomic<std::uint64_t> reports{0};
  std::atomic<std::uint64_t> callback_errors{0};

  // The process exits: the thread stops with it (unless exit() was called on it, by a callback:
  // it cannot join itself, and std::thread must not be destroyed joinable).
  ~watchdog() {
    if (thread.joinable() && thread.get_id() == std::this_thread::get_id()) {
      thread.detach();
    } else {
      stop_and_join();
    }
  }

  // True when called on the monitor thread: it has been asked to leave.
  bool stop_from_inside() noexcept {
    std::lock_guard<std::mutex> g(mu);
    if (!running || id != std::this_thread::get_id()) return false;
    stop = true;
    return true;
  }

  void stop_and_join() noexcept {
    if (stop_from_inside()) return;  // it cannot wait for itself; control_mu may be held by a joiner
    std::lock_guard<std::mutex> c(control_mu);
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
    std::lock_guard<std::mutex> g(mu);
    stop = false;
  }

  void left() noexcept {  // the thread's last act
    std::lock_guard<std::mutex> g(mu);
    running = false;
    id = {};
  }
};

watchdog& the_watchdog() {
  static watchdog w;
  return w;
}

void default_report(const stuck_wait_report& r) {
  const std::string line = format_stuck_report(r) + "\n";
  std::fputs(line.c_str(), stderr);
}

// One look: every tracked wait past the threshold not reported yet, with its lock's holders (the
// waiter's own holds left out: an upgrade waits for S holders while it holds the latch).
std::vector<stuck_wait_report> find_stuck(std::uint64_t threshold_ms) {
  const double mpt = ms_per_tick();
  const std::uint64_t now = read_counter();
  std::vector<std::size_t> stuck;  // indexes into `threads` of the waits to report
  std::size_t index = 0;
  // Marked while the record is alive and listed (a record freed since could be reused at the
  // same address by a new thread, whose wait numbers start again).
  std::vector<thread_copy> threads =
      copy_threads(nullptr, [&](const thread_copy& c, detail::tracked_thread& t) {
        const std::size_t i = index++;
        if (c.wait.lock == 0 || age_ms(c.wait.since, now, mpt) < static_cast<double>(threshold_ms)) return;
        if (t.reported_wait.load(std::memory_order_relaxed) == c.wait_id) return;
        t.reported_wait.store(c.wait_id, std::memory_order_relaxed);
        stuck.push_back(i);
      });
  std::vector<stuck_wait_report> found;
  for (std::size_t i : stuck) {
    const thread_copy& w = threads[i];
    stuck_wait_report r;
    r.waiter = to_tracked(w.tid, w.wait, now, mpt);
    for (const thread_copy& h : threads) {
      if (h.tid == w.tid) continue;
      for (const entry_copy& e : h.holds) {
        if (e.lock == w.wait.lock) r.holders.push_back(to_tracked(h.tid, e, now, mpt));
      }
    }
    found.push_back(std::move(r));
  }
  return found;
}

void run_watchdog(watchdog& wd, watchdog_options o) {
  {
    std::lock_guard<std::mutex> g(wd.mu);
    wd.id = std::this_thread::get_id();
  }
  const auto poll = std::chrono::milliseconds(o.poll_ms);
  for (;;) {
    {
      std::unique_lock<std::mutex> g(wd.mu);
      if (wd.cv.wait_for(g, poll, [&] { return wd.stop; })) break;
    }
    for (const stuck_wait_report& r : find_stuck(o.stuck_after_ms)) {
      {
        std::lock_guard<std::mutex> g(wd.mu);
        if (wd.stop) break;  // a callback stopped it: no more reports
      }
      wd.reports.fetch_add(1, std::memory_order_relaxed);
      if (!o.on_stuck) {
        default_report(r);
        continue;
      }
      try {
        o.on_stuck(r);
      } catch (const std::exception& e) {
        wd.callback_errors.fetch_add(1, std::memory_order_relaxed);
        std::fprintf(stderr, "spinwise: the stuck-wait callback threw (%s); the report was:\n", e.what());
        default_report(r);
      } catch (...) {
        wd.callback_errors.fetch_add(1, std::memory_order_relaxed);
        std::fputs("spinwise: the stuck-wait callback threw a non-exception; the report was:\n", stderr);
        default_report(r);
      }
    }
  }
  wd.left();
}

}  // namespace

std::error_code set_stats_counting(std::string_view class_name, bool on) {
  return switch_class(class_name, detail::kStatsCounting, on);
}

std::error_code set_lock_tracking(std::string_view class_name, bool on) {
  return switch_class(class_name, detail::kStatsTracking, on);
}

std::error_code apply_stats_switches(std::string_view spec, std::string* bad) {
  struct change {
    detail::stats_class_record* cls;
    std::uint8_t mask;
    bool on;
  };
  std::vector<change> changes;
  if (trim(spec).empty()) return {};  // an empty batch changes nothing
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    std::size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    const std::string entry = trim(spec.substr(pos, end - pos));
    pos = end + 1;
    const std::size_t eq = entry.find('=');
    const std::string name = eq == std::string::npos ? entry : trim(std::string_view(entry).substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : trim(std::string_view(entry).substr(eq + 1));
    change c{nullptr, 0, false};
    if (value == "on" || value == "off") {
      c = {nullptr, detail::kStatsCounting, value == "on"};
    } else if (value == "track" || value == "untrack") {
      c = {nullptr, detail::kStatsTracking, value == "track"};
    }
    if (eq == std::string::npos || name.empty() || c.mask == 0) {
      if (bad != nullptr)
        *bad = entry.empty() ? "(empty entry " + std::to_string(changes.size() + 1) + ")" : entry;
      return make_error_code(errc::knob_syntax);
    }
    c.cls = detail::stats_class_named(name);
    if (c.cls == nullptr) {
      if (bad != nullptr) *bad = entry;
      return make_error_code(errc::unknown_stats_class);
    }
    changes.push_back(c);
  }
  for (const change& c : changes) c.cls->set_switches(c.mask, c.on);
  return {};
}

lock_graph take_lock_graph() {
  lock_graph g;
  std::vector<thread_copy> threads =
      copy_threads(&g.busy_threads, [](const thread_copy&, detail::tracked_thread&) {});
  const std::uint64_t now = read_counter();
  const double mpt = ms_per_tick();
  g.threads = threads.size();
  for (const thread_copy& t : threads) {
    g.unlisted_holds += t.unlisted;
    if (t.wait.lock != 0) g.waits.push_back(to_tracked(t.tid, t.wait, now, mpt));
    for (const entry_copy& e : t.holds) g.holds.push_back(to_tracked(t.tid, e, now, mpt));
  }
  auto longest = [](const tracked_lock& a, const tracked_lock& b) { return a.ms > b.ms; };
  std::stable_sort(g.waits.begin(), g.waits.end(), longest);
  std::stable_sort(g.holds.begin(), g.holds.end(), longest);
  return g;
}

std::string format_lock_graph_text(const lock_graph& g) {
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line, "spinwise tracked threads: %zu, waits %zu, holds %zu\n", g.threads,
                g.waits.size(), g.holds.size());
  out += line;
  for (const tracked_lock& w : g.waits) {
    std::snprintf(line, sizeof line, "--Thread %ju has waited at %s for %.3f s for an %s-lock on %s %s\n",
                  static_cast<std::uintmax_t>(w.tid), where(w.site).c_str(), w.ms / 1e3,
                  mode_word(w.mode).c_str(), w.lock_class.c_str(), hex(w.lock).c_str());
    out += line;
    bool any = false;
    for (const tracked_lock& h : g.holds) {
      if (h.lock != w.lock || h.tid == w.tid) continue;
      any = true;
      std::snprintf(line, sizeof line, "  held by thread %ju in %s mode, locked at %s, for %.3f s\n",
                    static_cast<std::uintmax_t>(h.tid), mode_word(h.mode).c_str(), where(h.site).c_str(),
                    h.ms / 1e3);
      out += line;
    }
    if (!any) out += "  no tracked holder\n";
  }
  for (const tracked_lock& h : g.holds) {
    std::snprintf(line, sizeof line, "Thread %ju holds %s %s in %s mode, locked at %s, for %.3f s\n",
                  static_cast<std::uintmax_t>(h.tid), h.lock_class.c_str(), hex(h.lock).c_str(),
                  mode_word(h.mode).c_str(), where(h.site).c_str(), h.ms / 1e3);
    out += line;
  }
  if (g.unlisted_holds != 0) {
    std::snprintf(line, sizeof line, "holds beyond the listed depth (not listed): %ju\n",
                  static_cast<std::uintmax_t>(g.unlisted_holds));
    out += line;
  }
  if (g.busy_threads != 0) {
    std::snprintf(line, sizeof line, "threads that changed under every read (not listed): %zu\n",
                  g.busy_threads);
    out += line;
  }
  return out;
}

std::string format_stuck_report(const stuck_wait_report& r) {
  const tracked_lock& w = r.waiter;
  char buf[512];
  std::snprintf(buf, sizeof buf, "spinwise: thread %ju has waited %.0f ms for an %s lock on %s %s at %s",
                static_cast<std::uintmax_t>(w.tid), w.ms, mode_word(w.mode).c_str(), w.lock_class.c_str(),
                hex(w.lock).c_str(), where(w.site).c_str());
  std::string out = buf;
  if (r.holders.empty()) return out + "; no tracked holder";
  for (std::size_t i = 0; i < r.holders.size(); ++i) {
    const tracked_lock& h = r.holders[i];
    std::snprintf(buf, sizeof buf, "%s thread %ju in %s at %s for %.0f ms", i == 0 ? "; held by" : ",",
                  static_cast<std::uintmax_t>(h.tid), mode_word(h.mode).c_str(), where(h.site).c_str(), h.ms);
    out += buf;
  }
  return out;
}

std::error_code start_watchdog(const watchdog_options& o) {
  if (o.stuck_after_ms < 1 || o.stuck_after_ms > kMaxStuckAfterMs || o.poll_ms > 60'000)
    return make_error_code(errc::knob_out_of_range);
  watchdog_options run = o;
  if (run.poll_ms == 0) run.poll_ms = std::clamp<std::uint32_t>(o.stuck_after_ms / 4, 1, 1000);
  watchdog& wd = the_watchdog();
  // Stopped before the statics created before the first start are destroyed (a callback's logger
  // may be one of them; one created later is the engine's to keep alive, or to stop first).
  static const bool stop_at_exit = std::atexit([] { stop_watchdog(); }) == 0;
  (void)stop_at_exit;
  std::lock_guard<std::mutex> c(wd.control_mu);
  {
    std::lock_guard<std::mutex> g(wd.mu);
    if (wd.running && !wd.stop) return make_error_code(errc::watchdog_running);
  }
  if (wd.thread.joinable()) wd.thread.join();  // one that stopped itself
  {
    std::lock_guard<std::mutex> g(wd.mu);
    wd.stop = false;
    wd.running = true;  // before the thread can leave (and clear it)
  }
  try {
    wd.thread = std::thread(run_watchdog, std::ref(wd), std::move(run));
  } catch (const std::system_error& e) {
    std::lock_guard<std::mutex> g(wd.mu);
    wd.running = false;
    return e.code();
  }
  return {};
}

void stop_watchdog() noexcept { the_watchdog().stop_and_join(); }

bool watchdog_running() noexcept {
  watchdog& wd = the_watchdog();
  std::lock_guard<std::mutex> g(wd.mu);
  return wd.running && !wd.stop;
}

std::uint64_t watchdog_reports() noexcept { return the_watchdog().reports.load(std::memory_order_relaxed); }
std::uint64_t watchdog_callback_errors() noexcept {
  return the_watchdog().callback_errors.load(std::memory_order_relaxed);
}

}  // namespace spinwise
