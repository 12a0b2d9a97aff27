#pragma once
// Who waits for whom, live, and the stuck-wait watchdog. Part of spinwise::runtime.
//
// What InnoDB's SEMAPHORES section lists for every thread waiting longer than a second ("--Thread
// 140 has waited at buf0buf.cc line 3165 for 2.00 seconds the semaphore: S-lock on RW-latch at
// 0x7f.. created in file buf0buf.cc line 1487 a writer (thread id 139) has reserved it in mode
// exclusive ... Last time write locked in file buf0flu.cc line 1203") and its long-semaphore-wait
// watchdog, for the lock classes an engine switches tracking on for:
//
//   set_lock_tracking("buf_page", true);        // or buf_page_latch::stats::set_tracking(true)
//   spinwise::watchdog_options o;
//   o.stuck_after_ms = 1000;                    // a knob: 1 ms .. 24 h
//   o.on_stuck = [](const spinwise::stuck_wait_report& r) { my_log(format_stuck_report(r)); };
//   spinwise::start_watchdog(o);                // default on_stuck: one line to stderr
//
// Tracking lists, per thread, the locks it holds (up to detail::kTrackedHolds deep) and the one it
// waits for, with the mode, the site (lock(SPINWISE_SITE), or none) and since when
// (detail/lock_tracking.hpp). Off, it costs a release one load of the line its acquisition wrote;
// on, a few stores into the thread's own record per acquisition and a search of its holds per
// release.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "spinwise/errc.hpp"
#include "spinwise/lock_site.hpp"

namespace spinwise {

// Run-time switches of the lock class `class_name` (every module's locks of the class): counting
// (on by default; off, a lock costs a few loads and branches more than no_stats) and
// tracking (off by default). errc::unknown_stats_class when no lock of that class has been used
// yet (class_stats<C>::set_counting / set_tracking work before that); nothing changes then.
std::error_code set_stats_counting(std::string_view class_name, bool on);
std::error_code set_lock_tracking(std::string_view class_name, bool on);

// A batch of switches, all or nothing: "class=on|off|track|untrack[,class=...]" (on/off: counting,
// track/untrack: tracking). A malformed entry (errc::knob_syntax) or an unknown class
// (errc::unknown_stats_class) applies none of the batch; `bad` then names the entry.
std::error_code apply_stats_switches(std::string_view spec, std::string* bad = nullptr);

// One hold or one wait of a tracked lock.
struct tracked_lock {
  std::uint64_t tid = 0;    // the thread (gettid)
  std::uintptr_t lock = 0;  // the lock's address
  std::string lock_class;   // its statistics class
  lock_mode mode = lock_mode::x;
  std::string site;  // "file:line", or "" when the lock was taken without a site
  double ms = 0;     // held or waited so far
};

struct lock_graph {
  std::vector<tracked_lock> holds;
  std::vector<tracked_lock> waits;
  std::uint64_t unlisted_holds = 0;  // holds beyond a thread's listed depth (counted since it began)
  std::size_t threads = 0;           // tracked threads read
  std::size_t busy_threads = 0;      // threads whose record changed under every read (not listed)
};

// Every tracked thread's holds and wait, now.
lock_graph take_lock_graph();

// InnoDB-style text: each wait with the holders of its lock, then the holds nobody waits for.
std::string format_lock_graph_text(const lock_graph& g);

// A wait longer than the watchdog's threshold: the waiter, the lock, and whoever holds it.
struct stuck_wait_report {
  tracked_lock waiter;
  std::vector<tracked_lock> holders;  // may be empty: the holder's class is untracked, or it let go
};

// One line: "spinwise: thread 1234 has waited 2003 ms for an X lock on buf_page 0x7f.. at
// buf0buf.cc:31; held by thread 1200 in SX at buf0flu.cc:12 for 2010 ms".
std::string format_stuck_report(const stuck_wait_report& r);

using stuck_wait_callback = std::function<void(const stuck_wait_report&)>;

struct watchdog_options {
  std::uint32_t stuck_after_ms = 1000;  // report a wait this long; 1 .. 86'400'000
  std::uint32_t poll_ms = 0;            // how often to look; 0: stuck_after_ms / 4 in 1 .. 1000
  stuck_wait_callback on_stuck;         // empty: format_stuck_report to stderr
};
inline constexpr std::uint32_t kMaxStuckAfterMs = 86'400'000;

// Starts the monitor thread: every poll it reads the lock graph and reports each tracked wait that
// has lasted stuck_after_ms, once per wait. A callback that throws is reported on stderr (and
// counted); the watchdog goes on. errc::knob_out_of_range for a threshold or poll out of range,
// errc::watchdog_running when one runs: nothing starts then. The thread stops with
// stop_watchdog() (a callback may call it: the thread leaves after the callback) or when the
// process exits (an atexit handler registered at the first start). It reads the sites of listed
// holds: a module whose locks are tracked stays loaded while it runs.
std::error_code start_watchdog(const watchdog_options& o);
void stop_watchdog() noexcept;
bool watchdog_running() noexcept;

// Reports made, and callbacks that threw, since the process started.
std::uint64_t watchdog_reports() noexcept;
std::uint64_t watchdog_callback_errors() noexcept;

}  // namespace spinwise
