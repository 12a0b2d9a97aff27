// The engine advice's arithmetic (engine_advice.hpp; the engines' code in our words:
// docs/engines.md). Pure functions of the inputs, so tests drive them with any CPU's figures; the
// text and JSON forms are in advice_format.cpp.
#include "spinwise/runtime/engine_advice.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "calibration/calibration_internal.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise {

using detail::fmt;

namespace {

struct version_number {
  int major = 0, minor = 0, patch = -1;  // patch -1: not given
};

// "X.Y" or "X.Y.Z", each part 1 to 5 digits.
bool parse_version(const std::string& text, version_number& v) {
  std::vector<int> parts;
  std::size_t pos = 0;
  for (;;) {
    std::size_t end = pos;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos || end - pos > 5) return false;
    parts.push_back(std::stoi(text.substr(pos, end - pos)));
    if (end == text.size()) break;
    if (text[end] != '.' || parts.size() == 3) return false;
    pos = end + 1;
  }
  if (parts.size() < 2) return false;
  v = {parts[0], parts[1], parts.size() == 3 ? parts[2] : -1};
  return true;
}

// The candidate in [lo, hi] whose value(k) is nearest `target` in ratio; ties go to the larger.
unsigned nearest_by(double target, unsigned lo, unsigned hi, const std::function<double(unsigned)>& value) {
  unsigned best = lo;
  double best_err = INFINITY;
  for (unsigned k = lo; k <= hi; ++k) {
    const double v = value(k);
    if (!(v > 0)) continue;
    const double err = std::fabs(std::log(v / target));
    if (err <= best_err + 1e-12) {
      best = k;
      best_err = err;
    }
    if (v > target * 4) break;  // value grows with k: nothing further is nearer
  }
  return best;
}

std::string pct(double ratio) { return fmt("%+.0f%%", (ratio - 1) * 100); }
std::string ns_or_us(double ns) { return ns >= 10000 ? fmt("%.1f us", ns / 1000) : fmt("%.0f ns", ns); }

advice_result refuse(advice_status s, std::string why) {
  advice_result r;
  r.status = s;
  r.message = std::move(why);
  return r;
}

// MySQL's per-round random delay count: uniform on [0, D-1] in 8.0.16-8.0.28 (ut_rnd_interval),
// on [0, D] from 8.0.30 (ut::random_from_interval).
double mysql_mean_units(unsigned delay, bool inclusive) {
  return inclusive ? delay / 2.0 : delay > 0 ? (delay - 1) / 2.0 : 0.0;
}
unsigned mysql_max_units(unsigned delay, bool inclusive) {
  return inclusive ? delay : delay > 0 ? delay - 1 : 0;
}

