// spinwise-calibrate --advise's arithmetic (engine_advice.hpp), driven with the figures of CPUs
// other than this one: the advice must give back the engines' defaults on the CPUs the defaults
// were tuned on, restore their round time elsewhere, round the way it says, and refuse what it
// does not cover.
#include "spinwise/runtime/engine_advice.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sw = spinwise;

namespace {

sw::engine_advice_input cpu(sw::engine e, double ns, double ticks) {
  sw::engine_advice_input in;
  in.which = e;
  in.arch = "x86_64";
  in.relax_ns = ns;
  in.relax_ticks = ticks;
  in.stable = true;
  return in;
}

// This machine's noisy PAUSE across MariaDB's threshold: 28 .. 35 ticks (10.77 .. 13.46 ns), an
// unstable measurement whose median is 11.73 ns, 30.5 ticks.
sw::engine_advice_input noisy_across_mariadb_threshold() {
  sw::engine_advice_input in = cpu(sw::engine::mariadb, 11.73, 30.5);
  in.stable = false;
  in.relax_ns_lo = 10.77;
  in.relax_ns_hi = 13.46;
  in.relax_ticks_lo = 28;
  in.relax_ticks_hi = 35;
  return in;
}

unsigned value(const sw::advice_result& r, const std::string& name) {
  for (const sw::engine_setting& s : r.advice.settings) {
    if (s.name == name) return s.value;
  }
  ADD_FAILURE() << "no setting " << name;
  return ~0u;
}

std::string all_comments(const sw::advice_result& r) {
  std::string s;
  for (const sw::engine_setting& e : r.advice.settings) {
    for (const std::string& c : e.comment) s += c + "\n";
  }
  return s;
}

}  // namespace

TEST(EngineAdvice, TheTunedOnCpuGetsTheDefaultsBack) {
  // PAUSE 10 cycles at 2.5 GHz: 4 ns, 10 TSC ticks. 50 PAUSEs are the 200 ns unit.
  const sw::advice_result my = sw::advise_engine(cpu(sw::engine::mysql, 4.0, 10.0));
  ASSERT_EQ(my.status, sw::advice_status::ok) << my.message;
  EXPECT_EQ(value(my, "innodb_spin_wait_pause_multiplier"), 50u);
  EXPECT_EQ(value(my, "innodb_spin_wait_delay"), 6u);
  EXPECT_EQ(value(my, "innodb_sync_spin_loops"), 30u);
  EXPECT_EQ(my.advice.section, "mysqld");
  EXPECT_NE(all_comments(my).find("PAUSEs: exactly 50"), std::string::npos) << all_comments(my);
  EXPECT_EQ(all_comments(my).find("rounded"), std::string::npos) << "nothing was rounded";

  const sw::advice_result ma = sw::advise_engine(cpu(sw::engine::mariadb, 4.0, 10.0));
  ASSERT_EQ(ma.status, sw::advice_status::ok) << ma.message;
  EXPECT_EQ(ma.advice.relax_multiplier, 200u);
  EXPECT_EQ(value(ma, "innodb_spin_wait_delay"), 4u);
  EXPECT_EQ(value(ma, "innodb_sync_spin_loops"), 30u);
  EXPECT_DOUBLE_EQ(ma.advice.target_round_ns, 800.0);
  EXPECT_DOUBLE_EQ(ma.advice.advised_round_ns, 800.0);
  EXPECT_EQ(ma.advice.section, "mariadbd");
  EXPECT_TRUE(ma.advice.warnings.empty());
  EXPECT_NE(all_comments(ma).find("units: exactly 4"), std::string::npos) << all_comments(ma);
}

