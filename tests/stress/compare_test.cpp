// spinwise-stress, repeats, their summaries, --compare's verdicts, the run plan and the session.

#include "stress_test_util.hpp"

using namespace stress_test;

// --- repeats, summaries and --compare -----------------------------------------------------------------
//
// Everything here runs on injected run results: the statistics, the run order and the outputs are
// checked against hand-worked answers, and no test asserts a timing.

namespace {

// A run as the engine would report it, with the figures a test chooses: nothing runs.
st::run_result injected(double rps, st::scenario sc = st::scenario::stats_lock) {
  st::workload_config c = small(sc);
  c.verify = false;
  st::run_result r;
  r.config = st::resolve(c);
  r.cpus = 2;
  r.window_s = 2;
  r.requests_per_s = rps;
  r.requests = static_cast<std::uint64_t>(rps * r.window_s);
  r.subqueries_per_s = rps * r.config.fanout;
  r.request_rt.p50_ns = 1e9 / rps;
  r.request_rt.p95_ns = 2e9 / rps;
  r.request_rt.p99_ns = 3e9 / rps;
  r.spin_cpu_share = 0.01;
  r.process_cpu_ns = 1e9;
  r.counted = true;
  r.parks_per_s = rps / 10;
  r.loop_iter_ns = 0.3;
  r.achieved_relax_ns = 20;
  return r;
}

std::vector<st::run_result> injected_runs(const std::vector<double>& rps) {
  std::vector<st::run_result> v;
  for (double x : rps) v.push_back(injected(x));
  return v;
}

// A run_fn that runs nothing: requests/s 100, 1.3x that at spin_wait_delay 30, times a factor of
// 0.98..1.02 from the seed (seeds 1..6 give 0.99, 1, 1.01, 1.02, 0.98, 0.99).
st::run_result fake_run(const st::workload_config& c) {
  const double delay_factor = c.lock.spin_wait_delay.value_or(6) == 30 ? 1.3 : 1.0;
  const double seed_factor = 1.0 + 0.01 * (static_cast<double>(c.seed % 5) - 2.0);
  st::run_result r = injected(100 * delay_factor * seed_factor);
  r.config = st::resolve(c);
  return r;
}

}  // namespace