advice_result advise_mysql(engine_advice_input in, const version_number& v) {
  const bool inclusive = !(v.major == 8 && v.minor == 0 && v.patch >= 0 && v.patch <= 28);
  advice_result out;
  engine_advice& a = out.advice;
  a.which = engine::mysql;
  a.section = "mysqld";
  a.engine_name = in.version.empty() ? std::string("MySQL 8.0.30+ (assumed; --engine-version says which)")
                  : inclusive        ? "MySQL " + in.version + " (8.0.30+ rules)"
                                     : "MySQL " + in.version + " (8.0.16-8.0.28 rules)";
  a.relax_ns = in.relax_ns;
  a.relax_ticks = in.relax_ticks;
  a.unit_ns = in.unit_ns;
  const unsigned d0 = kMysqlDefaultSpinWaitDelay, m0 = kInnodbDefaultPauseMultiplier;
  const double mean0 = mysql_mean_units(d0, inclusive);
  a.target_round_ns = mean0 * in.unit_ns;
  a.default_round_ns = mean0 * m0 * in.relax_ns;

  // The multiplier restores the unit; the delay stays at the default (and the round's shape with
  // it) unless the multiplier had to be clamped to MySQL's 1..100, when it makes up the round.
  const unsigned m = nearest_in_ratio(in.unit_ns, in.relax_ns, 1, kInnodbMaxPauseMultiplier);
  const double unit_here = m * in.relax_ns;
  const double exact = in.unit_ns / in.relax_ns;
  const bool clamped = exact < 1 || exact > kInnodbMaxPauseMultiplier + 0.5;
  const unsigned d = clamped
                         ? nearest_by(a.target_round_ns, 1, kMysqlMaxSpinWaitDelay,
                                      [&](unsigned k) { return mysql_mean_units(k, inclusive) * unit_here; })
                         : d0;
  a.advised_round_ns = mysql_mean_units(d, inclusive) * unit_here;

  const std::string relax = fmt("%.2f", in.relax_ns) + " ns per PAUSE";
  engine_setting mult{"innodb_spin_wait_pause_multiplier", m, m0, {}};
  mult.comment.push_back("ut_delay(k) runs k x innodb_spin_wait_pause_multiplier PAUSEs; " + relax +
                         " here, so the default " + std::to_string(m0) + " makes one delay unit " +
                         ns_or_us(m0 * in.relax_ns) + " (" + fmt("%.2f", m0 * in.relax_ns / in.unit_ns) +
                         "x the " + fmt("%.0f", in.unit_ns) + " ns that 50 PAUSEs took before Skylake)");
  if (clamped) {
    mult.comment.push_back(fmt("%.0f", in.unit_ns) + " ns / " + fmt("%.2f", in.relax_ns) +
                           " ns = " + fmt("%.2f", exact) + " PAUSEs, outside MySQL's 1..100: clamped to " +
                           std::to_string(m) + " (" + ns_or_us(unit_here) +
                           " a unit); innodb_spin_wait_delay makes up the round");
  } else if (std::fabs(m - exact) < 0.005) {
    mult.comment.push_back(fmt("%.0f", in.unit_ns) + " ns / " + fmt("%.2f", in.relax_ns) +
                           " ns = " + fmt("%.2f", exact) + " PAUSEs: exactly " + std::to_string(m));
  } else {
    const unsigned other = m > exact ? m - 1 : m + 1;
    const bool other_in_range = other >= 1 && other <= kInnodbMaxPauseMultiplier;
    mult.comment.push_back(fmt("%.0f", in.unit_ns) + " ns / " + fmt("%.2f", in.relax_ns) +
                           " ns = " + fmt("%.2f", exact) + " PAUSEs: " + std::to_string(m) + " gives " +
                           ns_or_us(unit_here) + " (" + pct(unit_here / in.unit_ns) + ")" +
                           (other_in_range ? ", nearer in ratio than " + std::to_string(other) + " (" +
                                                 pct(other * in.relax_ns / in.unit_ns) + ")"
                                           : std::string()) +
                           ": rounded " + (m > exact ? "up" : "down"));
  }
  engine_setting delay{"innodb_spin_wait_delay", d, d0, {}};
  const std::string range = inclusive ? "0..D" : "0..D-1";
  delay.comment.push_back(
      "a spin round waits ut_delay(random " + range + ") units (" +
      (inclusive ? "ut::random_from_interval, 8.0.30+" : "ut_rnd_interval, 8.0.16-8.0.28") + "): mean " +
      fmt("%.1f", mean0) + " units at the default " + std::to_string(d0) + ", " +
      ns_or_us(a.target_round_ns) + " a round before Skylake, " + ns_or_us(a.default_round_ns) +
      " here with multiplier " + std::to_string(m0));
  delay.comment.push_back(
      d == d0 ? "kept at the default: with the multiplier above a round is " + ns_or_us(a.advised_round_ns) +
                    " on average (" + pct(a.advised_round_ns / a.target_round_ns) + "), at most " +
                    ns_or_us(mysql_max_units(d, inclusive) * unit_here)
              : std::to_string(d) + " makes the mean round " + ns_or_us(a.advised_round_ns) + " (" +
                    pct(a.advised_round_ns / a.target_round_ns) +
                    " of the target), the nearest in ratio with " + "the multiplier at " + std::to_string(m));
  engine_setting loops{"innodb_sync_spin_loops", kDefaultSyncSpinLoops, kDefaultSyncSpinLoops, {}};
  loops.comment.push_back(
      "kept at the default: the rounds a wait spins before it yields and sleeps; the advice restores the "
      "time per round, not the count (0 is safe in MySQL: every loop tests i < N before it spins)");
  a.settings = {mult, delay, loops};
  return out;
}

