// spinwise-calibrate --tune mariadb|mysql: innodb_spin_wait_delay measured on the running server
// under its own load (docs/operators.md, "Tuning on the live server"). The static advice
// (--advise) keeps the spin time per round of the defaults before Skylake; whether that is this
// workload's best, only the server can say. --tune steps the live setting over a few candidates
// (the advice, 0, the current value and its neighbours), interleaved over several rounds, reads
// the server's own throughput counter in each, and judges each candidate against the current
// value round by round with the project's statistics (spinwise/runtime/uncertainty.hpp: the
// median's interval; compare_paired, the median of the per-round ratios to the current value and
// its sign-test interval, so the load's swing between rounds cancels). It keeps the highest beyond
// the noise above the current value, or the current value when none is; then the smallest delay
// the rounds cannot tell from that one, within 3% of its median (choose_paired: the same
// throughput for less time spinning). The original value is put
// back on every way out (an error, a lost connection, SIGINT, SIGTERM, a workload that moves too
// much, the time limit), and at the end unless --apply.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/runtime/order_stats.hpp"
#include "spinwise/runtime/uncertainty.hpp"

namespace spinwise::calibrate_tool {

namespace {

namespace rt = spinwise::runtime;
using clock_type = std::chrono::steady_clock;

constexpr const char* kVariable = "innodb_spin_wait_delay";
constexpr int kExitInterrupted = 130, kExitTerminated = 143;
// Reconnecting to put the original value back: this many tries, a second apart.
constexpr int kRestoreTries = 5;

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int s) { g_signal = s; }

// SIGINT and SIGTERM only set a flag while --tune runs (the loop polls it between short sleeps);
// the previous handlers come back at the end.
struct signal_guard {
  struct sigaction old_int {
  }, old_term{};
  signal_guard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~signal_guard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

struct candidate {
  unsigned value = 0;
  std::string role;           // "current", "advice", "off", "neighbour", "given"
  std::vector<double> rates;  // the counter per second, one per round
  rt::median_interval mi;
  rt::ratio_interval vs;  // against the current value
};

// The spin and OS-wait figures of SHOW ENGINE INNODB STATUS's SEMAPHORES section, summed over its
// "spins N, rounds N, OS waits N" lines (MySQL 8.0; MariaDB 10.6 on prints none).
struct innodb_waits {
  bool found = false;
  double spins = 0, rounds = 0, os_waits = 0;
};
innodb_waits parse_innodb_status(const std::string& text) {
  innodb_waits w;
  static const std::regex line(R"(spins (\d+), rounds (\d+), OS waits (\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    w.found = true;
    w.spins += std::stod((*it)[1]);
    w.rounds += std::stod((*it)[2]);
    w.os_waits += std::stod((*it)[3]);
  }
  return w;
}

enum class stop_reason { none, interrupted, terminated, lost, error, workload, time_limit };

int exit_code(stop_reason r) {
  switch (r) {
    case stop_reason::none:
      return kExitOk;
    case stop_reason::interrupted:
      return kExitInterrupted;
    case stop_reason::terminated:
      return kExitTerminated;
    case stop_reason::workload:
    case stop_reason::time_limit:
      return kExitUnstable;
    default:
      return kExitFailure;
  }
}

class tuner {
 public:
  explicit tuner(const tune_request& rq) : rq_(rq), deadline_(clock_type::now() + seconds(rq.time_limit_s)) {}

  int run();