TEST(EngineAdvice, SkylakePauseShortensTheUnit) {
  // PAUSE 140 cycles at 2.0 GHz: 70 ns, 140 ticks.
  const sw::advice_result my = sw::advise_engine(cpu(sw::engine::mysql, 70.0, 140.0));
  ASSERT_EQ(my.status, sw::advice_status::ok) << my.message;
  // 200 / 70 = 2.86: 3 (210 ns, +5%) is nearer in ratio than 2 (140 ns, -30%).
  EXPECT_EQ(value(my, "innodb_spin_wait_pause_multiplier"), 3u);
  EXPECT_EQ(value(my, "innodb_spin_wait_delay"), 6u);
  EXPECT_NE(all_comments(my).find("rounded up"), std::string::npos) << all_comments(my);
  // 8.0.30+: the mean round at the default is 6/2 = 3 units.
  EXPECT_DOUBLE_EQ(my.advice.target_round_ns, 600.0);
  EXPECT_DOUBLE_EQ(my.advice.default_round_ns, 3 * 50 * 70.0);

  // MariaDB sees 140 > 30 ticks: multiplier 100, 25 PAUSEs a unit = 1750 ns, longer than the whole
  // 800 ns round: 1, the least that still pauses.
  const sw::advice_result ma = sw::advise_engine(cpu(sw::engine::mariadb, 70.0, 140.0));
  ASSERT_EQ(ma.status, sw::advice_status::ok) << ma.message;
  EXPECT_EQ(ma.advice.relax_multiplier, 100u);
  EXPECT_EQ(value(ma, "innodb_spin_wait_delay"), 1u);
  EXPECT_NE(all_comments(ma).find("the least that still pauses"), std::string::npos) << all_comments(ma);
}

TEST(EngineAdvice, ThisSessionsXeonNearTheThreshold) {
  // 10.58 ns, 27.5 ticks (the 2-vCPU Xeon of 2026-12-01): MySQL 200 / 10.58 = 18.9 -> 19.
  const sw::advice_result my = sw::advise_engine(cpu(sw::engine::mysql, 10.58, 27.5));
  ASSERT_EQ(my.status, sw::advice_status::ok);
  EXPECT_EQ(value(my, "innodb_spin_wait_pause_multiplier"), 19u);
  EXPECT_EQ(value(my, "innodb_spin_wait_delay"), 6u);

  // MariaDB: 27.5 <= 30 ticks, multiplier 200, a unit of 50 x 10.58 = 529 ns; 800 / 529 = 1.51:
  // 2 (+32%) is nearer in ratio than 1 (-34%).
  const sw::advice_result ma = sw::advise_engine(cpu(sw::engine::mariadb, 10.58, 27.5));
  ASSERT_EQ(ma.status, sw::advice_status::ok);
  EXPECT_EQ(ma.advice.relax_multiplier, 200u);
  EXPECT_EQ(value(ma, "innodb_spin_wait_delay"), 2u);
  EXPECT_NE(all_comments(ma).find("rounded up"), std::string::npos);
  // Within 10% of the threshold the engine's own timing may pick 100: the warning says what the
  // advice is then (25 x 10.58 = 264.5 ns a unit: 3).
  ASSERT_EQ(ma.advice.warnings.size(), 1u);
  EXPECT_NE(ma.advice.warnings[0].find("my_cpu_relax_multiplier = 100"), std::string::npos);
  EXPECT_NE(ma.advice.warnings[0].find("innodb_spin_wait_delay = 3"), std::string::npos)
      << ma.advice.warnings[0];

  // The server's own value, given, decides it, and the warning goes.
  sw::engine_advice_input in = cpu(sw::engine::mariadb, 10.58, 27.5);
  in.mariadb_multiplier = 100;
  const sw::advice_result given = sw::advise_engine(in);
  ASSERT_EQ(given.status, sw::advice_status::ok);
  EXPECT_EQ(value(given, "innodb_spin_wait_delay"), 3u);
  EXPECT_TRUE(given.advice.warnings.empty());
}

TEST(EngineAdvice, MariadbMultiplierRule) {
  EXPECT_EQ(sw::mariadb_relax_multiplier(10.0), 200u);
  EXPECT_EQ(sw::mariadb_relax_multiplier(30.0), 200u);  // "more than 480 ticks per 16" is strict
  EXPECT_EQ(sw::mariadb_relax_multiplier(30.01), 100u);
  EXPECT_EQ(sw::mariadb_relax_multiplier(140.0), 100u);
}