advice_result advise_mariadb(engine_advice_input in) {
  advice_result out;
  engine_advice& a = out.advice;
  a.which = engine::mariadb;
  a.section = "mariadbd";
  a.engine_name = in.version.empty() ? std::string("MariaDB 10.11 (assumed; --engine-version says which)")
                                     : "MariaDB " + in.version;
  a.relax_ns = in.relax_ns;
  a.relax_ticks = in.relax_ticks;
  a.unit_ns = in.unit_ns;
  const unsigned measured = mariadb_relax_multiplier(in.relax_ticks);
  const unsigned mult = in.mariadb_multiplier.value_or(measured);
  const unsigned other = mult == kMariadbFastMultiplier ? kMariadbSlowMultiplier : kMariadbFastMultiplier;
  a.relax_multiplier = mult;
  const unsigned per_unit = mult / 4;
  const double unit_here = per_unit * in.relax_ns;
  const unsigned d0 = kMariadbDefaultSpinWaitDelay;
  // The default 4 units were 4 x 50 PAUSEs on the fast-PAUSE CPUs the multiplier 200 is for.
  a.target_round_ns = d0 * in.unit_ns;
  a.default_round_ns = d0 * unit_here;
  const unsigned d = nearest_in_ratio(a.target_round_ns, unit_here, 1, kMariadbMaxSpinWaitDelay);
  a.advised_round_ns = d * unit_here;

  engine_setting delay{"innodb_spin_wait_delay", d, d0, {}};
  const double ratio_to_threshold = in.relax_ticks / kMariadbSlowPauseTicks;
  if (in.mariadb_multiplier) {
    delay.comment.push_back(
        "my_cpu_relax_multiplier = " + std::to_string(mult) +
        " as given (--mariadb-multiplier); spinwise measured " + fmt("%.1f", in.relax_ticks) +
        " TSC ticks per PAUSE, for which MariaDB's start-up rule gives " + std::to_string(measured));
  } else {
    delay.comment.push_back(
        "MariaDB times 2 x 16 PAUSEs at start-up (my_cpu_init): " + fmt("%.1f", in.relax_ticks) +
        " TSC ticks per PAUSE here is " + (measured == kMariadbSlowMultiplier ? "above" : "at most") +
        " 30, so my_cpu_relax_multiplier = " + std::to_string(mult));
  }
  delay.comment.push_back("a spin round pauses my_cpu_relax_multiplier / 4 x innodb_spin_wait_delay = " +
                          std::to_string(per_unit) + " x D PAUSEs (no randomness): one unit is " +
                          ns_or_us(unit_here) + " here (" + fmt("%.2f", in.relax_ns) + " ns per PAUSE)");
  delay.comment.push_back("the default " + std::to_string(d0) + " meant " + std::to_string(d0) +
                          " x 50 PAUSEs = " + ns_or_us(a.target_round_ns) +
                          " a round before Skylake; here it is " + ns_or_us(a.default_round_ns) + " (" +
                          fmt("%.2f", a.default_round_ns / a.target_round_ns) + "x)");
  const double exact = a.target_round_ns / unit_here;
  if (exact < 0.5) {
    delay.comment.push_back(
        fmt("%.0f", a.target_round_ns) + " / " + fmt("%.0f", unit_here) + " = " + fmt("%.2f", exact) +
        " units: 1, the least that still pauses (0 would poll), gives " + ns_or_us(a.advised_round_ns) +
        " (" + pct(a.advised_round_ns / a.target_round_ns) + ")");
  } else if (std::fabs(d - exact) < 0.005) {
    delay.comment.push_back(fmt("%.0f", a.target_round_ns) + " / " + fmt("%.0f", unit_here) + " = " +
                            fmt("%.2f", exact) + " units: exactly " + std::to_string(d));
  } else {
    const unsigned alt = d > exact ? d - 1 : d + 1;
    delay.comment.push_back(fmt("%.0f", a.target_round_ns) + " / " + fmt("%.0f", unit_here) + " = " +
                            fmt("%.2f", exact) + " units: " + std::to_string(d) + " gives " +
                            ns_or_us(a.advised_round_ns) + " (" +
                            pct(a.advised_round_ns / a.target_round_ns) + ")" +
                            (alt >= 1 ? ", nearer in ratio than " + std::to_string(alt) + " (" +
                                            pct(alt * unit_here / a.target_round_ns) + ")"
                                      : std::string()) +
                            ": rounded " + (d > exact ? "up" : "down"));
  }
  engine_setting loops{"innodb_sync_spin_loops", kDefaultSyncSpinLoops, kDefaultSyncSpinLoops, {}};
  loops.comment.push_back("kept at the default: the rounds a wait spins before it sleeps on a futex");
  loops.comment.push_back(
      "never 0: srw_mutex_impl<true>::wait_and_lock() decrements the count before it tests it, so 0 spins "
      "without bound (docs/engines.md has the real server's measurement)");
  a.settings = {delay, loops};
  if (!in.mariadb_multiplier && std::fabs(ratio_to_threshold - 1) <= kMariadbThresholdBand) {
    const unsigned alt_d =
        nearest_in_ratio(a.target_round_ns, (other / 4) * in.relax_ns, 1, kMariadbMaxSpinWaitDelay);
    a.warnings.push_back(fmt("%.1f", in.relax_ticks) +
                         " TSC ticks per PAUSE is within 10% of MariaDB's threshold of 30: its own "
                         "start-up timing may pick my_cpu_relax_multiplier = " +
                         std::to_string(other) +
                         ", and then the advice is innodb_spin_wait_delay = " + std::to_string(alt_d) +
                         ". Read the server's value (gdb -p $(pidof mariadbd) -batch -ex 'print "
                         "(int)my_cpu_relax_multiplier'; "
                         "gdb stops the server while it reads) and pass it with --mariadb-multiplier");
  }
  return out;
}

}  // namespace