// Guards against a summary that is not the median with its distribution-free interval: nine runs
// of 100..900 requests/s have median 500 and, as x(2)..x(8), the interval 200..800 with coverage
// 1 - 2 P(Binomial(9, 1/2) < 2) = 1 - 20/512; five runs have min..max (coverage 1 - 2/32); one
// run has no spread. A metric that applies to no run (parks/s of a lock without a policy, sub-
// queries/s at fan-out 1, insert waits outside hot-page) is left out, not reported as 0.
TEST(StressSummary, MedianIntervalAndCoverageOfInjectedRuns) {
  const st::setting_summary nine =
      st::summarize_runs(injected_runs({500, 300, 900, 100, 700, 200, 800, 400, 600}));
  EXPECT_EQ(nine.runs, 9u);
  const st::metric_summary* rps = nine.find("requests_per_s");
  ASSERT_NE(rps, nullptr);
  EXPECT_EQ(rps->ci.n, 9u);
  EXPECT_DOUBLE_EQ(rps->ci.median, 500);
  EXPECT_DOUBLE_EQ(rps->ci.min, 100);
  EXPECT_DOUBLE_EQ(rps->ci.max, 900);
  EXPECT_DOUBLE_EQ(rps->ci.lo, 200);
  EXPECT_DOUBLE_EQ(rps->ci.hi, 800);
  EXPECT_NEAR(rps->ci.coverage, 1.0 - 20.0 / 512.0, 1e-12);
  const st::metric_summary* p50 = nine.find("request_rt_p50_us");
  ASSERT_NE(p50, nullptr);
  EXPECT_DOUBLE_EQ(p50->ci.median, 1e6 / 500) << "RT p50 in us: 1e9 / 500 ns";
  EXPECT_DOUBLE_EQ(p50->ci.lo, 1e6 / 800);
  ASSERT_NE(nine.find("subqueries_per_s"), nullptr);
  EXPECT_DOUBLE_EQ(nine.find("subqueries_per_s")->ci.median, 500.0 * 24);
  ASSERT_NE(nine.find("spin_cpu_share"), nullptr);
  ASSERT_NE(nine.find("parks_per_s"), nullptr);
  EXPECT_EQ(nine.find("insert_waits_per_s"), nullptr) << "stats-lock has no inserts";

  const st::setting_summary five = st::summarize_runs(injected_runs({3, 1, 5, 2, 4}));
  const st::metric_summary* f = five.find("requests_per_s");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->ci.median, 3);
  EXPECT_DOUBLE_EQ(f->ci.lo, 1) << "below six runs the interval is min..max";
  EXPECT_DOUBLE_EQ(f->ci.hi, 5);
  EXPECT_NEAR(f->ci.coverage, 1.0 - 2.0 / 32.0, 1e-12);

  const st::setting_summary one = st::summarize_runs(injected_runs({42}));
  const st::metric_summary* o = one.find("requests_per_s");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->ci.n, 1u);
  EXPECT_DOUBLE_EQ(o->ci.lo, 42);
  EXPECT_DOUBLE_EQ(o->ci.hi, 42);

  std::vector<st::run_result> plain = injected_runs({1, 2, 3});
  for (st::run_result& r : plain) {
    r.counted = false;  // a std lock: no policy counts its parks
    r.config.fanout = 1;
  }
  const st::setting_summary s = st::summarize_runs(plain);
  EXPECT_EQ(s.find("parks_per_s"), nullptr);
  EXPECT_EQ(s.find("subqueries_per_s"), nullptr) << "fan-out 1: one sub-query per request";
  std::vector<st::run_result> hot = {injected(10, st::scenario::hot_page),
                                     injected(20, st::scenario::hot_page)};
  EXPECT_NE(st::summarize_runs(hot).find("insert_waits_per_s"), nullptr);

  // Every summarized metric is a per-run CSV column of the same name.
  const std::vector<std::string> cols = st::csv_columns();
  for (const st::summary_metric& m : st::summary_metrics()) {
    EXPECT_NE(std::find(cols.begin(), cols.end(), m.name), cols.end()) << m.name;
  }
  EXPECT_NE(st::format_summary(nine, "A:").find("500.0 [200.0-800.0]"), std::string::npos)
      << st::format_summary(nine, "A:");
}