TEST(EngineAdvice, NearestInRatio) {
  EXPECT_EQ(sw::nearest_in_ratio(800, 529, 1, 6000), 2u);
  EXPECT_EQ(sw::nearest_in_ratio(800, 589, 1, 6000), 1u);
  EXPECT_EQ(sw::nearest_in_ratio(200, 4, 1, 100), 50u);
  EXPECT_EQ(sw::nearest_in_ratio(200, 1.5, 1, 100), 100u);  // clamped at the top
  EXPECT_EQ(sw::nearest_in_ratio(200, 500, 1, 100), 1u);    // and at the bottom
  // A tie in ratio (target the geometric mean of 100 and 200) goes to the larger.
  EXPECT_EQ(sw::nearest_in_ratio(100 * std::sqrt(2.0), 100, 1, 10), 2u);
}

TEST(EngineAdvice, MysqlClampedMultiplierMovesTheDelay) {
  // 1.5 ns per PAUSE would need 133 PAUSEs a unit: clamped to 100 (150 ns), and the delay makes up
  // the round: 600 ns mean = D / 2 x 150 -> D = 8.
  const sw::advice_result fast = sw::advise_engine(cpu(sw::engine::mysql, 1.5, 3.0));
  ASSERT_EQ(fast.status, sw::advice_status::ok);
  EXPECT_EQ(value(fast, "innodb_spin_wait_pause_multiplier"), 100u);
  EXPECT_EQ(value(fast, "innodb_spin_wait_delay"), 8u);
  EXPECT_NE(all_comments(fast).find("clamped"), std::string::npos);
  // 500 ns per PAUSE: multiplier 1 (500 ns a unit); 600 ns mean: D = 2 (500, -17%) beats 3 (750, +25%).
  const sw::advice_result slow = sw::advise_engine(cpu(sw::engine::mysql, 500, 1300));
  ASSERT_EQ(slow.status, sw::advice_status::ok);
  EXPECT_EQ(value(slow, "innodb_spin_wait_pause_multiplier"), 1u);
  EXPECT_EQ(value(slow, "innodb_spin_wait_delay"), 2u);
}

TEST(EngineAdvice, MysqlBeforeAndAfter8030RandomizeDifferently) {
  // 8.0.16-8.0.28: random 0..D-1, mean 2.5 units at the default.
  sw::engine_advice_input in = cpu(sw::engine::mysql, 70.0, 140.0);
  in.version = "8.0.20";
  const sw::advice_result old = sw::advise_engine(in);
  ASSERT_EQ(old.status, sw::advice_status::ok) << old.message;
  EXPECT_DOUBLE_EQ(old.advice.target_round_ns, 500.0);
  EXPECT_EQ(value(old, "innodb_spin_wait_delay"), 6u);
  EXPECT_NE(old.advice.engine_name.find("8.0.16-8.0.28"), std::string::npos);
  in.version = "8.0.36";
  EXPECT_DOUBLE_EQ(sw::advise_engine(in).advice.target_round_ns, 600.0);
}

TEST(EngineAdvice, VersionsOutsideTheDerivedCodeAreRefused) {
  const auto status = [](sw::engine e, const char* v) {
    sw::engine_advice_input in = cpu(e, 10.58, 27.5);
    in.version = v;
    return sw::advise_engine(in).status;
  };
  using sw::advice_status;
  EXPECT_EQ(status(sw::engine::mysql, ""), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mysql, "8.0.16"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mysql, "8.0.28"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mysql, "8.4"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mysql, "8.4.3"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mysql, "8.0.15"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "8.0"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "8.0.29"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "9.1"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "5.7.44"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "eight"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "8.0.36.1"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mysql, "8..1"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mariadb, ""), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mariadb, "10.6"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mariadb, "10.11.19"), advice_status::ok);
  EXPECT_EQ(status(sw::engine::mariadb, "10.5"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mariadb, "11.4"), advice_status::usage);
  EXPECT_EQ(status(sw::engine::mariadb, "10.11."), advice_status::usage);
}