bool parse_engine(const std::string& name, engine& out) {
  if (name == "mysql") {
    out = engine::mysql;
    return true;
  }
  if (name == "mariadb") {
    out = engine::mariadb;
    return true;
  }
  return false;
}

unsigned mariadb_relax_multiplier(double ticks) {
  return ticks > kMariadbSlowPauseTicks ? kMariadbSlowMultiplier : kMariadbFastMultiplier;
}

unsigned nearest_in_ratio(double target, double per, unsigned lo, unsigned hi) {
  return nearest_by(target, lo, hi, [per](unsigned k) { return k * per; });
}

namespace {

// "" when the request is one the advice covers (the engine's version, this architecture, the
// options), with its version in `v`; else why not. Needs no measurement.
std::string request_error(const engine_advice_input& in, version_number& v) {
  if (in.arch != "x86_64") {
    return "the advice covers x86-64 (PAUSE); on " +
           (in.arch.empty() ? std::string("this machine") : in.arch) +
           " the relax instruction and timing the engines use are not derived here";
  }
  const bool mysql = in.which == engine::mysql;
  if (in.version.empty()) {
    v = mysql ? version_number{8, 0, 30} : version_number{10, 11, -1};
  } else if (!parse_version(in.version, v)) {
    return "--engine-version '" + in.version + "' is not a version such as " +
           (mysql ? "8.0.36 or 8.4" : "10.11 or 10.11.6");
  }
  if (mysql) {
    const bool before_16 = v.major < 8 || (v.major == 8 && v.minor == 0 && v.patch >= 0 && v.patch < 16);
    if (before_16) {
      return "MySQL " + in.version +
             " is not covered: innodb_spin_wait_pause_multiplier exists from 8.0.16 (before it, "
             "ut_delay hard-codes 50 PAUSEs per unit)";
    }
    if (v.major == 8 && v.minor == 0 && v.patch < 0) {
      return "MySQL 8.0 needs its patch release (8.0.16-8.0.28 and 8.0.30+ randomize "
             "the round differently): e.g. --engine-version 8.0.36";
    }
    if (v.major == 8 && v.minor == 0 && v.patch == 29) {
      return "MySQL 8.0.29 (withdrawn) is not covered: which random rule it has is "
             "not derived";
    }
    if (v.major > 8 || (v.major == 8 && v.minor > 4)) {
      return "MySQL " + in.version + " is not covered (8.0.16 through 8.4 are)";
    }
  } else {
    const bool covered = v.major == 10 && (v.minor == 6 || v.minor == 11);
    if (!covered) {
      return "MariaDB " + in.version +
             " is not covered: the advice derives 10.6 and 10.11's srw_lock spin (my_cpu_relax_multiplier / "
             "4 x innodb_spin_wait_delay PAUSEs a round); earlier releases spin in rw_lock_t, later "
             "ones may back off exponentially";
    }
  }
  if (!(in.unit_ns > 0)) return "the target delay unit must be positive";
  if (in.mariadb_multiplier && mysql) {
    return "--mariadb-multiplier applies to --advise mariadb only";
  }
  if (in.mariadb_multiplier && *in.mariadb_multiplier != kMariadbFastMultiplier &&
      *in.mariadb_multiplier != kMariadbSlowMultiplier) {
    return "--mariadb-multiplier is 100 or 200 (what my_cpu_init() can pick), not " +
           std::to_string(*in.mariadb_multiplier);
  }
  return "";
}

}  // namespace