// Guards against a --compare that calls noise a difference, or misses one: samples that differ by
// 30% beyond their spread are "higher" (and their RT "lower"), samples that overlap are "within
// noise", and a side without a ratio or with one run says why instead of judging.
TEST(StressCompare, VerdictOnInjectedSamples) {
  const std::vector<double> a = {100, 102, 98, 101, 99, 100};
  const auto ratio_of = [&](const std::vector<double>& b, const char* metric) {
    const std::vector<st::setting_ratio> r = st::compare_settings({injected_runs(a), injected_runs(b)});
    EXPECT_EQ(r.size(), 1u);
    for (const st::metric_ratio& m : r.at(0).metrics) {
      if (std::string(m.metric->name) == metric) return m;
    }
    ADD_FAILURE() << "no ratio of " << metric;
    return st::metric_ratio{};
  };
  const st::metric_ratio up = ratio_of({130, 133, 128, 131, 129, 130}, "requests_per_s");
  EXPECT_EQ(up.ratio.verdict, spinwise::runtime::difference::higher);
  EXPECT_NEAR(up.ratio.ratio, 1.30, 1e-9);
  EXPECT_GT(up.ratio.lo, 1.0);
  EXPECT_GE(up.ratio.hi, up.ratio.ratio);
  const std::string line = st::ratio_line(up, "B", "A");
  EXPECT_EQ(line.rfind("B/A requests/s 1.30x [", 0), 0u) << line;
  EXPECT_NE(line.find("]: higher, beyond noise"), std::string::npos) << line;
  EXPECT_EQ(ratio_of({130, 133, 128, 131, 129, 130}, "request_rt_p50_us").ratio.verdict,
            spinwise::runtime::difference::lower)
      << "RT is 1/rate here: it falls";

  const st::metric_ratio same = ratio_of({101, 99, 100, 102, 98, 100}, "requests_per_s");
  EXPECT_EQ(same.ratio.verdict, spinwise::runtime::difference::within_noise);
  EXPECT_NE(st::ratio_line(same, "B", "A").find(": within noise"), std::string::npos);

  EXPECT_EQ(ratio_of({70, 71, 69, 70, 72, 68}, "requests_per_s").ratio.verdict,
            spinwise::runtime::difference::lower);

  // Four runs a side whose ranges overlap: within noise, whatever the bootstrap says.
  const std::vector<st::setting_ratio> overlap =
      st::compare_settings({injected_runs({100, 110, 105, 104}), injected_runs({108, 115, 120, 117})});
  EXPECT_EQ(overlap.at(0).metrics.at(0).ratio.verdict, spinwise::runtime::difference::within_noise);
  // Two runs a side, 30% apart with disjoint ranges (an A/A comparison at --repeat 2 did
  // this to a third of its metrics): the ratio without an interval, and no verdict.
  const st::metric_ratio few =
      st::compare_settings({injected_runs({100, 102}), injected_runs({130, 133})}).at(0).metrics.at(0);
  EXPECT_EQ(few.ratio.verdict, spinwise::runtime::difference::insufficient);
  EXPECT_EQ(st::ratio_line(few, "B", "A"),
            std::string("B/A ") + few.metric->label +
                " 1.30x: too few runs to judge (2 and 2 runs; a verdict needs 4 a side: --repeat 4)");

  // A baseline whose median is 0 has no ratio; one run a side has no verdict.
  std::vector<st::run_result> zero = injected_runs({100, 101, 102});
  for (st::run_result& r : zero) r.spin_cpu_share = 0;
  const std::vector<st::setting_ratio> from_zero =
      st::compare_settings({zero, injected_runs({100, 101, 102})});
  for (const st::metric_ratio& m : from_zero.at(0).metrics) {
    if (std::string(m.metric->name) == "spin_cpu_share") {
      EXPECT_EQ(st::verdict_text(m), "no ratio: the baseline's median is 0");
    }
  }
  const st::metric_ratio single =
      st::compare_settings({injected_runs({100}), injected_runs({200})}).at(0).metrics.at(0);
  EXPECT_EQ(st::ratio_line(single, "B", "A"),
            std::string("B/A ") + single.metric->label +
                ": too few runs to judge (1 and 1 runs; a verdict needs 4 a side: --repeat 4)");
}

