// The relax cost over time (spinwise-calibrate --watch): the verdict and summary over time on
// made-up samples, what drift means (one text for --watch and the full run's warnings), a short
// real watch in process, and the CLI's JSON document and PNG timeline.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "calibration/calibration_internal.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "test_util.hpp"

namespace sw = spinwise;

namespace spinwise {
// A failed verdict prints "drifting", not "1-byte object <03>" (found through ADL by gtest).
static void PrintTo(stability s, std::ostream* os) { *os << to_string(s); }
}  // namespace spinwise

namespace {

// Samples every 500 ms at these ns per relax; ticks at a 2.6 GHz counter.
std::vector<sw::relax_time_sample> series(const std::vector<double>& ns) {
  std::vector<sw::relax_time_sample> out;
  for (std::size_t i = 0; i < ns.size(); ++i)
    out.push_back({500.0 * static_cast<double>(i), ns[i], ns[i] * 2.6});
  return out;
}

// PAUSE drifting from min to max ns per relax, as `seen` says it was seen.
sw::relax_drift_observation drifting_pause(double min, double median, double max, const char* seen) {
  sw::relax_drift_observation o;
  o.kind = sw::relax_kind::pause;
  o.ns_min = min;
  o.ns_median = median;
  o.ns_max = max;
  o.status = sw::stability::drifting;
  o.seen = seen;
  return o;
}

// A calibration's PAUSE measurement: 101 trials at `median` ticks a relax, judged `status`.
sw::relax_measurement pause_measurement(double median, sw::stability status) {
  sw::relax_measurement m;
  m.kind = sw::relax_kind::pause;
  m.trials = 101;
  m.ticks.n = 101;
  m.ticks.median = median;
  m.ticks.status = status;
  return m;
}

// The independent PAUSE measurement on a Skylake-class Firecracker VM, every half second (the
// reason --watch exists): 6.2 to 10.5 ns.
const std::vector<double> kFirecrackerPause = {6.5, 6.6,  7.4, 6.2, 7.9, 8.3, 7.8, 8.3,
                                               6.5, 10.5, 7.8, 8.3, 8.3, 6.6, 8.3};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// Guards against a verdict that calls a quiet host drifting (every engine would be told its
// profile is worthless) and against wrong figures in the table: exact min/median/max/spread.
TEST(WatchSummary, StableHostExactFigures) {
  const sw::relax_time_summary s =
      sw::summarize_over_time(series({14.0, 14.1, 13.9, 14.0, 14.2, 13.8, 14.0}));
  EXPECT_EQ(s.samples, 7u);
  EXPECT_DOUBLE_EQ(s.ns_min, 13.8);
  EXPECT_DOUBLE_EQ(s.ns_median, 14.0);
  EXPECT_DOUBLE_EQ(s.ns_max, 14.2);
  EXPECT_NEAR(s.spread, 0.4 / 14.0, 1e-12);
  // Type 7 over 13.8 13.9 14.0 14.0 14.0 14.1 14.2: p10 at h = 0.6, p90 at h = 5.4.
  EXPECT_NEAR(s.ns_p10, 13.86, 1e-12);
  EXPECT_NEAR(s.ns_p90, 14.14, 1e-12);
  EXPECT_NEAR(s.central_spread, 0.28 / 14.0, 1e-12);
  EXPECT_NEAR(s.ticks_min, 13.8 * 2.6, 1e-9);
  EXPECT_NEAR(s.ticks_median, 14.0 * 2.6, 1e-9);
  EXPECT_NEAR(s.ticks_max, 14.2 * 2.6, 1e-9);
  EXPECT_EQ(s.status, sw::stability::stable);
}

// Guards against missing the case --watch was built for: the Firecracker series must be drifting.
TEST(WatchSummary, FirecrackerSeriesDrifts) {
  const sw::relax_time_summary s = sw::summarize_over_time(series(kFirecrackerPause));
  EXPECT_EQ(s.samples, 15u);
  EXPECT_DOUBLE_EQ(s.ns_min, 6.2);
  EXPECT_DOUBLE_EQ(s.ns_median, 7.8);
  EXPECT_DOUBLE_EQ(s.ns_max, 10.5);
  EXPECT_NEAR(s.spread, (10.5 - 6.2) / 7.8, 1e-12);
  // Sorted: 6.2 6.5 6.5 6.6 6.6 7.4 7.8 7.8 7.9 8.3 8.3 8.3 8.3 8.3 10.5; p10 at h = 1.4 -> 6.5,
  // p90 at h = 12.6 -> 8.3.
  EXPECT_NEAR(s.ns_p10, 6.5, 1e-12);
  EXPECT_NEAR(s.ns_p90, 8.3, 1e-12);
  EXPECT_NEAR(s.central_spread, 1.8 / 7.8, 1e-12);
  EXPECT_EQ(s.status, sw::stability::drifting);
}

// Guards against one preempted sample (a 3x outlier) condemning a stable host: the verdict judges
// p10..p90, while max and the full spread still show the outlier.
TEST(WatchSummary, SingleOutlierStaysStableButIsShown) {
  std::vector<double> ns(20, 10.0);
  ns[7] = 30.0;
  const sw::relax_time_summary s = sw::summarize_over_time(series(ns));
  EXPECT_EQ(s.status, sw::stability::stable);
  EXPECT_DOUBLE_EQ(s.ns_max, 30.0);
  EXPECT_DOUBLE_EQ(s.ns_median, 10.0);
  EXPECT_DOUBLE_EQ(s.spread, 2.0);
  EXPECT_DOUBLE_EQ(s.central_spread, 0.0);
}

// The limit: p10..p90 at 8% of the median is stable, at 10.4% drifting; the limit is a setting.
TEST(WatchSummary, TenPercentBoundary) {
  // 11 samples 9.5 .. 10.5 evenly: p10 = 9.6, p90 = 10.4, median 10: 8% -> stable.
  std::vector<double> ns;
  for (int i = 0; i <= 10; ++i) ns.push_back(9.5 + 0.1 * i);
  EXPECT_EQ(sw::summarize_over_time(series(ns)).status, sw::stability::stable);
  for (double& v : ns) v = 10.0 + (v - 10.0) * 1.3;  // 10.4% -> drifting
  EXPECT_EQ(sw::summarize_over_time(series(ns)).status, sw::stability::drifting);
  sw::time_stability_limits wide;
  wide.stable_spread = 0.25;
  EXPECT_EQ(sw::summarize_over_time(series(kFirecrackerPause), wide).status, sw::stability::stable);
}

// Guards against a verdict from too few samples, and against NaN from an unmeasurable sample.
TEST(WatchSummary, TooFewAndNonFinite) {
  EXPECT_EQ(sw::summarize_over_time(series({10, 20, 30, 40})).status, sw::stability::insufficient);
  const sw::relax_time_summary empty = sw::summarize_over_time({});
  EXPECT_EQ(empty.samples, 0u);
  EXPECT_EQ(empty.status, sw::stability::insufficient);
  std::vector<sw::relax_time_sample> s = series({10, 10, 10, 10, 10});
  s.push_back({3000, std::nan(""), 1});
  s.push_back({3500, INFINITY, 1});
  const sw::relax_time_summary r = sw::summarize_over_time(s);
  EXPECT_EQ(r.samples, 5u);
  EXPECT_EQ(r.status, sw::stability::stable);
  EXPECT_DOUBLE_EQ(r.ns_max, 10.0);
}

// What drift means, with InnoDB's defaults (6 x 50 relaxes, at most 250 a round, 30 rounds) at
// both ends of the range: guards against figures that do not follow from the range.
TEST(WatchMeaning, DriftingNamesTheSnapshotAndInnodbRange) {
  sw::relax_drift_observation o = drifting_pause(6.2, 7.8, 10.5, "over 7.0 s on 1 CPU(s)");
  const std::string m = sw::relax_drift_meaning(o);
  EXPECT_TRUE(has(m, "pause drifts on this host over 7.0 s on 1 CPU(s)")) << m;
  EXPECT_TRUE(has(m, "6.20 .. 10.50 ns per relax")) << m;
  EXPECT_TRUE(has(m, "a range of 55% of it")) << m;
  EXPECT_TRUE(has(m, "snapshot")) << m;
  EXPECT_TRUE(has(m, "keep their time")) << m;
  // 250 x 6.2 ns = 1.55 us, 250 x 10.5 ns = 2.625 us; x 30 = 46.5 .. 78.75 us.
  EXPECT_TRUE(has(m, "spin_wait_delay 6 x pause_multiplier 50 (at most 250 pause a round)")) << m;
  EXPECT_TRUE(has(m, "1.55 .. 2.62 us a round")) << m;
  EXPECT_TRUE(has(m, "46.5 .. 78.8 us over 30 rounds")) << m;

  o.status = sw::stability::stable;
  o.ns_min = 13.9;
  o.ns_median = 14.0;
  o.ns_max = 14.1;
  const std::string st = sw::relax_drift_meaning(o);
  EXPECT_TRUE(has(st, "pause is stable")) << st;
  EXPECT_TRUE(has(st, "profile's per-CPU table holds")) << st;
  EXPECT_FALSE(has(st, "snapshot")) << st;
  // 250 x 14.0 ns = 3.50 us a round, 105.0 us over 30 rounds: at the median, not the max.
  EXPECT_TRUE(has(st, "3.50 us a round, 105.0 us over 30 rounds at the median cost")) << st;

  o.status = sw::stability::insufficient;
  EXPECT_TRUE(has(sw::relax_drift_meaning(o), "too few samples"));

  o.kind = sw::relax_kind::none;  // loop overhead: nothing of InnoDB's to say
  o.status = sw::stability::drifting;
  EXPECT_FALSE(has(sw::relax_drift_meaning(o), "innodb"));
}

// The full run's drifting warning carries the same explanation (one wording source), over the
// range the drifting CPUs' rounds moved through. Guards against the two texts diverging.
TEST(WatchMeaning, FullRunDriftWarningExplains) {
  sw::calibration_result r;
  r.settings.rounds = 5;
  for (int cpu : {0, 1}) {
    sw::cpu_calibration c;
    c.cpu = cpu;
    c.core_clock_plausible = true;
    sw::relax_measurement m =
        pause_measurement(36, cpu == 0 ? sw::stability::drifting : sw::stability::stable);
    m.ns_median = 14.0;
    m.round_drift = cpu == 0 ? 0.2 : 0.01;
    m.round_ns_min = cpu == 0 ? 13.0 : 13.9;
    m.round_ns_max = cpu == 0 ? 16.0 : 14.1;
    c.relax.push_back(m);
    r.cpus.push_back(c);
  }
  sw::detail::add_calibration_warnings(r);
  const std::string expected =
      sw::relax_drift_meaning(drifting_pause(13.0, 14.0, 16.0, "between this run's 5 rounds"));
  int found = 0;
  for (const std::string& w : r.warnings) found += has(w, expected) ? 1 : 0;
  EXPECT_EQ(found, 1) << "warnings:\n"
                      << [&] {
                           std::string all;
                           for (const std::string& w : r.warnings) all += w + "\n";
                           return all;
                         }();

  // Nothing drifting: no explanation.
  r.warnings.clear();
  r.cpus[0].relax[0].ticks.status = sw::stability::stable;
  sw::detail::add_calibration_warnings(r);
  for (const std::string& w : r.warnings) EXPECT_FALSE(has(w, "snapshot")) << w;
}

// Guards against the empty-loop baseline alarming: `none` split into modes by a timer tick (it
// is a few instructions a step) while PAUSE is stable must warn of nothing and pass --strict.
TEST(Calibration, TheLoopBaselinesAreReportedNotJudged) {
  sw::calibration_result r;
  sw::cpu_calibration c;
  c.cpu = 0;
  c.core_clock_plausible = true;
  const sw::relax_measurement pause = pause_measurement(37, sw::stability::stable);
  c.relax.push_back(pause);
  for (sw::relax_kind k : {sw::relax_kind::none, sw::relax_kind::barrier}) {
    sw::relax_measurement m = pause;
    m.kind = k;
    m.ticks.median = 0.6;
    m.ticks.status = sw::stability::bimodal;
    m.ticks.low_mode = 0.5;
    m.ticks.high_mode = 1.2;
    m.ticks.high_share = 0.2;
    c.relax.push_back(m);
  }
  r.cpus.push_back(c);
  EXPECT_TRUE(r.all_stable());
  sw::detail::add_calibration_warnings(r);
  for (const std::string& w : r.warnings) ADD_FAILURE() << "a baseline warned: " << w;
  // PAUSE itself is still judged.
  r.cpus[0].relax[0].ticks.status = sw::stability::bimodal;
  EXPECT_FALSE(r.all_stable());
  sw::detail::add_calibration_warnings(r);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_TRUE(has(r.warnings[0], "pause")) << r.warnings[0];
}

// Guards against options that would run for ever, sample nothing twice, or divide by zero.
TEST(Watch, BadOptionsAreRefused) {
  sw::watch_options o;
  EXPECT_EQ(sw::check_watch_options(o), "");
  o.duration_s = 0;
  EXPECT_NE(sw::check_watch_options(o), "");
  o.duration_s = -1;
  EXPECT_NE(sw::check_watch_options(o), "");
  o.duration_s = std::nan("");
  EXPECT_NE(sw::check_watch_options(o), "");
  o.duration_s = 1;
  o.interval_ms = 0;
  EXPECT_NE(sw::check_watch_options(o), "");
  o.interval_ms = 1001;
  EXPECT_TRUE(has(sw::check_watch_options(o), "longer than the watch")) << sw::check_watch_options(o);
  o.interval_ms = 1000;
  EXPECT_EQ(sw::check_watch_options(o), "");
  o.duration_s = sw::kMaxWatchSeconds;
  o.interval_ms = 1;
  EXPECT_TRUE(has(sw::check_watch_options(o), "samples")) << sw::check_watch_options(o);
  o = {};
  o.cpus = {4095};
  EXPECT_TRUE(has(sw::check_watch_options(o), "cpu 4095")) << sw::check_watch_options(o);
  sw::watch_result r;
  std::string why;
  EXPECT_FALSE(sw::watch_relax_cost(o, r, &why));
  EXPECT_FALSE(why.empty());
}

// A short real watch in process: the tick count, sample times in order, positive finite costs,
// the caller's mask put back. Timing values are never asserted beyond > 0 and finite.
TEST(Watch, ShortRealWatch) {
  const std::vector<int> before = sw::runtime::allowed_cpus();
  sw::watch_options o;
  o.duration_s = 0.3;
  o.interval_ms = 100;
  int progress_calls = 0;
  o.progress = [&](const sw::watch_progress&) { ++progress_calls; };
  sw::watch_result r;
  std::string why;
  ASSERT_TRUE(sw::watch_relax_cost(o, r, &why)) << why;
  EXPECT_EQ(sw::runtime::allowed_cpus(), before) << "affinity not restored";
  EXPECT_EQ(progress_calls, 4);
  ASSERT_EQ(r.series.size(), before.size());
  ASSERT_EQ(r.conclusions.size(), 1u);
  EXPECT_EQ(r.conclusions[0].kind, sw::active_relax());
  EXPECT_FALSE(r.conclusions[0].meaning.empty());
  for (const sw::watch_series& s : r.series) {
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.kind, sw::active_relax());
    ASSERT_EQ(s.samples.size(), 4u) << "ticks at 0, 100, 200 and 300 ms";
    for (std::size_t i = 0; i < s.samples.size(); ++i) {
      EXPECT_TRUE(std::isfinite(s.samples[i].ns) && s.samples[i].ns > 0) << s.samples[i].ns;
      EXPECT_TRUE(std::isfinite(s.samples[i].ticks) && s.samples[i].ticks > 0);
      if (i > 0) {
        EXPECT_GT(s.samples[i].t_ms, s.samples[i - 1].t_ms);
      }
    }
    EXPECT_EQ(s.summary.samples, 4u);
    EXPECT_EQ(s.summary.status, sw::stability::insufficient) << "4 samples are fewer than 5";
  }
  EXPECT_GE(r.elapsed_s, 0.3);
}