std::string advice_request_error(const engine_advice_input& in) {
  version_number v;
  return request_error(in, v);
}

advice_result advise_engine(const engine_advice_input& in) {
  const auto refused = [&](advice_status st, std::string why) {
    advice_result r = refuse(st, std::move(why));
    r.advice.which = in.which;
    return r;
  };
  version_number v;
  if (std::string why = request_error(in, v); !why.empty())
    return refused(advice_status::usage, std::move(why));
  const bool mysql = in.which == engine::mysql;
  if (!(in.relax_ns > 0) || !std::isfinite(in.relax_ns) || !(in.relax_ticks > 0)) {
    return refused(advice_status::uncertain, "no PAUSE cost was measured on this machine: no advice");
  }
  // The advice at the median cost, and at both ends of the interval the median may be in.
  const auto at = [&](double ns, double ticks) {
    engine_advice_input x = in;
    x.relax_ns = ns;
    x.relax_ticks = ticks;
    return mysql ? advise_mysql(x, v) : advise_mariadb(x);
  };
  advice_result mid = at(in.relax_ns, in.relax_ticks);
  mid.advice.relax_ns_lo = in.relax_ns_lo;
  mid.advice.range_from_trials = in.range_from_trials;
  mid.advice.relax_ns_hi = in.relax_ns_hi;
  mid.advice.trial_ns_p10 = in.trial_ns_p10;
  mid.advice.trial_ns_p90 = in.trial_ns_p90;
  mid.advice.stable = in.stable;
  mid.advice.cpus = in.cpus;
  if (in.cpus > 0 && in.cpus <= kAdviceFewCpus) {
    mid.advice.cannot_tell =
        "this host has " + std::to_string(in.cpus) + (in.cpus == 1 ? " CPU" : " CPUs") +
        ". The rule restores the spin time per round the defaults were tuned for on many-core servers, "
        "where a waiter that spins holds one CPU of many; on " +
        std::to_string(kAdviceFewCpus) +
        " or fewer it holds one of the few the threads it waits for need, and whether any spinning pays "
        "depends on the load: sweeps of a real MariaDB under sysbench oltp_read_write on 2-vCPU guests "
        "put the best innodb_spin_wait_delay at 0, 1, 2 or 6, with the delays 0-4 within 18% of each "
        "sweep's best "
        "(one guest's best moved from 0 to 2 and back in a day)";
  }
  // A refusal keeps the measurement (what the JSON refusal reports), not the settings.
  const auto uncertain = [&](std::string why, std::vector<std::string> suggestions) {
    advice_result r = refuse(advice_status::uncertain, std::move(why));
    r.suggestions = std::move(suggestions);
    // The one judge this advice cannot replace: the operator's server under its own load.
    r.suggestions.push_back(std::string("or measure it where it counts: spinwise-calibrate --tune ") +
                            (mysql ? "mysql" : "mariadb") +
                            " steps the setting on the running server under its own load and keeps the best "
                            "(docs/operators.md)");
    r.advice = mid.advice;
    r.advice.settings.clear();
    r.advice.warnings.clear();
    return r;
  };
  const bool have_range = in.relax_ns_lo > 0 && in.relax_ns_hi >= in.relax_ns_lo && in.relax_ticks_lo > 0;
  if (!have_range) {
    if (!in.stable) {
      return uncertain("the PAUSE measurement is not stable (" + in.unstable_why +
                           ") and how sure its median is is not known: advice from it would be a guess",
                       {"measure again (spinwise-calibrate --advise measures; a saved profile from an older "
                        "spinwise lacks the median's interval)",
                        "spinwise-calibrate --watch 60 shows whether the cost drifts"});
    }
    return mid;
  }
  const advice_result lo = at(in.relax_ns_lo, in.relax_ticks_lo);
  const advice_result hi = at(in.relax_ns_hi, in.relax_ticks_hi);
  const auto values = [](const advice_result& r) {
    std::string s;
    for (const engine_setting& e : r.advice.settings) s += e.name + " = " + std::to_string(e.value) + ", ";
    return s.substr(0, s.size() - 2);
  };
  const std::string range =
      fmt("%.2f", in.relax_ns_lo) + " .. " + fmt("%.2f", in.relax_ns_hi) + " ns (" +
      fmt("%.1f", in.relax_ticks_lo) + " .. " + fmt("%.1f", in.relax_ticks_hi) + " ticks) per PAUSE, " +
      (in.range_from_trials
           ? std::string("p10 .. p90 of single trials: this profile has no interval of the median")
           : std::string("the median's 95% interval"));
  const std::string trials = in.trial_ns_p90 > 0 && !in.range_from_trials
                                 ? "; single trials " + fmt("%.2f", in.trial_ns_p10) + " .. " +
                                       fmt("%.2f", in.trial_ns_p90) + " ns, p10 .. p90"
                                 : std::string();
  const bool same = values(lo) == values(mid) && values(hi) == values(mid);
  if (!same && !in.stable) {
    std::vector<std::string> suggestions = {
        "measure again when the host is quieter, or with more trials (--trials 1001): the interval narrows "
        "as trials are added",
        "or measure at a quiet hour and advise from that profile later (spinwise-calibrate -o FILE, then "
        "--advise ... --from-profile FILE)"};
    if (in.range_from_trials) {
      suggestions.insert(
          suggestions.begin(),
          "this profile predates the median's interval and decides from single trials' p10 .. p90: "
          "a new measurement (spinwise-calibrate -o FILE) keeps the interval, much narrower on a "
          "noisy host");
    }
    // The multiplier matters only where the range straddles MariaDB's 30-tick threshold.
    if (!mysql && !in.mariadb_multiplier &&
        mariadb_relax_multiplier(in.relax_ticks_lo) != mariadb_relax_multiplier(in.relax_ticks_hi)) {
      suggestions.push_back(
          "the range straddles MariaDB's threshold of 30 ticks per PAUSE: read the server's "
          "my_cpu_relax_multiplier (docs/operators.md) and pass it with --mariadb-multiplier");
    }
    return uncertain("the PAUSE measurement is not stable (" + in.unstable_why + "; " + range + trials +
                         "), and the advice depends on where in that range the cost is: " + values(lo) +
                         " at its low end, " + values(mid) + " at the median, " + values(hi) +
                         " at its high end. No advice",
                     std::move(suggestions));
  }
  if (!same) {
    mid.advice.warnings.push_back("the cost sits at a rounding boundary: the low end of " + range +
                                  " gives " + values(lo) + ", the high end " + values(hi) +
                                  "; the advice is the median's");
  } else if (!in.stable) {
    mid.advice.warnings.push_back("the PAUSE measurement is noisy (" + in.unstable_why + "; " + range +
                                  trials + "), but every cost in that range gives these settings");
  }
  return mid;
}