// Guards against settings run back to back (A A A B B B: a machine that drifts over the session
// becomes a difference between them) and against repeats that reuse a seed: round-robin runs
// every setting once per round, a shuffled order permutes each round after the first from its
// seed, and every run's seed is its setting's seed + its repeat.
TEST(StressPlan, RunsAreInterleavedAndSeeded) {
  std::vector<st::setting> settings(3);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    settings[i].label = std::string(1, static_cast<char>('A' + i));
    settings[i].config.seed = 10 * (i + 1);
  }
  const std::vector<st::planned_run> rr = st::plan_runs(settings, {4, 0});
  ASSERT_EQ(rr.size(), 12u);
  for (std::size_t k = 0; k < rr.size(); ++k) {
    EXPECT_EQ(rr[k].setting, k % 3) << "run " << k;
    EXPECT_EQ(rr[k].repeat, k / 3) << "run " << k;
    EXPECT_EQ(rr[k].config.seed, 10 * (k % 3 + 1) + k / 3) << "run " << k;
  }
  EXPECT_EQ(st::order_text(rr, settings), "A B C A B C A B C A B C");

  const std::vector<st::planned_run> sh = st::plan_runs(settings, {4, 7});
  const std::vector<std::size_t> expected = spinwise::runtime::interleaved_order(3, 4, 7);
  ASSERT_EQ(sh.size(), expected.size());
  bool shuffled = false;
  std::vector<unsigned> seen(3, 0);
  for (std::size_t k = 0; k < sh.size(); ++k) {
    EXPECT_EQ(sh[k].setting, expected[k]);
    EXPECT_EQ(sh[k].repeat, seen[sh[k].setting]++) << "repeats count up per setting";
    EXPECT_EQ(sh[k].config.seed, settings[sh[k].setting].config.seed + sh[k].repeat);
    if (k < 3) {
      EXPECT_EQ(sh[k].setting, k) << "round 0 keeps the settings' order";
    }
    shuffled |= sh[k].setting != k % 3;
  }
  for (std::size_t r = 0; r < 4; ++r) {
    std::set<std::size_t> round;
    for (std::size_t k = 3 * r; k < 3 * r + 3; ++k) round.insert(sh[k].setting);
    EXPECT_EQ(round.size(), 3u) << "round " << r << " runs every setting once";
  }
  EXPECT_TRUE(shuffled) << "--order-seed 7 left every round in order";

  // The runs happen in the plan's order and carry their setting and repeat.
  std::vector<std::uint64_t> called;
  const std::vector<st::run_result> runs = st::run_planned(sh, [&](const st::workload_config& c) {
    called.push_back(c.seed);
    return st::run_result{};
  });
  ASSERT_EQ(runs.size(), sh.size());
  for (std::size_t k = 0; k < sh.size(); ++k) {
    EXPECT_EQ(called[k], sh[k].config.seed);
    EXPECT_EQ(runs[k].setting, sh[k].setting);
    EXPECT_EQ(runs[k].repeat, sh[k].repeat);
  }
  const auto by = st::runs_by_setting(runs, 3);
  for (const auto& g : by) EXPECT_EQ(g.size(), 4u);

  // A sweep runs every point once before any point a second time.
  st::sweep_options so;
  so.repeat = 2;
  const std::vector<st::setting> pts = st::sweep_settings(st::workload_config{}, so);
  ASSERT_EQ(pts.size(), 33u);
  const std::vector<st::planned_run> sp = st::plan_runs(pts, {so.repeat, so.order_seed});
  std::set<std::size_t> first_round;
  for (std::size_t k = 0; k < pts.size(); ++k) first_round.insert(sp[k].setting);
  EXPECT_EQ(first_round.size(), pts.size());
  std::set<std::string> labels;
  for (const st::setting& p : pts) labels.insert(p.label);
  EXPECT_EQ(labels.size(), pts.size()) << "sweep labels must tell points apart";

  // From the command line: --compare's default of 5 runs, the order --dry-run prints.
  st::parse_outcome p = parse({"--compare", "--seed 1", "--seed 5", "--repeat", "3"});
  ASSERT_TRUE(p.run) << p.message;
  st::session s = st::plan_session(p.options);
  EXPECT_EQ(st::order_text(s.plan, s.settings), "A B A B A B");
  EXPECT_NE(st::plan_text(s.plan, s.settings, s.order).find("order: A B A B A B\n"), std::string::npos);
  EXPECT_EQ(s.plan[3].config.seed, 6u) << "B's seed 5 + repeat 1";
  p = parse({"--compare", "--seed 1", "--seed 5"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.repeat, 5u) << "--compare runs each setting 5 times unless told";
  EXPECT_EQ(st::plan_session(p.options).plan.size(), 10u);
  p = parse({});
  ASSERT_TRUE(p.run);
  EXPECT_EQ(p.options.repeat, 1u);
  p = parse({"--repeat", "4", "--order-seed", "9"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(st::plan_session(p.options).plan.size(), 4u);
  p = parse({"--sweep", "--repeat", "2", "--order-seed", "9"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.sweep_opts.repeat, 2u);
  EXPECT_EQ(p.options.sweep_opts.order_seed, 9u);
}

// Guards against --compare settings parsed apart from the base flags or by another parser: each
// setting's flags land on the base configuration, override it where both give a flag, and the
// empty setting is the base itself.
TEST(StressCli, CompareSettingsParseOntoTheBase) {
  const st::parse_outcome p =
      parse({"--cpu-model", "skylake", "--duration", "2", "--spin-wait-delay", "6", "--compare", "",
             "--spin-wait-delay 30", "--policy time --cpu-model broadwell", "--repeat", "4", "--json", "-"});
  ASSERT_TRUE(p.run) << p.message;
  const std::vector<st::setting>& c = p.options.compare;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].label, "A");
  EXPECT_EQ(c[1].label, "B");
  EXPECT_EQ(c[2].label, "C");
  EXPECT_EQ(c[0].args, "");
  EXPECT_EQ(c[1].args, "--spin-wait-delay 30");
  EXPECT_EQ(*c[0].config.lock.spin_wait_delay, 6u);
  EXPECT_EQ(c[0].config.cpu, st::cpu_model::skylake);
  EXPECT_EQ(*c[1].config.lock.spin_wait_delay, 30u) << "the setting's flag wins over the base's";
  EXPECT_EQ(c[1].config.cpu, st::cpu_model::skylake);
  EXPECT_EQ(*c[2].config.lock.policy, st::policy_kind::time);
  EXPECT_EQ(c[2].config.cpu, st::cpu_model::broadwell);
  for (const st::setting& s : c) EXPECT_DOUBLE_EQ(s.config.duration_s, 2.0);
  EXPECT_EQ(p.options.repeat, 4u);
  EXPECT_EQ(p.options.json_path, "-");
  // --compare=TEXT, and settings whose values are quoted
  const st::parse_outcome q = parse({"--compare=--seed 3", "--seed '4'"});
  ASSERT_TRUE(q.run) << q.message;
  ASSERT_EQ(q.options.compare.size(), 2u);
  EXPECT_EQ(q.options.compare[0].config.seed, 3u);
  EXPECT_EQ(q.options.compare[1].config.seed, 4u);
}

// Guards against a --compare that runs anyway on bad input, or fails without saying where: exit 2
// and a message that names the setting and the flag.
TEST(StressCli, CompareBadInputIsRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--compare", "--spin-wait-delay 6", "--bogus 3"}, "--compare setting B (\"--bogus 3\")"},
      {{"--compare", "--spin-wait-delay 6", "--bogus 3"}, "bogus"},
      {{"--compare", "--spin-wait-delay 6"}, "--compare takes 2 to 26 settings"},
      {{"--compare"}, "--compare takes 2 to 26 settings"},
      {{"--sweep", "--compare", "--seed 1", "--seed 2"}, "--compare and --sweep do not go together"},
      {{"--compare", "--seed 1", "--json x.json"}, "--json is not a setting's flag"},
      {{"--compare", "--repeat 3", "--seed 2"}, "--repeat is not a setting's flag"},
      {{"--compare", "--seed 1", "--spin-wait-delay 5000"}, "setting B"},
      {{"--compare", "--seed 1", "--spin-wait-delay 5000"}, "spin_wait_delay must be in 0..1000"},
      {{"--compare", "--seed 1", "--lock std::mutex --spin-loops 3"},
       "--spin-loops applies to spinwise locks"},
      {{"--compare", "--seed '1", "--seed 2"}, "unbalanced quote"},
  };
  for (const auto& [args, needle] : cases) {
    std::string joined;
    for (const std::string& a : args) joined += "[" + a + "] ";
    const st::parse_outcome p = parse(args);
    EXPECT_FALSE(p.run) << joined;
    EXPECT_EQ(p.exit_code, 2) << joined;
    EXPECT_EQ(p.message.rfind("spinwise-stress: error: ", 0), 0u) << joined << ": " << p.message;
    EXPECT_NE(p.message.find(needle), std::string::npos) << joined << ": " << p.message;
  }
}

