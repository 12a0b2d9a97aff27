#pragma once
// --stuck-after-ms: lock tracking on for the stress locks' class (lock_catalog.hpp) and the
// library's stuck-wait watchdog (<spinwise/runtime/lock_watch.hpp>) over a whole session, its
// reports kept for the JSON's "stuck_reports".
//
// Tracking is on before the first run builds its latches, so every acquisition passes its site
// (scenario.hpp metered_latches) and a report names the scenario's file:line for the waiter and
// each holder. Only the locks that record into stress_latch are tracked (the std references are
// not), and only hybrid_mutex, hybrid_shared_mutex and sx_lock take a site; the others' holds and
// waits are listed at "an unnamed site".

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "spinwise/runtime/lock_watch.hpp"

namespace spinwise::stress {

class stuck_watch {
 public:
  // Turns tracking on and starts the watchdog; each report is kept and, when `print`, written to
  // stderr as the library's one line. Throws std::runtime_error when the watchdog cannot start.
  stuck_watch(std::uint32_t stuck_after_ms, bool print);
  ~stuck_watch();
  stuck_watch(const stuck_watch&) = delete;
  stuck_watch& operator=(const stuck_watch&) = delete;

  // Stops the watchdog (no report arrives after it returns) and turns tracking off.
  void stop() noexcept;

  std::vector<stuck_wait_report> reports() const;

 private:
  bool print_;
  bool running_ = false;
  mutable std::mutex mu_;
  std::vector<stuck_wait_report> reports_;  // guarded by mu_
};

// [{"waiter_tid", "mode" ("x" | "s" | "sx"), "site", "waited_ms", "lock_class", "lock",
//   "holders": [{"tid", "mode", "site", "held_ms"}]}, ...]; "site" is "file:line" or "" (taken
// without a site), "lock" the latch's address ("0x7f..."), to tell reports on one latch.
nlohmann::json stuck_reports_json(const std::vector<stuck_wait_report>& reports);

}  // namespace spinwise::stress