engine_advice_input advice_input_from(const calibration_result& r, engine which, const std::string& version) {
  engine_advice_input in;
  in.which = which;
  in.version = version;
  in.arch = r.machine.arch;
  in.cpus = r.machine.cpu_count;
  in.unit_ns = r.settings.target_ns > 0 ? r.settings.target_ns : kDefaultTargetNs;
  std::vector<double> ns, ticks;
  std::vector<int> unstable;
  for (const cpu_calibration& c : r.cpus) {
    if (!c.error.empty()) continue;
    for (const relax_measurement& m : c.relax) {
      if (m.kind != relax_kind::pause || m.trials == 0 || !(m.ticks.median > 0)) continue;
      ns.push_back(m.ns_median);
      ticks.push_back(m.ticks.median);
      if (m.ticks.status != stability::stable) unstable.push_back(c.cpu);
      const double ns_per_tick = m.ns_median / m.ticks.median;
      const bool have_interval = m.ticks.median_lo > 0 && m.ticks.median_hi > 0;
      in.range_from_trials = in.range_from_trials || !have_interval;
      const double lo = have_interval     ? m.ticks.median_lo
                        : m.ticks.p10 > 0 ? m.ticks.p10
                                          : m.ticks.median,
                   hi = std::max(have_interval ? m.ticks.median_hi : m.ticks.p90, m.ticks.median);
      if (in.relax_ticks_lo == 0 || lo < in.relax_ticks_lo) {
        in.relax_ticks_lo = lo;
        in.relax_ns_lo = lo * ns_per_tick;
      }
      if (hi > in.relax_ticks_hi) {
        in.relax_ticks_hi = hi;
        in.relax_ns_hi = hi * ns_per_tick;
      }
      const double p10 = (m.ticks.p10 > 0 ? m.ticks.p10 : m.ticks.median) * ns_per_tick,
                   p90 = std::max(m.ticks.p90, m.ticks.median) * ns_per_tick;
      if (in.trial_ns_p10 == 0 || p10 < in.trial_ns_p10) in.trial_ns_p10 = p10;
      in.trial_ns_p90 = std::max(in.trial_ns_p90, p90);
    }
  }
  if (!ns.empty()) {
    in.relax_ns = runtime::median(ns);
    in.relax_ticks = runtime::median(ticks);
  }
  in.stable = !ns.empty() && unstable.empty();
  if (!unstable.empty()) in.unstable_why = "PAUSE not stable on cpus " + format_cpu_list(unstable);
  return in;
}