// Guards against JSON and CSV that lose the summary or the comparison, or carry numbers that do not
// hang together: a --compare session of injected runs (B 1.3x A) writes version 3 with a summary
// per setting (n, median, min, max, lo, hi, coverage; min <= lo <= median <= hi <= max), the run
// order, each run's setting, the ratios with their verdicts, and a CSV whose rows carry their
// setting's summary columns.
TEST(StressSession, JsonAndCsvOfAnInjectedCompare) {
  const st::parse_outcome p =
      parse({"--compare", "--spin-wait-delay 6", "--spin-wait-delay 30", "--repeat", "6", "--quiet"});
  ASSERT_TRUE(p.run) << p.message;
  st::session s = st::plan_session(p.options);
  std::ostringstream human;
  st::run_session(s, p.options, fake_run, human);
  ASSERT_EQ(s.runs.size(), 12u);
  const std::string text = human.str();
  EXPECT_NE(text.find("B/A requests/s 1.30x ["), std::string::npos) << text;
  EXPECT_NE(text.find("higher, beyond noise"), std::string::npos) << text;
  EXPECT_NE(text.find("A: --spin-wait-delay 6"), std::string::npos) << text;

  const nlohmann::json doc = st::session_document(s);
  EXPECT_EQ(doc.at("format"), "spinwise.stress");
  EXPECT_EQ(doc.at("version"), 3);
  ASSERT_EQ(doc.at("runs").size(), 12u);
  const nlohmann::json& order = doc.at("order");
  EXPECT_EQ(order.at("interleaving"), "round-robin");
  for (std::size_t k = 0; k < 12; ++k) {
    EXPECT_EQ(order.at("settings")[k], k % 2);
    EXPECT_EQ(doc.at("runs")[k].at("config").at("setting"), k % 2);
  }
  ASSERT_EQ(doc.at("settings").size(), 2u);
  for (const nlohmann::json& st_j : doc.at("settings")) {
    EXPECT_TRUE(st_j.contains("label") && st_j.contains("args"));
    EXPECT_EQ(st_j.at("runs"), 6);
    const nlohmann::json& sum = st_j.at("summary");
    for (const char* metric : {"requests_per_s", "subqueries_per_s", "request_rt_p50_us", "request_rt_p95_us",
                               "request_rt_p99_us", "spin_cpu_share", "parks_per_s"}) {
      ASSERT_TRUE(sum.contains(metric)) << metric;
      const nlohmann::json& m = sum.at(metric);
      for (const char* k : {"n", "median", "min", "max", "lo", "hi", "coverage"}) {
        EXPECT_TRUE(m.at(k).is_number()) << metric << "." << k;
      }
      EXPECT_EQ(m.at("n"), 6);
      const double lo = m.at("lo"), med = m.at("median"), hi = m.at("hi"), mn = m.at("min"), mx = m.at("max");
      EXPECT_LE(mn, lo) << metric;
      EXPECT_LE(lo, med) << metric;
      EXPECT_LE(med, hi) << metric;
      EXPECT_LE(hi, mx) << metric;
      EXPECT_NEAR(m.at("coverage").get<double>(), 1.0 - 2.0 / 64.0, 1e-12) << "six runs: x(1)..x(6)";
    }
  }
  EXPECT_DOUBLE_EQ(doc.at("settings")[0].at("summary").at("requests_per_s").at("median").get<double>(), 99.5);
  const nlohmann::json& cmp = doc.at("compare");
  EXPECT_EQ(cmp.at("baseline"), "A");
  ASSERT_EQ(cmp.at("ratios").size(), 1u);
  EXPECT_EQ(cmp.at("ratios")[0].at("of"), "B/A");
  const nlohmann::json& rr = cmp.at("ratios")[0].at("metrics").at("requests_per_s");
  EXPECT_NEAR(rr.at("ratio").get<double>(), 1.3, 1e-9);
  EXPECT_GT(rr.at("lo").get<double>(), 1.0);
  EXPECT_EQ(rr.at("difference"), "higher");
  EXPECT_EQ(rr.at("verdict"), "higher, beyond noise");
  EXPECT_EQ(nlohmann::json::parse(doc.dump(2)), doc);

  // CSV: the per-run columns, then the summary's; every row as wide as the header; a setting's
  // rows carry the same summary.
  const std::string csv = st::session_csv(s);
  std::istringstream in(csv);
  std::string header_line;
  std::getline(in, header_line);
  std::vector<std::string> header;
  {
    std::stringstream hs(header_line);
    for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  }
  EXPECT_EQ(std::set<std::string>(header.begin(), header.end()).size(), header.size()) << "duplicate column";
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  for (const st::summary_metric& m : st::summary_metrics()) {
    for (const char* part : {"_median", "_min", "_max", "_lo", "_hi"}) col(std::string(m.name) + part);
  }
  const std::size_t c_setting = col("setting"), c_runs = col("summary_runs");
  std::map<std::string, std::string> summary_of_setting;
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) f.push_back(c);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    ASSERT_EQ(f.size(), header.size()) << line;
    EXPECT_EQ(f[c_runs], "6");
    const double mn = std::stod(f[col("requests_per_s_min")]), lo = std::stod(f[col("requests_per_s_lo")]),
                 med = std::stod(f[col("requests_per_s_median")]),
                 hi = std::stod(f[col("requests_per_s_hi")]), mx = std::stod(f[col("requests_per_s_max")]);
    EXPECT_LE(mn, lo);
    EXPECT_LE(lo, med);
    EXPECT_LE(med, hi);
    EXPECT_LE(hi, mx);
    std::string cells;
    for (std::size_t k = c_runs; k < f.size(); ++k) cells += f[k] + ",";
    const auto [it, fresh] = summary_of_setting.emplace(f[c_setting], cells);
    if (!fresh) {
      EXPECT_EQ(it->second, cells) << "setting " << f[c_setting] << "'s rows disagree on its summary";
    }
  }
  EXPECT_EQ(rows, 12u);
  EXPECT_EQ(summary_of_setting.size(), 2u);
}