TEST(EngineAdvice, OtherArchitecturesAndBadInputsAreRefused) {
  sw::engine_advice_input in = cpu(sw::engine::mysql, 20.0, 1.0);
  in.arch = "aarch64";
  sw::advice_result r = sw::advise_engine(in);
  EXPECT_EQ(r.status, sw::advice_status::usage);
  EXPECT_NE(r.message.find("x86-64"), std::string::npos);
  in.arch = "generic";
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::usage);

  in = cpu(sw::engine::mariadb, 10.58, 27.5);
  in.mariadb_multiplier = 150;
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::usage);
  in = cpu(sw::engine::mysql, 10.58, 27.5);
  in.mariadb_multiplier = 200;
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::usage);

  in = cpu(sw::engine::mysql, 0, 0);  // nothing measured
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::uncertain);
  sw::engine e{};
  EXPECT_TRUE(sw::parse_engine("mariadb", e));
  EXPECT_EQ(e, sw::engine::mariadb);
  EXPECT_FALSE(sw::parse_engine("postgres", e));
  EXPECT_FALSE(sw::parse_engine("MySQL", e));
}

TEST(EngineAdvice, UnstableMeasurementAdvisesOnlyWhatItsSpreadCannotChange) {
  // No spread known: no advice.
  sw::engine_advice_input in = cpu(sw::engine::mysql, 70.0, 140.0);
  in.stable = false;
  in.unstable_why = "PAUSE not stable on cpus 0-1";
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::uncertain);
  // Skylake +-10%: every cost from 63 to 77 ns gives multiplier 3, delay 6.
  in.relax_ns_lo = 63;
  in.relax_ns_hi = 77;
  in.relax_ticks_lo = 126;
  in.relax_ticks_hi = 154;
  sw::advice_result r = sw::advise_engine(in);
  ASSERT_EQ(r.status, sw::advice_status::ok) << r.message;
  EXPECT_EQ(value(r, "innodb_spin_wait_pause_multiplier"), 3u);
  ASSERT_EQ(r.advice.warnings.size(), 1u);
  EXPECT_NE(r.advice.warnings[0].find("every cost in that range gives these settings"), std::string::npos);
  // Across MariaDB's threshold: 2 at p10, 1 or 3 elsewhere.
  in = noisy_across_mariadb_threshold();
  r = sw::advise_engine(in);
  EXPECT_EQ(r.status, sw::advice_status::uncertain);
  EXPECT_NE(r.message.find("at its low end"), std::string::npos) << r.message;
  // A stable measurement at a rounding boundary still advises, and says so.
  in.stable = true;
  r = sw::advise_engine(in);
  ASSERT_EQ(r.status, sw::advice_status::ok);
  ASSERT_FALSE(r.advice.warnings.empty());
  EXPECT_NE(r.advice.warnings.back().find("rounding boundary"), std::string::npos);
}

TEST(EngineAdvice, InputFromACalibration) {
  sw::calibration_result cal;
  cal.machine.arch = "x86_64";
  for (int c = 0; c < 3; ++c) {
    sw::cpu_calibration cc;
    cc.cpu = c;
    sw::relax_measurement m;
    m.kind = sw::relax_kind::pause;
    m.trials = 101;
    m.ticks.median = 20.0 + 10 * c;  // 20, 30, 40 ticks at 2 ticks per ns
    m.ticks.p10 = m.ticks.median - 1;
    m.ticks.p90 = m.ticks.median + 2;
    m.ticks.status = c == 2 ? sw::stability::noisy : sw::stability::stable;
    m.ns_median = m.ticks.median / 2;
    cc.relax.push_back(m);
    sw::relax_measurement other = m;
    other.kind = sw::relax_kind::none;
    other.ticks.median = 0.5;
    cc.relax.push_back(other);  // only PAUSE counts
    cal.cpus.push_back(cc);
  }
  sw::cpu_calibration failed;
  failed.cpu = 3;
  failed.error = "cannot run on cpu 3";
  cal.cpus.push_back(failed);
  const sw::engine_advice_input in = sw::advice_input_from(cal, sw::engine::mariadb, "10.11");
  EXPECT_EQ(in.arch, "x86_64");
  EXPECT_DOUBLE_EQ(in.relax_ticks, 30.0);
  EXPECT_DOUBLE_EQ(in.relax_ns, 15.0);
  // These summaries have no interval of the median (an older profile's): p10..p90 stands in.
  EXPECT_TRUE(in.range_from_trials);
  EXPECT_DOUBLE_EQ(in.relax_ticks_lo, 19.0);
  EXPECT_DOUBLE_EQ(in.relax_ticks_hi, 42.0);
  EXPECT_DOUBLE_EQ(in.relax_ns_hi, 21.0);
  for (sw::cpu_calibration& c : cal.cpus) {
    for (sw::relax_measurement& m : c.relax) {
      m.ticks.median_lo = m.ticks.median - 0.25;
      m.ticks.median_hi = m.ticks.median + 0.5;
    }
  }
  const sw::engine_advice_input with = sw::advice_input_from(cal, sw::engine::mariadb, "10.11");
  EXPECT_FALSE(with.range_from_trials);
  EXPECT_DOUBLE_EQ(with.relax_ticks_lo, 19.75);
  EXPECT_DOUBLE_EQ(with.relax_ticks_hi, 40.5);
  EXPECT_DOUBLE_EQ(with.trial_ns_p10, 9.5);
  EXPECT_DOUBLE_EQ(with.trial_ns_p90, 21.0);
  EXPECT_FALSE(in.stable);
  EXPECT_NE(in.unstable_why.find("cpus 2"), std::string::npos) << in.unstable_why;
  EXPECT_DOUBLE_EQ(in.unit_ns, sw::kDefaultTargetNs);
}