advice_rounds advise_measuring_again(
    calibration_result first, const std::function<advice_result(const calibration_result&)>& advise,
    const std::function<bool(std::uint32_t trials, calibration_result& out, std::string* why)>& measure,
    int retries, std::uint32_t max_trials) {
  advice_rounds out;
  out.result = std::move(first);
  out.trials.push_back(out.result.settings.trials);
  out.advice = advise(out.result);
  // The interval of the median narrows as trials are added: three times the trials, each time.
  for (int again = 0; again < retries && out.advice.status == advice_status::uncertain &&
                      std::uint64_t{out.result.settings.trials} * 3 <= max_trials;
       ++again) {
    calibration_result more;
    if (!measure(out.result.settings.trials * 3, more, &out.why)) {
      out.failed = true;
      return out;
    }
    if (out.result.has_c2c && !more.has_c2c) {
      more.has_c2c = true;
      more.c2c = out.result.c2c;
    }
    out.result = std::move(more);
    out.trials.push_back(out.result.settings.trials);
    out.advice = advise(out.result);
  }
  if (out.trials.size() > 1) {
    std::string measured;
    for (std::uint32_t t : out.trials) measured += (measured.empty() ? "" : ", then ") + std::to_string(t);
    out.advice.advice.measured =
        "trials a CPU: " + measured + " (the fewer left the advice open on a noisy host)";
    if (out.advice.status != advice_status::ok)
      out.advice.message += " (measured with " + measured + " trials a CPU)";
  }
  return out;
}

}  // namespace spinwise