#ifdef SPINWISE_CALIBRATE_TOOL
namespace {

// Runs the tool through the shell; stdout in `out`, the exit status returned.
int run_tool(const std::string& args, std::string& out) {
  out.clear();
  FILE* p = ::popen((std::string("'") + SPINWISE_CALIBRATE_TOOL + "' " + args + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool finite_positive(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}

}  // namespace

// The --watch document as an operator's script reads it: every key, its type, the counts.
// Guards against a schema that drifts from docs/calibration.md and calibration.hpp.
TEST(WatchCli, JsonDocumentSchema) {
  const int cpu = sw::runtime::allowed_cpus().front();
  std::string out;
  ASSERT_EQ(run_tool("--watch 0.3 --interval-ms 100 --cpus " + std::to_string(cpu) + " --format json", out),
            0)
      << out;
  const nlohmann::json d = nlohmann::json::parse(out);
  EXPECT_EQ(d.at("format"), "spinwise.calibrate.watch");
  EXPECT_EQ(d.at("version"), 1);
  EXPECT_TRUE(d.at("tool").is_string());
  EXPECT_TRUE(d.at("created").is_string());
  const nlohmann::json& m = d.at("machine");
  for (const char* k :
       {"arch", "cpu_vendor", "cpu_model", "cpu_id", "kernel", "virtualization", "container", "counter"}) {
    EXPECT_TRUE(m.at(k).is_string()) << k;
  }
  EXPECT_TRUE(m.at("cpu_count").is_number_integer());
  EXPECT_TRUE(m.at("counter_hz").is_number_integer());
  EXPECT_TRUE(m.at("counter_invariant").is_boolean());
  const nlohmann::json& st = d.at("settings");
  EXPECT_DOUBLE_EQ(st.at("duration_s").get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(st.at("interval_ms").get<double>(), 100.0);
  EXPECT_EQ(st.at("cpus"), nlohmann::json::array({cpu}));
  EXPECT_EQ(st.at("relax"), nlohmann::json::array({std::string(sw::to_string(sw::active_relax()))}));
  EXPECT_EQ(st.at("trials"), 15);
  for (const char* k : {"trial_ns", "warmup_ms", "stable_spread"}) EXPECT_TRUE(st.at(k).is_number()) << k;
  EXPECT_EQ(st.at("min_samples"), 5);
  EXPECT_TRUE(finite_positive(d.at("elapsed_s")));

  const nlohmann::json& cpus = d.at("cpus");
  ASSERT_TRUE(cpus.is_array());
  ASSERT_EQ(cpus.size(), 1u);
  const nlohmann::json& c = cpus[0];
  EXPECT_EQ(c.at("cpu"), cpu);
  EXPECT_EQ(c.at("relax"), std::string(sw::to_string(sw::active_relax())));
  EXPECT_TRUE(c.at("relaxes_per_trial").is_number_integer());
  EXPECT_FALSE(c.contains("error"));
  const nlohmann::json& samples = c.at("samples");
  ASSERT_EQ(samples.size(), 4u);
  double last_t = -1;
  for (const nlohmann::json& s : samples) {
    ASSERT_TRUE(s.is_array());
    ASSERT_EQ(s.size(), 2u) << "[t_ms, ns]";
    EXPECT_TRUE(s[0].is_number() && s[0].get<double>() >= 0 && s[0].get<double>() > last_t);
    last_t = s[0].get<double>();
    EXPECT_TRUE(finite_positive(s[1])) << s[1];
  }
  const nlohmann::json& sum = c.at("summary");
  EXPECT_EQ(sum.at("samples"), 4);
  for (const char* k : {"min", "p10", "median", "p90", "max"})
    EXPECT_TRUE(finite_positive(sum.at("ns").at(k))) << k;
  for (const char* k : {"min", "median", "max"}) EXPECT_TRUE(finite_positive(sum.at("ticks").at(k))) << k;
  EXPECT_TRUE(sum.at("spread").is_number());
  EXPECT_TRUE(sum.at("central_spread").is_number());
  sw::stability status{};
  EXPECT_TRUE(sw::parse_stability(sum.at("status").get<std::string>(), status));
  EXPECT_EQ(status, sw::stability::insufficient);

  const nlohmann::json& concl = d.at("conclusions");
  ASSERT_EQ(concl.size(), 1u);
  EXPECT_EQ(concl[0].at("relax"), c.at("relax"));
  EXPECT_TRUE(sw::parse_stability(concl[0].at("status").get<std::string>(), status));
  for (const char* k : {"ns_min", "ns_median", "ns_max"}) EXPECT_TRUE(finite_positive(concl[0].at(k))) << k;
  EXPECT_TRUE(concl[0].at("meaning").is_string());
}

// --plot draws the timeline: a non-empty PNG (and its data and script beside it). Skipped where
// gnuplot is not installed.
TEST(WatchCli, PlotWritesAPng) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  spinwise_test::temp_dir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string png = dir / "watch.png";
  std::string out;
  ASSERT_EQ(run_tool("--watch 0.2 --interval-ms 50 --plot '" + png + "'", out), 0) << out;
  ASSERT_TRUE(std::filesystem::exists(png)) << out;
  EXPECT_GT(std::filesystem::file_size(png), 0u);
  EXPECT_EQ(spinwise_test::read_file(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(std::filesystem::file_size(dir / "watch.dat"), 0u);
  EXPECT_GT(std::filesystem::file_size(dir / "watch.gp"), 0u);
  EXPECT_TRUE(has(out, "plot written to")) << out;
}
#endif  // SPINWISE_CALIBRATE_TOOL