namespace {

// A calibration of `cpus` CPUs whose PAUSE trials are `fast` ticks, with a share `slow_share` of
// them at about twice that: what a 2-vCPU guest measured beside a 32-thread lock benchmark
// (37-40 ticks, 15-30% of the trials at 73-86; the ticks are 2.1 a ns there).
sw::calibration_result with_slow_trials(double fast, double slow_share, int cpus = 2) {
  sw::calibration_result cal;
  cal.machine.arch = "x86_64";
  for (int c = 0; c < cpus; ++c) {
    std::vector<double> ticks;
    const int n = 101, slow = static_cast<int>(slow_share * n + 0.5);
    for (int i = 0; i < n; ++i) {
      const double jitter = 0.004 * fast * ((i * 37 + c * 11) % 11 - 5) / 5.0;  // +-0.4%
      ticks.push_back(i < slow ? 2.05 * fast + 6 * jitter : fast + jitter);
    }
    sw::cpu_calibration cc;
    cc.cpu = c;
    sw::relax_measurement m;
    m.kind = sw::relax_kind::pause;
    m.ticks = sw::summarize(ticks);
    m.trials = m.ticks.n;
    m.ns_median = m.ticks.median / 2.1;
    cc.relax.push_back(m);
    cal.cpus.push_back(cc);
  }
  return cal;
}

}  // namespace

TEST(EngineAdvice, ATailOfSlowTrialsOnABusyHostStillGetsAdvice) {
  // A quarter of the trials twice as slow: bimodal, p10..p90 from 37 to 77 ticks, which gives
  // innodb_spin_wait_delay 2 at one end and 1 at the other. The median stays in the fast mode,
  // and its interval is what decides.
  const sw::calibration_result busy = with_slow_trials(37.4, 0.25);
  ASSERT_EQ(busy.cpus[0].relax[0].ticks.status, sw::stability::bimodal);
  sw::engine_advice_input in = sw::advice_input_from(busy, sw::engine::mariadb, "10.11");
  EXPECT_FALSE(in.range_from_trials);
  EXPECT_FALSE(in.stable);
  EXPECT_LT(in.relax_ticks_hi, 38.0);
  EXPECT_GT(in.trial_ns_p90, 2 * in.relax_ns);
  sw::advice_result r = sw::advise_engine(in);
  ASSERT_EQ(r.status, sw::advice_status::ok) << r.message;
  EXPECT_EQ(value(r, "innodb_spin_wait_delay"), 2u);
  ASSERT_EQ(r.advice.warnings.size(), 1u);
  EXPECT_NE(r.advice.warnings[0].find("single trials"), std::string::npos) << r.advice.warnings[0];

  // The rule it replaced decided from single trials' p10..p90, and refused this host.
  in.range_from_trials = true;
  for (const sw::cpu_calibration& c : busy.cpus) {
    in.relax_ticks_lo = std::min(in.relax_ticks_lo, c.relax[0].ticks.p10);
    in.relax_ticks_hi = std::max(in.relax_ticks_hi, c.relax[0].ticks.p90);
  }
  in.relax_ns_lo = in.relax_ticks_lo / 2.1;
  in.relax_ns_hi = in.relax_ticks_hi / 2.1;
  EXPECT_EQ(sw::advise_engine(in).status, sw::advice_status::uncertain);
}