// Guards against --min-requests that does not lengthen a short window, or lengthens it past
// --max-duration: a window that cannot reach its requests ends at the cap, and one that can has
// them. (A run ends no earlier than the cap: that is sleep_until, not a timing of the workload.)
TEST(StressWorkload, MinRequestsLengthensAShortWindowUpToTheCap) {
  st::workload_config c = small();
  c.duration_s = 0.2;
  c.warmup_s = 0.05;
  c.min_requests = 1'000'000'000;
  c.max_duration_s = 0.4;
  st::run_result r = st::run_workload(c);
  expect_sound(r);
  EXPECT_DOUBLE_EQ(r.config.max_duration_s, 0.4);
  EXPECT_GE(r.total_s, 0.4) << "the window stopped before the cap with its requests unmet";
  EXPECT_LT(r.requests, c.min_requests);

  c.min_requests = 50;
  c.max_duration_s = 20;
  r = st::run_workload(c);
  expect_sound(r);
  EXPECT_TRUE(r.requests >= 50 || r.total_s >= 20) << r.requests << " requests in " << r.total_s << " s";
}

// Guards against a work loop calibrated anew for every run (a run's work would depend on the
// machine's state at its start) or never restored: --calibrate-ms M measures once and is reused,
// 0 brings back the process's first calibration, and runs report the figure they used.
TEST(StressRelaxer, LongLoopCalibrationIsReusedAndZeroRestoresTheFirst) {
  const double first = st::use_loop_calibration(0);
  EXPECT_GT(first, 0.0);
  EXPECT_DOUBLE_EQ(st::calibration().loop_iter_ns, first);
  const double long_ns = st::use_loop_calibration(5);
  EXPECT_GT(long_ns, 0.0);
  EXPECT_TRUE(std::isfinite(long_ns));
  EXPECT_DOUBLE_EQ(st::calibration().loop_iter_ns, long_ns);
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(5), long_ns) << "measured again instead of reused";
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(0), first);

  st::workload_config c = small();
  c.calibrate_ms = 5;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  EXPECT_DOUBLE_EQ(r.loop_iter_ns, long_ns) << "the run did not use the long calibration";
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(0), first);
}
