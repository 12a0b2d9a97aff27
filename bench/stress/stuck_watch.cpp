#include "stuck_watch.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "lock_catalog.hpp"

namespace spinwise::stress {

stuck_watch::stuck_watch(std::uint32_t stuck_after_ms, bool print) : print_(print) {
  set_stress_tracking(true);
  watchdog_options o;
  o.stuck_after_ms = stuck_after_ms;
  o.on_stuck = [this](const stuck_wait_report& r) {
    std::lock_guard<std::mutex> g(mu_);
    reports_.push_back(r);
    if (print_) std::fputs((format_stuck_report(r) + "\n").c_str(), stderr);
  };
  if (const std::error_code ec = start_watchdog(o)) {
    set_stress_tracking(false);
    throw std::runtime_error("cannot start the stuck-wait watchdog: " + ec.message());
  }
  running_ = true;
}

stuck_watch::~stuck_watch() { stop(); }

void stuck_watch::stop() noexcept {
  if (!running_) return;
  stop_watchdog();  // joins the watchdog's thread: the callback, which uses *this, has returned
  set_stress_tracking(false);
  running_ = false;
}

std::vector<stuck_wait_report> stuck_watch::reports() const {
  std::lock_guard<std::mutex> g(mu_);
  return reports_;
}

namespace {

std::string hex(std::uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%jx", static_cast<std::uintmax_t>(v));
  return buf;
}

std::string mode_key(lock_mode m) { return std::string(lock_mode_key(m)); }

}  // namespace

nlohmann::json stuck_reports_json(const std::vector<stuck_wait_report>& reports) {
  nlohmann::json a = nlohmann::json::array();
  for (const stuck_wait_report& r : reports) {
    nlohmann::json holders = nlohmann::json::array();
    for (const tracked_lock& h : r.holders) {
      holders.push_back({{"tid", h.tid}, {"mode", mode_key(h.mode)}, {"site", h.site}, {"held_ms", h.ms}});
    }
    a.push_back({{"waiter_tid", r.waiter.tid},
                 {"mode", mode_key(r.waiter.mode)},
                 {"site", r.waiter.site},
                 {"waited_ms", r.waiter.ms},
                 {"lock_class", r.waiter.lock_class},
                 {"lock", hex(r.waiter.lock)},
                 {"holders", holders}});
  }
  return a;
}

}  // namespace spinwise::stress