TEST(EngineAdvice, RefusesOnlyWhenTheMedianItselfIsInDoubt) {
  // Half the trials slow: the median may be in either mode, 1 or 2 units apart. No advice, and
  // no hint about MariaDB's multiplier: 37 and 77 ticks are both above its 30-tick threshold.
  sw::advice_result r =
      sw::advise_engine(sw::advice_input_from(with_slow_trials(37.4, 0.5), sw::engine::mariadb, ""));
  ASSERT_EQ(r.status, sw::advice_status::uncertain);
  EXPECT_NE(r.message.find("the median's 95% interval"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("--mariadb-multiplier"), std::string::npos) << r.message;
  ASSERT_FALSE(r.suggestions.empty());
  for (const std::string& s : r.suggestions)
    EXPECT_EQ(s.find("--mariadb-multiplier"), std::string::npos) << s;
  EXPECT_NE(r.suggestions[0].find("--trials"), std::string::npos) << r.suggestions[0];
  // Across the threshold (28 .. 35 ticks), the multiplier is the question: the hint is given.
  sw::engine_advice_input in = noisy_across_mariadb_threshold();
  r = sw::advise_engine(in);
  ASSERT_EQ(r.status, sw::advice_status::uncertain);
  ASSERT_GE(r.suggestions.size(), 2u);
  EXPECT_NE(r.suggestions[r.suggestions.size() - 2].find("--mariadb-multiplier"), std::string::npos)
      << r.suggestions[r.suggestions.size() - 2];
  // Every refusal ends by pointing at the judge the rule cannot replace: the live server (--tune).
  EXPECT_NE(r.suggestions.back().find("spinwise-calibrate --tune mariadb"), std::string::npos)
      << r.suggestions.back();
  // Given the multiplier, that hint is gone.
  in.mariadb_multiplier = 100;
  r = sw::advise_engine(in);
  for (const std::string& s : r.suggestions)
    EXPECT_EQ(s.find("--mariadb-multiplier"), std::string::npos) << s;
}

TEST(EngineAdvice, ARefusalIsAJsonDocumentToo) {
  const sw::advice_result r =
      sw::advise_engine(sw::advice_input_from(with_slow_trials(37.4, 0.5), sw::engine::mariadb, ""));
  ASSERT_EQ(r.status, sw::advice_status::uncertain);
  const auto j = nlohmann::json::parse(sw::format_refusal_json(r));
  EXPECT_EQ(j["engine"], "mariadb");
  EXPECT_TRUE(j["settings"].is_null());
  EXPECT_EQ(j["refused"], r.message);
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["suggestions"].size(), r.suggestions.size());
  EXPECT_GT(j["relax"]["ns"].get<double>(), 0);
  EXPECT_LT(j["relax"]["ns_lo"].get<double>(), j["relax"]["ns_hi"].get<double>());
  // A usage refusal says so with its own exit code.
  sw::engine_advice_input bad = cpu(sw::engine::mysql, 10, 20);
  bad.version = "5.7.44";
  const auto u = nlohmann::json::parse(sw::format_refusal_json(sw::advise_engine(bad)));
  EXPECT_EQ(u["exit_code"], 2);
  EXPECT_EQ(u["engine"], "mysql");
}