 private:
  static clock_type::duration seconds(double s) {
    return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
  }
  // Stops the run: the first reason wins (a signal is said over the error it caused).
  bool stop(stop_reason r, const std::string& why) {
    if (g_signal != 0) r = g_signal == SIGINT ? stop_reason::interrupted : stop_reason::terminated;
    if (stop_ == stop_reason::none) {
      stop_ = r;
      why_ = r == stop_reason::interrupted  ? "interrupted (SIGINT)"
             : r == stop_reason::terminated ? "terminated (SIGTERM)"
             : r == stop_reason::lost       ? "lost the connection to the server: " + why
                                            : why;
    }
    return false;
  }
  bool failed(const std::string& what, const std::string& why) {
    return stop(link_.lost() ? stop_reason::lost : stop_reason::error, what + ": " + why);
  }
  // Sleeps `s` seconds in short slices; false (stopped) on a signal or past the time limit.
  bool wait(double s) {
    const clock_type::time_point end = clock_type::now() + seconds(s);
    while (clock_type::now() < end) {
      if (g_signal != 0) return stop(stop_reason::interrupted, "");
      if (clock_type::now() > deadline_)
        return stop(stop_reason::time_limit, "the time limit (--time-limit " + fmt("%g", rq_.time_limit_s) +
                                                 " s) passed before the rounds were done");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return g_signal == 0 || stop(stop_reason::interrupted, "");
  }
  bool read(const std::string& sql, std::string& out, bool& found, unsigned column = 0) {
    std::string why;
    return link_.value(sql, out, found, why, column) || failed(sql, why);
  }
  bool read_number(const std::string& sql, double& out, bool& found, unsigned column = 0) {
    std::string text;
    if (!read(sql, text, found, column)) return false;
    if (found) out = std::strtod(text.c_str(), nullptr);
    return true;
  }
  bool counter(double& v) {
    bool found = false;
    if (!read_number("SHOW GLOBAL STATUS LIKE '" + rq_.counter + "'", v, found, 1)) return false;
    return found || stop(stop_reason::error, "the server no longer reports " + rq_.counter);
  }
  bool waits(innodb_waits& w) {
    std::string text;
    bool found = false;
    if (!read("SHOW ENGINE INNODB STATUS", text, found, 2)) return false;
    w = parse_innodb_status(text);
    return true;
  }
  // SET GLOBAL, then read back: a value the server clamped or refused is an error.
  bool set(unsigned v) {
    std::string why, back;
    const std::string sql = "SET GLOBAL " + std::string(kVariable) + " = " + std::to_string(v);
    if (!link_.execute(sql, why)) return failed(sql, why);
    set_ = true;
    bool found = false;
    if (!read("SELECT @@GLOBAL." + std::string(kVariable), back, found)) return false;
    if (back != std::to_string(v))
      return stop(stop_reason::error, std::string(kVariable) + " reads back as " + back + " after " + sql);
    return true;
  }
  bool connect_and_read();
  bool choose_candidates();
  bool measure();
  bool cut_at_limit();
  void restore(unsigned value);
  std::string verdict_text() const;
  void print_text() const;
  void print_json() const;

  const tune_request& rq_;
  std::size_t rounds_ = 0;  // rq_.rounds, or as many as fit the time limit (run())
  clock_type::time_point deadline_;
  server_link link_;
  stop_reason stop_ = stop_reason::none;
  std::string why_;
  std::string version_, engine_name_, settings_line_, advice_note_;
  unsigned original_ = 0, advised_ = 0;
  bool have_advice_ = false, set_ = false, restored_ = false, applied_ = false;
  std::string restore_note_;
  std::string cut_note_;  // the time limit cut the plan, and the verdict is from fewer rounds
  std::vector<candidate> cands_;
  innodb_waits waits_before_, waits_after_;
  int winner_ = -1;  // index into cands_; -1: keep the current value
  int best_ = -1;    // the highest beyond the noise above the current value (the winner or dearer)
  // The winner against the best (or the current value, when no best): where the winner is not it.
  rt::ratio_interval winner_vs_best_;
  std::size_t rounds_done_ = 0;
};

bool tuner::connect_and_read() {
  std::string why;
  if (!link_.connect(rq_.address, why))
    return stop(stop_reason::error, server_link::available() ? "cannot connect: " + why : why);
  bool found = false;
  if (!read("SELECT VERSION()", version_, found)) return false;
  const bool is_mariadb = version_.find("MariaDB") != std::string::npos;
  engine_name_ = is_mariadb ? version_ : "MySQL " + version_;
  if (is_mariadb != (rq_.which == sw::engine::mariadb))
    return stop(stop_reason::error, std::string("--tune ") + (is_mariadb ? "mysql" : "mariadb") +
                                        " asked, but the server is " + engine_name_);
  double v = 0;
  if (!read_number("SELECT @@GLOBAL." + std::string(kVariable), v, found)) return false;
  original_ = static_cast<unsigned>(v);
  settings_line_ = std::string(kVariable) + " = " + std::to_string(original_);
  for (const char* name :
       {"innodb_sync_spin_loops", "innodb_spin_wait_pause_multiplier", "my_cpu_relax_multiplier"}) {
    std::string text;
    if (!read("SHOW GLOBAL VARIABLES LIKE '" + std::string(name) + "'", text, found, 1)) return false;
    if (found) settings_line_ += std::string(", ") + name + " = " + text;
  }
  if (!read("SHOW GLOBAL STATUS LIKE '" + rq_.counter + "'", why, found, 1)) return false;
  if (!found) return stop(stop_reason::error, "the server reports no status counter '" + rq_.counter + "'");
  return true;
}

// The advice (a PAUSE calibration now, as --advise does), 0, the current value and the advice's
// neighbours; or the values given. Each inside the safe range but the current value.
bool tuner::choose_candidates() {
  const auto add = [this](unsigned v, const char* role) {
    for (const candidate& c : cands_)
      if (c.value == v) return;
    candidate c;
    c.value = v;
    c.role = role;
    cands_.push_back(c);
  };
  add(original_, "current");
  if (!rq_.candidates.empty()) {
    for (unsigned v : rq_.candidates) add(v, "given");
    advice_note_ = "the candidates were given (--candidates)";
    return true;
  }
  sw::engine_advice_input in;
  in.which = rq_.which;
  // The version's leading number (MariaDB's advice is per major.minor).
  in.version = version_.substr(0, version_.find_first_not_of("0123456789."));
  if (rq_.which == sw::engine::mariadb)
    in.version = in.version.substr(0, in.version.find('.', in.version.find('.') + 1));
  in.arch = str(sw::backend_name());
  if (std::string why = sw::advice_request_error(in); !why.empty()) {
    advice_note_ = "no advice: " + why;
  } else {
    sw::calibration_options opt;
    opt.kinds = {sw::relax_kind::pause};
    sw::calibration_result r;
    std::string why2;
    if (!sw::calibrate(opt, r, &why2)) {
      advice_note_ = "no advice: the PAUSE measurement failed: " + why2;
    } else {
      const sw::advice_result a = sw::advise_engine(sw::advice_input_from(r, rq_.which, in.version));
      for (const sw::engine_setting& s : a.advice.settings) {
        if (a.status == sw::advice_status::ok && s.name == kVariable) {
          have_advice_ = true;
          advised_ = s.value;
        }
      }
      advice_note_ =
          have_advice_ ? "the advice (--advise): " + std::string(kVariable) + " = " + std::to_string(advised_)
                       : "no advice: " + a.message;
      if (have_advice_ && !a.advice.cannot_tell.empty())
        advice_note_ += " (the rule cannot tell on this host's " + std::to_string(a.advice.cpus) +
                        (a.advice.cpus == 1 ? " CPU" : " CPUs") +
                        "; this tool's host is taken for the server's)";
    }
  }
  if (have_advice_ && advised_ <= kTuneDelayMax) add(advised_, "advice");
  add(0, "off");
  const unsigned centre = have_advice_ ? advised_ : original_;
  for (unsigned v : {centre / 2, centre * 2}) {
    if (v <= kTuneDelayMax && cands_.size() < kTuneMaxCandidates) add(v, "neighbour");
  }
  return true;
}

bool tuner::measure() {
  const std::vector<std::size_t> order = rt::interleaved_order(cands_.size(), rounds_, 1);
  // Our own statements inside a window: the closing counter read, when the counter counts statements.
  const double own = rq_.counter == "Questions" || rq_.counter == "Queries" ? 1 : 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    candidate& c = cands_[order[i]];
    if (!set(c.value) || !wait(rq_.settle_s)) return false;
    double c0 = 0, c1 = 0;
    if (!counter(c0)) return false;
    const clock_type::time_point t0 = clock_type::now();
    if (!wait(rq_.round_s) || !counter(c1)) return false;
    const double dt = std::chrono::duration<double>(clock_type::now() - t0).count();
    const double rate = std::max(0.0, c1 - c0 - own) / dt;
    std::fprintf(stderr, "spinwise-calibrate --tune: round %zu/%zu: %s = %u: %.1f %s/s\n",
                 i / cands_.size() + 1, rounds_, kVariable, c.value, rate, rq_.counter.c_str());
    if (!(rate > 0))
      return stop(stop_reason::workload, "the workload stopped: " + rq_.counter + " did not move in " +
                                             fmt("%.1f", dt) + " s at " + kVariable + " = " +
                                             std::to_string(c.value));
    if (!c.rates.empty()) {
      const double before = rt::median(c.rates);
      if (rate > before * rq_.max_drift || rate * rq_.max_drift < before)
        return stop(stop_reason::workload, "the workload moved too much to decide: " + fmt("%.1f", rate) +
                                               " " + rq_.counter + "/s at " + kVariable + " = " +
                                               std::to_string(c.value) + ", " + fmt("%.1f", before) +
                                               "/s in its earlier rounds (more than " +
                                               fmt("%g", rq_.max_drift) + "x apart; --max-drift)");
    }
    c.rates.push_back(rate);
    rounds_done_ = (i + 1) / cands_.size();  // complete rounds
  }
  return true;
}

// The time limit passed before the plan's last round (each setting and counter read takes the
// server some milliseconds more than the plan counts, more under load): the rounds every
// candidate completed still decide when there are enough of them for a verdict; a round some
// candidates missed is dropped, so that every comparison stays round by round. True: go on to the
// verdict from those rounds (the run's stop is taken back, and the report says it was cut).
bool tuner::cut_at_limit() {
  if (stop_ != stop_reason::time_limit || g_signal != 0) return false;
  const std::size_t complete = rounds_done_;  // every candidate has this many rates, some one more
  if (complete < rt::kMinPairsForVerdict) {
    why_ += " (" + std::to_string(complete) + (complete == 1 ? " complete round; " : " complete rounds; ") +
            std::to_string(rt::kMinPairsForVerdict) + " are needed)";
    return false;
  }
  for (candidate& c : cands_) c.rates.resize(complete);
  cut_note_ = "the time limit (--time-limit " + fmt("%g", rq_.time_limit_s) + " s) cut the plan at " +
              std::to_string(complete) + " of " + std::to_string(rounds_) +
              " rounds: the verdict is from those";
  std::fprintf(stderr, "spinwise-calibrate --tune: %s\n", cut_note_.c_str());
  stop_ = stop_reason::none;
  why_.clear();
  return true;
}

void tuner::restore(unsigned value) {
  if (!set_) return;
  std::string why;
  for (int attempt = 0; attempt < kRestoreTries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (!link_.connected() && !link_.connect(rq_.address, why)) continue;
    const std::string sql = "SET GLOBAL " + std::string(kVariable) + " = " + std::to_string(value);
    std::string back;
    bool found = false;
    if (link_.execute(sql, why) &&
        link_.value("SELECT @@GLOBAL." + std::string(kVariable), back, found, why) &&
        back == std::to_string(value)) {
      restored_ = true;
      return;
    }
    if (!link_.lost()) break;
  }
  restore_note_ = "COULD NOT put " + std::string(kVariable) + " = " + std::to_string(value) + " back (" +
                  why + "); if the server is still up, run: SET GLOBAL " + kVariable + " = " +
                  std::to_string(value) +
                  "; (a restarted server reads its configuration: SET GLOBAL does "
                  "not outlive it)";
}

int tuner::run() {
  signal_guard signals;
  g_signal = 0;
  if (connect_and_read() && choose_candidates()) {
    // The plan fits what is left of the limit once the candidates are chosen (the advice's PAUSE
    // calibration, on a loaded host, takes seconds of it).
    const double left = std::chrono::duration<double>(deadline_ - clock_type::now()).count();
    const double per_round = static_cast<double>(cands_.size()) * (rq_.round_s + rq_.settle_s);
    rounds_ = rq_.rounds != 0 ? rq_.rounds
                              : std::clamp(static_cast<std::size_t>(std::max(0.0, left) / per_round),
                                           std::size_t{2}, kTuneAutoRounds);
    const double planned = static_cast<double>(rounds_) * per_round;
    if (planned > left) {
      stop(stop_reason::error,
           std::to_string(cands_.size()) + " candidates x " + std::to_string(rounds_) + " rounds x (" +
               fmt("%g", rq_.round_s) + " + " + fmt("%g", rq_.settle_s) + " s) = " + fmt("%g", planned) +
               " s do not fit the " + fmt("%.1f", std::max(0.0, left)) + " s left of --time-limit " +
               fmt("%g", rq_.time_limit_s) + " s" +
               (planned <= rq_.time_limit_s ? " (choosing the candidates took the rest)" : ""));
    } else if (waits(waits_before_) && (measure() || cut_at_limit()) && waits(waits_after_)) {
      for (candidate& c : cands_) {
        c.mi = rt::median_ci(c.rates);
        c.vs = rt::compare_paired(cands_[0].rates, c.rates);  // the rates are in round order
      }
      // The best beyond the noise above the current value (else the current value); then the
      // smallest delay the rounds cannot tell from it and within 3% of it: the same throughput for
      // less time spinning (rt::choose_paired).
      std::vector<std::vector<double>> rates;
      std::vector<double> cost;
      for (const candidate& c : cands_) {
        rates.push_back(c.rates);
        cost.push_back(c.value);
      }
      const rt::paired_choice choice = rt::choose_paired(rates, cost);
      best_ = choice.best;
      winner_ = choice.chosen;
      winner_vs_best_ = choice.chosen_vs_best;
    }
  }
  const bool done = stop_ == stop_reason::none;
  if (done && rq_.apply && winner_ >= 0) {
    restore(cands_[static_cast<std::size_t>(winner_)].value);  // left set: --apply
    applied_ = restored_;
    if (!applied_) stop(stop_reason::error, restore_note_);
  } else {
    restore(original_);
  }
  if (rq_.format == "json") {
    print_json();
  } else if (done) {
    print_text();
  }
  if (!done) std::fprintf(stderr, "spinwise-calibrate: --tune: stopped: %s\n", why_.c_str());
  if (restored_ && !applied_) {
    std::fprintf(stderr, "spinwise-calibrate: --tune: %s = %u put back\n", kVariable, original_);
  } else if (!restore_note_.empty()) {
    std::fprintf(stderr, "spinwise-calibrate: --tune: %s\n", restore_note_.c_str());
  } else if (!set_ && !done) {
    std::fprintf(stderr, "spinwise-calibrate: --tune: nothing was changed on the server\n");
  }
  if (done && !restore_note_.empty()) return kExitFailure;
  return exit_code(stop_);
}

std::string tuner::verdict_text() const {
  const candidate& cur = cands_[0];
  if (winner_ < 0) {
    std::string s =
        "keep " + std::string(kVariable) + " = " + std::to_string(cur.value) +
        ": no candidate is beyond the noise above it, and no smaller delay within its noise and " +
        fmt("%.0f%%", rt::kCheaperMaxLoss * 100) + " of it";
    if (rounds_done_ < rt::kMinPairsForVerdict)
      s += " (" + std::to_string(rounds_done_) +
           " rounds cannot tell: " + std::to_string(rt::kMinPairsForVerdict) + " a candidate are needed)";
    return s;
  }
  const auto over = [](const rt::ratio_interval& vs) {
    return fmt("%+.1f%%", (vs.ratio - 1) * 100) + " (" + fmt("%.0f%%", vs.confidence * 100) + " interval " +
           fmt("%+.1f%%", (vs.lo - 1) * 100) + " .. " + fmt("%+.1f%%", (vs.hi - 1) * 100) + ")";
  };
  const candidate& w = cands_[static_cast<std::size_t>(winner_)];
  const std::string rounds = std::to_string(rounds_done_) + " rounds a candidate";
  if (best_ < 0)
    return std::string(kVariable) + " = " + std::to_string(w.value) + ": " + over(winner_vs_best_) +
           " against the current " + std::to_string(cur.value) +
           ", and no candidate beyond the noise above it: not told apart from it, and it spins less (" +
           rounds + ")";
  const candidate& b = cands_[static_cast<std::size_t>(best_)];
  if (winner_ == best_)
    return std::string(kVariable) + " = " + std::to_string(w.value) + ": " + over(w.vs) +
           " over the current " + std::to_string(cur.value) + ", " + rounds;
  return std::string(kVariable) + " = " + std::to_string(w.value) + ": " + over(winner_vs_best_) +
         " against " + std::to_string(b.value) + ", which is " + over(b.vs) + " over the current " +
         std::to_string(cur.value) + ": not told apart from it, and it spins less (" + rounds + ")";
}

void tuner::print_text() const {
  std::printf("# spinwise-calibrate --tune: %s\n# settings before: %s\n", engine_name_.c_str(),
              settings_line_.c_str());
  std::printf(
      "# %s\n# throughput: the status counter %s per second%s\n", advice_note_.c_str(), rq_.counter.c_str(),
      rq_.counter == "Questions" || rq_.counter == "Queries" ? " (less this tool's own statements)" : "");
  std::printf("# %zu candidates x %zu rounds of %g s (after %g s at the setting), interleaved\n",
              cands_.size(), rounds_, rq_.round_s, rq_.settle_s);
  if (!cut_note_.empty()) std::printf("# %s\n", cut_note_.c_str());
  if (waits_before_.found) {
    std::printf("# InnoDB semaphores over the run: %.0f spins, %.0f rounds, %.0f OS waits\n",
                waits_after_.spins - waits_before_.spins, waits_after_.rounds - waits_before_.rounds,
                waits_after_.os_waits - waits_before_.os_waits);
  } else {
    std::printf(
        "# InnoDB semaphores: SHOW ENGINE INNODB STATUS gives no spin or OS-wait figures on this server\n");
  }
  std::printf("%6s %-9s %12s %25s %28s  %s\n", "value", "role", "median/s", "interval of the median",
              "vs current (95% interval)", "verdict");
  for (const candidate& c : cands_) {
    const std::string interval = fmt("%.1f", c.mi.lo) + " .. " + fmt("%.1f", c.mi.hi) + " (" +
                                 fmt("%.0f%%", c.mi.coverage * 100) + ")";
    const std::string vs = &c == &cands_[0] ? "-"
                                            : fmt("%.3f", c.vs.ratio) + " [" + fmt("%.3f", c.vs.lo) + ", " +
                                                  fmt("%.3f", c.vs.hi) + "]";
    std::printf("%6u %-9s %12.1f %25s %28s  %s\n", c.value, c.role.c_str(), c.mi.median, interval.c_str(),
                vs.c_str(), &c == &cands_[0] ? "baseline" : str(rt::to_string(c.vs.verdict)).c_str());
  }
  const unsigned best = winner_ < 0 ? cands_[0].value : cands_[static_cast<std::size_t>(winner_)].value;
  std::printf("verdict: %s\n[%s]\n%s = %u\n# live: SET GLOBAL %s = %u;\n", verdict_text().c_str(),
              rq_.which == sw::engine::mariadb ? "mariadbd" : "mysqld", kVariable, best, kVariable, best);
  if (applied_) {
    std::printf("# --apply: %s = %u is set on the server now\n", kVariable, best);
  } else {
    std::printf("# %s = %u was put back (--apply leaves the winner set)\n", kVariable, original_);
  }
}

void tuner::print_json() const {
  using json = nlohmann::ordered_json;
  json d;
  d["format"] = "spinwise.calibrate.tune";
  d["engine"] = rq_.which == sw::engine::mariadb ? "mariadb" : "mysql";
  d["server"] = version_.empty() ? json() : json(engine_name_);
  d["variable"] = kVariable;
  d["original"] = version_.empty() ? json() : json(original_);
  d["settings_before"] = settings_line_;
  d["advice"] = have_advice_ ? json(advised_) : json();
  d["advice_note"] = advice_note_;
  d["counter"] = rq_.counter;
  d["rounds"] = rounds_done_;
  d["rounds_planned"] = rounds_;
  d["cut_by_time_limit"] = cut_note_.empty() ? json() : json(cut_note_);
  d["round_s"] = rq_.round_s;
  d["candidates"] = json::array();
  for (const candidate& c : cands_) {
    d["candidates"].push_back({{"value", c.value},
                               {"role", c.role},
                               {"rates", c.rates},
                               {"median", c.mi.median},
                               {"lo", c.mi.lo},
                               {"hi", c.mi.hi},
                               {"coverage", c.mi.coverage},
                               {"vs_current",
                                {{"ratio", c.vs.ratio},
                                 {"lo", c.vs.lo},
                                 {"hi", c.vs.hi},
                                 {"verdict", str(rt::to_string(c.vs.verdict))}}}});
  }
  const bool done = stop_ == stop_reason::none;
  const unsigned best = winner_ < 0 ? original_ : cands_[static_cast<std::size_t>(winner_)].value;
  // Only a run that reached its verdict has candidates: one stopped before (no connection, say)
  // has none to name, and its verdict is null.
  json verdict;
  if (done) verdict = {{"value", best}, {"change", winner_ >= 0}, {"text", verdict_text()}};
  if (done && winner_ >= 0 && best_ != winner_) {
    // The highest above the current value (null: none is, and the winner was measured against the
    // current value), which the rounds do not tell from the smaller delay kept.
    verdict["best"] = best_ < 0 ? json() : json(cands_[static_cast<std::size_t>(best_)].value);
    verdict["vs_best"] = {{"against", best_ < 0 ? "current" : "best"},
                          {"ratio", winner_vs_best_.ratio},
                          {"lo", winner_vs_best_.lo},
                          {"hi", winner_vs_best_.hi},
                          {"verdict", str(rt::to_string(winner_vs_best_.verdict))}};
  }
  d["verdict"] = verdict;
  d["my_cnf"] = done ? json(std::string(kVariable) + " = " + std::to_string(best)) : json();
  d["set_global"] =
      done ? json("SET GLOBAL " + std::string(kVariable) + " = " + std::to_string(best) + ";") : json();
  d["applied"] = applied_;
  d["restored"] = restored_ && !applied_;
  d["stopped"] = done ? json() : json(why_);
  d["restore_failed"] = restore_note_.empty() ? json() : json(restore_note_);
  d["exit_code"] = exit_code(stop_);
  std::fputs((d.dump(2, ' ', false, json::error_handler_t::replace) + "\n").c_str(), stdout);
}

}  // namespace

int run_tune(const tune_request& rq) {
  // A build without libmariadb stops at the connection, saying so (as JSON too with --format json).
  tuner t(rq);
  return t.run();
}

}  // namespace spinwise::calibrate_tool