TEST(EngineAdvice, TheSnippetSaysHowToApplyItLive) {
  const sw::advice_result r = sw::advise_engine(cpu(sw::engine::mysql, 70.0, 140.0));
  ASSERT_EQ(r.status, sw::advice_status::ok);
  const std::string text = sw::format_advice_text(r.advice);
  for (const sw::engine_setting& s : r.advice.settings) {
    const std::string line = "#   SET GLOBAL " + s.name + " = " + std::to_string(s.value) + ";\n";
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  // And how to confirm it where it counts: the engine's own --tune.
  EXPECT_NE(
      text.find("# To confirm on the running server under its own load: spinwise-calibrate --tune mysql"),
      std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(sw::format_advice_json(r.advice));
  ASSERT_EQ(j["set_global"].size(), r.advice.settings.size());
  EXPECT_EQ(j["set_global"][0], "SET GLOBAL " + r.advice.settings[0].name + " = " +
                                    std::to_string(r.advice.settings[0].value) + ";");
  EXPECT_TRUE(j["refused"].is_null());
}

TEST(EngineAdvice, SnippetAndJsonCarryTheSameSettings) {
  const sw::advice_result r = sw::advise_engine(cpu(sw::engine::mariadb, 10.58, 27.5));
  ASSERT_EQ(r.status, sw::advice_status::ok);
  const std::string text = sw::format_advice_text(r.advice);
  EXPECT_NE(text.find("\n[mariadbd]\ninnodb_spin_wait_delay = 2\n#   "), std::string::npos) << text;
  EXPECT_NE(text.find("\ninnodb_sync_spin_loops = 30\n#   "), std::string::npos) << text;
  // Every line is a comment, the section, or name = value: what my.cnf takes.
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    EXPECT_TRUE(line.rfind("#", 0) == 0 || line == "[mariadbd]" || line.find(" = ") != std::string::npos)
        << line;
    pos = end + 1;
  }
  const nlohmann::json j = nlohmann::json::parse(sw::format_advice_json(r.advice));
  EXPECT_EQ(j["engine"], "mariadb");
  EXPECT_EQ(j["settings"]["innodb_spin_wait_delay"]["value"], 2);
  EXPECT_EQ(j["settings"]["innodb_spin_wait_delay"]["default"], 4);
  EXPECT_EQ(j["my_cpu_relax_multiplier"], 200);
  EXPECT_DOUBLE_EQ(j["relax"]["ns"].get<double>(), 10.58);
  EXPECT_EQ(j["warnings"].size(), 1u);
}

// On a few CPUs the rule cannot tell (issue 46 item 2): the settings stay the rule's, the snippet
// and the JSON say why and what measures instead, and a host of more CPUs, or of a count not
// known, gets the rule's verdict as before. The Zen 5 guest's figures: PAUSE 17.85 ns, 37.4 ticks.
TEST(EngineAdvice, OnAFewCpusTheRuleCannotTellAndNamesTune) {
  for (const sw::engine e : {sw::engine::mariadb, sw::engine::mysql}) {
    const std::string tune =
        std::string("spinwise-calibrate --tune ") + (e == sw::engine::mysql ? "mysql" : "mariadb");
    sw::engine_advice_input in = cpu(e, 17.85, 37.4);
    const sw::advice_result unknown = sw::advise_engine(in);
    for (const int cpus : {0, 1, 2, sw::kAdviceFewCpus, sw::kAdviceFewCpus + 1, 64}) {
      in.cpus = cpus;
      const sw::advice_result r = sw::advise_engine(in);
      ASSERT_EQ(r.status, sw::advice_status::ok) << cpus;
      const bool few = cpus > 0 && cpus <= sw::kAdviceFewCpus;
      EXPECT_EQ(r.advice.cannot_tell.empty(), !few) << cpus << ": " << r.advice.cannot_tell;
      for (std::size_t i = 0; i < r.advice.settings.size(); ++i)
        EXPECT_EQ(r.advice.settings[i].value, unknown.advice.settings[i].value) << cpus;  // still the rule's
      const std::string text = sw::format_advice_text(r.advice);
      const nlohmann::json j = nlohmann::json::parse(sw::format_advice_json(r.advice));
      EXPECT_EQ(j["tune"], tune);
      if (few) {
        const std::string says =
            "# CANNOT TELL: this host has " + std::to_string(cpus) + (cpus == 1 ? " CPU." : " CPUs.");
        EXPECT_NE(text.find(says), std::string::npos) << text;
        EXPECT_NE(text.find("# The settings below are the rule's. " + tune + " measures"), std::string::npos)
            << text;
        EXPECT_EQ(text.find("# To confirm"), std::string::npos) << text;
        EXPECT_EQ(j["cannot_tell"], r.advice.cannot_tell);
        EXPECT_EQ(j["host_cpus"], cpus);
      } else {
        EXPECT_EQ(text.find("CANNOT TELL"), std::string::npos) << text;
        EXPECT_NE(text.find("# To confirm on the running server under its own load: " + tune),
                  std::string::npos)
            << text;
        EXPECT_TRUE(j["cannot_tell"].is_null()) << j.dump();
        EXPECT_EQ(j["host_cpus"].is_null(), cpus == 0) << j.dump();
      }
    }
  }
  // A calibration says how many CPUs its machine has.
  sw::calibration_result cal;
  cal.machine.cpu_count = 2;
  EXPECT_EQ(sw::advice_input_from(cal, sw::engine::mariadb, "10.11").cpus, 2);
}

// The busy host's rule, with the measurement and the advice played by the test: three times the
// trials while the advice is open, twice at most, never past the bound, saying what it did; a
// failed measurement ends it; the core-to-core figure of the first measurement is kept.
TEST(EngineAdvice, AnOpenAdviceIsMeasuredAgainWithMoreTrialsTwiceAtMost) {
  const auto measured_with = [](std::uint32_t trials) {
    sw::calibration_result r;
    r.settings.trials = trials;
    return r;
  };
  std::vector<std::uint32_t> asked;
  const auto measure = [&](std::uint32_t trials, sw::calibration_result& out, std::string*) {
    asked.push_back(trials);
    out = measured_with(trials);
    return true;
  };
  const auto open_below = [](std::uint32_t enough) {
    return [enough](const sw::calibration_result& r) {
      sw::advice_result a;
      if (r.settings.trials < enough) {
        a.status = sw::advice_status::uncertain;
        a.message = "open";
      }
      return a;
    };
  };

  // Settled by the second measurement.
  sw::calibration_result first = measured_with(101);
  first.has_c2c = true;
  first.c2c.method = "the first measurement's";
  sw::advice_rounds r = sw::advise_measuring_again(first, open_below(300), measure);
  EXPECT_EQ(r.advice.status, sw::advice_status::ok);
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{303}));
  EXPECT_EQ(r.trials, (std::vector<std::uint32_t>{101, 303}));
  EXPECT_EQ(r.result.settings.trials, 303u) << "the advice comes with the measurement it is from";
  EXPECT_NE(r.advice.advice.measured.find("101, then 303"), std::string::npos) << r.advice.advice.measured;
  EXPECT_TRUE(r.result.has_c2c);
  EXPECT_EQ(r.result.c2c.method, "the first measurement's");

  // Never settled: two more measurements, then the refusal says with how many trials.
  asked.clear();
  r = sw::advise_measuring_again(measured_with(101), open_below(1u << 30), measure);
  EXPECT_EQ(r.advice.status, sw::advice_status::uncertain);
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{303, 909}));
  EXPECT_NE(r.advice.message.find("(measured with 101, then 303, then 909 trials a CPU)"), std::string::npos)
      << r.advice.message;

  // Settled at once: one measurement, nothing said about it.
  asked.clear();
  r = sw::advise_measuring_again(measured_with(101), open_below(0), measure);
  EXPECT_TRUE(asked.empty());
  EXPECT_TRUE(r.advice.advice.measured.empty());

  // Not past the bound on trials.
  asked.clear();
  r = sw::advise_measuring_again(measured_with(40000), open_below(1u << 30), measure, 2, 100000);
  EXPECT_TRUE(asked.empty()) << "120000 trials is over the bound";
  EXPECT_EQ(r.advice.status, sw::advice_status::uncertain);

  // A measurement that fails ends it with its reason.
  const auto failing = [](std::uint32_t, sw::calibration_result&, std::string* why) {
    *why = "no CPU left";
    return false;
  };
  r = sw::advise_measuring_again(measured_with(101), open_below(1u << 30), failing);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.why, "no CPU left");
}
