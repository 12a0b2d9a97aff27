// spinwise-stress, the command line (parsed in-process) and the outputs: the JSON, the CSV, the
// report and the sweep's plot script.

#include "stress_test_util.hpp"

using namespace stress_test;

// --- the command line ----------------------------------------------------------------------------

TEST(StressCli, DefaultsAndFlagsReachTheConfig) {
  st::parse_outcome p = parse({});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.sc, st::scenario::stats_lock);
  EXPECT_EQ(p.options.workload.fanout, 256u);
  p = parse({"--scenario",
             "hot-page",
             "--lock",
             "hybrid_shared_mutex",
             "--policy",
             "time",
             "--delay-unit-ns",
             "150",
             "--spin-wait-delay",
             "9",
             "--spin-loops",
             "12",
             "--cpu-model",
             "broadwell",
             "--threads",
             "7",
             "--clients",
             "5",
             "--fanout",
             "3",
             "--duration",
             "2.5",
             "--seed",
             "42",
             "--json",
             "-"});
  ASSERT_TRUE(p.run) << p.message;
  const st::workload_config& w = p.options.workload;
  EXPECT_EQ(w.sc, st::scenario::hot_page);
  EXPECT_EQ(w.lock.lock, "hybrid_shared_mutex");
  EXPECT_EQ(*w.lock.policy, st::policy_kind::time);
  EXPECT_EQ(*w.lock.delay_unit_ns, 150u);
  EXPECT_EQ(*w.lock.spin_wait_delay, 9u);
  EXPECT_EQ(*w.lock.spin_loops, 12u);
  EXPECT_EQ(w.cpu, st::cpu_model::broadwell);
  EXPECT_EQ(w.threads, 7u);
  EXPECT_EQ(w.clients, 5u);
  EXPECT_EQ(w.fanout, 3u);
  EXPECT_DOUBLE_EQ(w.duration_s, 2.5);
  EXPECT_EQ(w.seed, 42u);
  EXPECT_EQ(p.options.json_path, "-");
  p = parse({"--relax-ns", "33.5"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.cpu, st::cpu_model::custom);
  EXPECT_DOUBLE_EQ(p.options.workload.relax_ns, 33.5);
  EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 1.0) << "no drift unless asked";
  for (const char* m : {"native", "broadwell", "skylake"}) {
    p = parse({"--cpu-model", m, "--relax-drift", "2.5"});
    ASSERT_TRUE(p.run) << p.message;
    EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 2.5) << m;
  }
  p = parse({"--relax-ns", "20", "--relax-drift", "1"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 1.0);
  p = parse({"--help"});
  EXPECT_FALSE(p.run);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.message.find("--pause-multiplier"), std::string::npos);
  EXPECT_NE(p.message.find("--version"), std::string::npos);
}

// Guards against a --version that runs the workload, or names another version than the library's.
TEST(StressCli, VersionNamesTheLibraryVersion) {
  const st::parse_outcome p = parse({"--version"});
  EXPECT_FALSE(p.run);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.message, "spinwise-stress " + std::string(spinwise::kVersion) + "\n");
}

// Every flag is kebab-case: lower-case words joined by '-', as in spinwise's other tools.
TEST(StressCli, EveryFlagIsKebabCase) {
  const std::string help = parse({"--help"}).message;
  std::size_t flags = 0;
  for (std::size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    std::size_t end = at + 2;
    while (end < help.size() &&
           (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-' || help[end] == '_')) {
      ++end;
    }
    const std::string flag = help.substr(at, end - at);
    if (flag == "--") continue;
    ++flags;
    for (std::size_t i = 2; i < flag.size(); ++i) {
      const char c = flag[i];
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && flag[i - 1] != '-'))
          << flag << " is not kebab-case";
    }
  }
  EXPECT_GE(flags, 30u) << "the help lists fewer flags than the tool has";
}

// Guards against a bad flag that runs anyway, or fails without saying what was wrong.
TEST(StressCli, BadFlagsAreRefusedWithTheirName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bogus"}, "bogus"},
      {{"--relax-drift", "0.5"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "0"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "101"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "nan"}, "--relax-drift"},
      {{"--relax-drift", "abc"}, "--relax-drift"},
      {{"--relax-drift"}, "--relax-drift"},
      {{"--spin_wait_delay", "6"}, "spin_wait_delay"},  // flags are kebab-case only
      {{"--scenario", "incident"}, "--scenario"},
      {{"--lock", "futex"}, "unknown lock"},
      {{"--policy", "adaptiv"}, "--policy"},
      {{"--policy", "adaptive", "--spin-loops", "3"},
       "--spin-loops applies to the policies with a fixed budget"},
      {{"--policy", "adaptive", "--spin-wait-delay", "3"}, "--spin-wait-delay applies to"},
      {{"--cpu-model", "zen4"}, "--cpu-model"},
      {{"--cpu-model", "skylake", "--relax-ns", "10"}, "excludes"},
      {{"--relax-ns", "0"}, "--relax-ns"},
      {{"--relax-ns", "-3"}, "--relax-ns"},
      {{"--spin-wait-delay", "1001"}, "spin_wait_delay must be in 0..1000"},
      {{"--policy", "innodb", "--pause-multiplier", "101"}, "pause_multiplier must be in 1..100"},
      {{"--spin-loops", "2000000"}, "spin_loops must be in"},
      {{"--policy", "time", "--delay-unit-ns", "0"}, "delay_unit_ns must be in"},
      {{"--policy", "innodb", "--delay-unit-ns", "100"}, "--delay-unit-ns belongs to --policy time"},
      {{"--policy", "time", "--pause-multiplier", "5"}, "--pause-multiplier applies to the innodb policy"},
      {{"--lock", "std::mutex", "--spin-loops", "3"}, "--spin-loops applies to spinwise locks"},
      {{"--lock", "std::mutex", "--policy", "innodb"}, "no wait policy"},
      {{"--lock", "ticket_mutex", "--spin-wait-delay", "4"}, "--spin-wait-delay applies to"},
      {{"--threads", "0"}, "--threads"},
      {{"--threads", "x"}, "threads"},
      {{"--clients", "0"}, "--clients"},
      {{"--fanout", "0"}, "--fanout"},
      {{"--duration", "-1"}, "--duration"},
      {{"--duration", "1", "--warmup", "2"}, "--warmup"},
      {{"--cs-ns", "-5"}, "--cs-ns"},
      {{"--pages", "0"}, "--pages"},
      {{"--inserts", "0", "--updates", "0", "--selects", "0"}, "not all 0"},
      {{"--sample-ms", "0"}, "--sample-ms"},
      {{"--png", "a.png"}, "--png needs --sweep"},
      {{"--repeat", "101"}, "--repeat must be in 1..100"},
      {{"--repeat", "0"}, "--repeat must be in 1..100"},
      {{"--order-seed", "x"}, "--order-seed"},
      {{"--min-requests", "x"}, "--min-requests"},
      {{"--duration", "2", "--max-duration", "1"}, "--max-duration must be in"},
      {{"--calibrate-ms", "-1"}, "--calibrate-ms must be in"},
      {{"--sweep", "--cpu-model", "skylake"}, "is set by --sweep"},
      {{"--sweep", "--sweep-delays", "1,x"}, "--sweep-delays"},
      {{"--sweep", "--sweep-delays", "2000"}, "--sweep-delays"},
      {{"--sweep", "--sweep-cpus", "skylake,zen"}, "--sweep-cpus"},
      {{"--sweep", "--sweep-cpus", "20xs"}, "--sweep-cpus takes broadwell, skylake, native or <n>ns"},
      {{"--sweep", "--sweep-cpus", "0ns"}, "--sweep-cpus takes"},
      {{"--sweep", "--sweep-cpus", "20ns5"}, "--sweep-cpus takes"},
      {{"--sweep", "--lock", "std::mutex"}, "--sweep needs a spinwise lock"},
      {{"--sweep", "--repeat", "0"}, "--repeat"},
  };
  for (const auto& [args, needle] : cases) {
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    const st::parse_outcome p = parse(args);
    EXPECT_FALSE(p.run) << joined;
    EXPECT_EQ(p.exit_code, 2) << joined;
    EXPECT_NE(p.message.find("error"), std::string::npos) << joined << ": " << p.message;
    EXPECT_NE(p.message.find(needle), std::string::npos) << joined << ": " << p.message;
  }
}

// Guards against a refused knob that changed the stress locks' settings anyway.
// The sweep's CPUs may be relax lengths; the adaptive policy runs without a knob.
TEST(StressCli, SweepCpusTakeRelaxLengths) {
  const st::parse_outcome p = parse({"--sweep", "--sweep-cpus", "native,2ns,100ns"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.sweep_opts.cpus, std::vector<st::cpu_model>{st::cpu_model::native});
  EXPECT_EQ(p.options.sweep_opts.relax_ns, (std::vector<double>{2, 100}));
  EXPECT_TRUE(parse({"--policy", "adaptive"}).run);
}

TEST(StressCli, ARefusedKnobChangesNothing) {
  ASSERT_TRUE(parse({"--policy", "innodb", "--spin-wait-delay", "7", "--pause-multiplier", "9"}).run);
  const auto before = st::effective_knobs(st::policy_kind::innodb);
  EXPECT_FALSE(parse({"--policy", "innodb", "--spin-wait-delay", "8", "--pause-multiplier", "0"}).run);
  EXPECT_EQ(st::effective_knobs(st::policy_kind::innodb), before);
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[0].second, 7u);
  EXPECT_EQ(before[1].second, 9u);
}

// --- outputs ---------------------------------------------------------------------------------------

// Guards against JSON and CSV drifting from what the README and the plot read.
TEST(StressReport, JsonAndCsvCarryEveryMetric) {
  st::workload_config c = small();
  c.cpu = st::cpu_model::skylake;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  const nlohmann::json doc = st::make_document({r}, {{"note", "x"}});
  EXPECT_EQ(doc.at("format"), "spinwise.stress");
  EXPECT_FALSE(doc.contains("schema")) << "the envelope key is format, as in spinwise's other tools";
  EXPECT_EQ(doc.at("version"), 3);
  EXPECT_EQ(doc.at("note"), "x");
  EXPECT_FALSE(doc.contains("machine")) << "version 3 names the machine in the run context";
  for (const char* k : {"cpu_model", "cpu_id", "cpus_online", "cpus_allowed", "kernel", "compiler", "arch",
                        "relax", "relax_ns", "date", "load_average"}) {
    EXPECT_TRUE(doc.at("run").contains(k)) << k;
  }
  EXPECT_GT(doc.at("run").at("relax_ns").get<double>(), 0) << "the cost the locks convert delays with";
  ASSERT_EQ(doc.at("runs").size(), 1u);
  const nlohmann::json& j = doc.at("runs")[0];
  EXPECT_EQ(j.at("config").at("scenario"), "stats-lock");
  EXPECT_EQ(j.at("config").at("lock"), "hybrid_mutex");
  // the lock's default policy, whichever the catalog makes it (the library's default)
  EXPECT_EQ(j.at("config").at("policy"), std::string(st::to_string(st::resolve_policy(r.config.lock))));
  EXPECT_EQ(j.at("config").at("cpu_model"), "skylake");
  EXPECT_EQ(j.at("config").at("knobs").at("spin_wait_delay"), 6);
  EXPECT_EQ(j.at("throughput").at("requests"), r.requests);
  for (const char* lat : {"request_rt", "subquery_rt"}) {
    for (const char* k : {"count", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p999_ns", "max_ns"}) {
      EXPECT_TRUE(j.at(lat).at(k).is_number()) << lat << "." << k;
    }
  }
  EXPECT_TRUE(j.at("lock").at("hold").at("p99_ns").is_number());
  EXPECT_TRUE(j.at("spin").at("cpu_share").is_number());
  EXPECT_TRUE(j.at("waits").at("parks_per_s").is_number());
  EXPECT_TRUE(j.at("context_switches").at("voluntary").is_number());
  EXPECT_TRUE(j.at("context_switches").at("involuntary").is_number());
  EXPECT_TRUE(j.at("running_threads").at("series").is_array());
  EXPECT_TRUE(j.at("emulation").at("achieved_relax_ns").is_number());
  EXPECT_EQ(j.at("accounting").at("double_executed"), 0);
  // Round trip: what we write parses back to the same document.
  EXPECT_EQ(nlohmann::json::parse(doc.dump(2)), doc);

  const std::vector<std::string> cols = st::csv_columns();
  EXPECT_EQ(std::set<std::string>(cols.begin(), cols.end()).size(), cols.size()) << "duplicate CSV column";
  const std::string row = st::csv_row(r);
  EXPECT_EQ(static_cast<std::size_t>(std::count(row.begin(), row.end(), ',')) + 1, cols.size());
  EXPECT_EQ(row.find('\n'), std::string::npos);
  EXPECT_EQ(st::csv_header().substr(0, 9), "scenario,");
  EXPECT_EQ(row.substr(0, 11), "stats-lock,");
  EXPECT_NE(st::format_run(r).find("requests/s"), std::string::npos);
}

namespace {

// A run through the command line whose waiters delay: four workers with nothing to do outside a
// 20 us critical section. A run in which no round delayed is run again, longer, twice at most.
st::run_result contended_run(std::vector<std::string> flags) {
  const double d = std::max(0.3, 0.6 * scale());
  for (const char* f : {"--threads", "4", "--clients", "3", "--fanout", "24", "--work-before-ns", "0",
                        "--work-after-ns", "0", "--cs-ns", "20000", "--quiet"}) {
    flags.emplace_back(f);
  }
  st::run_result r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::string> a = flags;
    const double dur = d * (1 << attempt);
    for (const std::string& f :
         {std::string("--duration"), std::to_string(dur), std::string("--warmup"), std::to_string(dur / 4)}) {
      a.push_back(f);
    }
    const st::parse_outcome p = parse(a);
    EXPECT_TRUE(p.run) << p.message;
    if (!p.run) return r;
    r = st::run_workload(p.options.workload);
    if (r.spin_rounds > 0 && r.round_length.rounds > 0) break;
  }
  return r;
}

// p10 <= p50 <= p90, finite; p10 > 0 unless zero is a possible value (a round of an InnoDB delay
// draws 0 units in [0, spin_wait_delay): a zero-length round, which qemu can time as 0 ns).
bool ordered_and_finite(const nlohmann::json& j, bool zero_allowed = false) {
  const double p10 = j.at("p10"), p50 = j.at("p50"), p90 = j.at("p90");
  return std::isfinite(p10) && std::isfinite(p90) && (zero_allowed ? p10 >= 0 : p10 > 0) && p10 <= p50 &&
         p50 <= p90;
}

}  // namespace

// Guards against delay_accuracy and round_ns missing from the JSON, empty, or out of order, and
// against --relax-drift not reaching the run: a short contended run of the time policy with the
// relax drifting up to 3x reports achieved/requested percentiles in order over rounds it measured,
// by requested length, and the innodb policy reports no accuracy (its delays are no time) but its
// rounds' lengths. No timing value is asserted beyond > 0 and finite.
TEST(StressReport, DelayAccuracyAndRoundLengthsInTheJson) {
  const st::run_result t =
      contended_run({"--policy", "time", "--cpu-model", "skylake", "--relax-drift", "3"});
  expect_sound(t);
  ASSERT_GT(t.spin_rounds, 0u) << "no waiter delayed in three runs: nothing to measure";
  const nlohmann::json doc = st::make_document({t});
  const nlohmann::json& j = doc.at("runs")[0];
  EXPECT_EQ(j.at("config").at("relax_drift"), 3.0);
  EXPECT_EQ(j.at("emulation").at("drift").at("factor"), 3.0);
  const double mean = j.at("emulation").at("drift").at("window_mean_level");
  EXPECT_GE(mean, 1.0);
  EXPECT_LE(mean, 3.0);
  const nlohmann::json& a = j.at("delay_accuracy");
  ASSERT_TRUE(a.is_object()) << a;
  // Under emulation (qemu) every round can look preempted (the library's rule) and be left out.
  const std::uint64_t timed = a.at("rounds").get<std::uint64_t>();
  EXPECT_GT(timed + a.at("preempted_excluded").get<std::uint64_t>(), 0u);
  EXPECT_LE(timed, t.spin_rounds) << "more rounds timed than delayed";
  if (timed > 0) {
    EXPECT_TRUE(ordered_and_finite(a)) << a;
  }
  EXPECT_TRUE(a.at("preempted_excluded").is_number());
  EXPECT_EQ(a.at("ended_early_excluded"), 0u) << "time_policy's rounds run their course";
  EXPECT_EQ(a.at("ended_early_share"), 0.0);
  EXPECT_EQ(a.at("requested_ns").at("min"), 200.0) << "the time policy's 6 x 200 ns ask for 200..1000 ns";
  EXPECT_EQ(a.at("requested_ns").at("max"), 1000.0);
  ASSERT_EQ(a.at("by_requested").size(), 3u);
  EXPECT_EQ(a.at("by_requested")[1].at("rounds"), a.at("rounds")) << "every request lies in 200 ns..20 us";
  if (timed > 0) {
    EXPECT_TRUE(ordered_and_finite(a.at("by_requested")[1]));
  }
  EXPECT_TRUE(a.at("by_requested")[0].at("p50").is_null()) << "an empty band has no percentiles";
  if (j.at("round_ns").at("rounds").get<std::uint64_t>() > 0) {
    EXPECT_TRUE(ordered_and_finite(j.at("round_ns"), /*zero_allowed=*/true));
    EXPECT_TRUE(ordered_and_finite(j.at("round_ns").at("per_relax"), /*zero_allowed=*/true));
  }
  EXPECT_NE(st::format_run(t).find("delay accuracy (actual/requested, rounds that ran their course)"),
            std::string::npos);
  EXPECT_NE(st::format_run(t).find("drifting 1..3"), std::string::npos);
  const std::vector<std::string> cols = st::csv_columns();
  for (const char* c : {"relax_drift", "delay_accuracy_p50", "round_ns_p90"}) {
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
  }

  const st::run_result i =
      contended_run({"--policy", "innodb", "--cpu-model", "skylake", "--relax-drift", "3"});
  expect_sound(i);
  ASSERT_GT(i.spin_rounds, 0u);
  const nlohmann::json ji = st::to_json(i);
  EXPECT_TRUE(ji.at("delay_accuracy").is_null()) << "innodb's delays are instruction counts, not times";
  const nlohmann::json& rn = ji.at("round_ns");
  const std::uint64_t measured = rn.at("rounds").get<std::uint64_t>();
  EXPECT_GT(measured + rn.at("preempted_excluded").get<std::uint64_t>(), 0u) << rn;
  if (measured > 0) {
    EXPECT_TRUE(ordered_and_finite(rn, /*zero_allowed=*/true)) << rn;
    EXPECT_TRUE(ordered_and_finite(rn.at("per_relax"), /*zero_allowed=*/true)) << rn;
  }
  EXPECT_EQ(st::format_run(i).find("delay accuracy"), std::string::npos);
}

TEST(StressSweep, PointsCoverDelaysTimesCpusPlusTheTimeAndAdaptivePolicies) {
  st::sweep_options s;
  const auto pts = st::sweep_points(s);
  ASSERT_EQ(pts.size(), 9u * 3u + 3u + 3u);
  std::set<std::pair<int, int>> seen;
  std::vector<const st::sweep_point*> time, adaptive;
  for (const auto& p : pts) {
    if (p.policy == st::policy_kind::innodb)
      seen.insert({static_cast<int>(p.cpu), static_cast<int>(p.delay)});
    if (p.policy == st::policy_kind::time) time.push_back(&p);
    if (p.policy == st::policy_kind::adaptive) adaptive.push_back(&p);
  }
  EXPECT_EQ(seen.size(), 27u);
  ASSERT_EQ(time.size(), 3u);
  ASSERT_EQ(adaptive.size(), 3u);
  EXPECT_EQ(time.back()->unit_ns, 200u);

  st::workload_config base;
  base.lock.lock = "hybrid_mutex";
  base.lock.pause_multiplier = 5;
  const st::workload_config t = st::point_config(base, *time.back());
  EXPECT_FALSE(t.lock.pause_multiplier.has_value()) << "an innodb knob leaked into the time policy";
  EXPECT_EQ(*t.lock.delay_unit_ns, 200u);
  EXPECT_NO_THROW(st::resolve_policy(t.lock));
  const st::workload_config a = st::point_config(base, *adaptive.back());
  EXPECT_FALSE(a.lock.pause_multiplier || a.lock.spin_wait_delay || a.lock.delay_unit_ns || a.lock.spin_loops)
      << "a knob leaked into the adaptive policy";
  EXPECT_NO_THROW(st::resolve_policy(a.lock));
  const st::workload_config i = st::point_config(base, pts.front());
  EXPECT_EQ(*i.lock.pause_multiplier, 5u);
  EXPECT_EQ(*i.lock.policy, st::policy_kind::innodb);
  // A CPU given as a relax length runs as a custom model of that length.
  s.cpus.clear();
  s.relax_ns = {20};
  const auto custom = st::sweep_points(s);
  ASSERT_EQ(custom.size(), 9u + 2u);
  EXPECT_EQ(st::point_config(base, custom.front()).cpu, st::cpu_model::custom);
  EXPECT_EQ(st::point_config(base, custom.front()).relax_ns, 20.0);
  EXPECT_EQ(st::sweep_settings(base, s).front().label, "20ns/innodb/0");
}

// A two-point sweep end to end: table rows, and a plot script gnuplot accepts (when installed).
TEST(StressSweep, RunsAndPlots) {
  st::workload_config c = small();
  c.verify = false;
  c.duration_s = std::max(0.1, 0.2 * scale());
  c.warmup_s = c.duration_s / 5;
  st::sweep_options s;
  s.delays = {0, 30};
  s.cpus = {st::cpu_model::skylake};
  s.relax_ns = {20};  // and a CPU given as its relax length
  std::ostringstream table;
  const std::vector<st::run_result> runs = st::run_sweep(c, s, table);
  // Per CPU: two innodb delays, the time policy, the adaptive policy.
  ASSERT_EQ(runs.size(), 8u);
  for (const st::run_result& r : runs) expect_sound(r);
  std::size_t adaptive = 0;
  for (const st::run_result& r : runs) {
    if (r.policy != st::policy_kind::adaptive) continue;
    ++adaptive;
    EXPECT_FALSE(st::knob_value(r, "spin_wait_delay").has_value()) << "adaptive has no knob to sweep";
    EXPECT_GE(r.adaptive_budget_ns, 200u);
  }
  EXPECT_EQ(adaptive, 2u);
  const std::string lines = table.str();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 9) << lines;
  const std::string script = st::gnuplot_script(runs, "out.png", "title \"quoted\"");
  EXPECT_NE(script.find("set output \"out.png\""), std::string::npos);
  EXPECT_NE(script.find("skylake (innodb)"), std::string::npos);
  EXPECT_NE(script.find("skylake (time policy)"), std::string::npos);
  EXPECT_NE(script.find("20ns (innodb)"), std::string::npos) << script;
  EXPECT_NE(script.find("skylake (adaptive, no knob)"), std::string::npos) << script;
  EXPECT_NE(script.find("with yerrorlines dt 2"), std::string::npos) << "adaptive: a dashed level";
  EXPECT_EQ(script.find("\"quoted\""), std::string::npos) << "a title quote would end the gnuplot string";
  // One legend, placed under the panels (at screen coordinates): one inside a panel covers the data.
  EXPECT_NE(script.find("set key at screen"), std::string::npos) << script;
  EXPECT_EQ(script.find("set key top"), std::string::npos) << script;
  // The spread: each point's median with its interval as error bars (x y ylow yhigh per panel).
  EXPECT_NE(script.find("using 1:2:3:4 with yerrorlines"), std::string::npos) << script;
  EXPECT_NE(script.find("using 1:8:9:10 with yerrorbars"), std::string::npos) << script;
  EXPECT_NE(script.find("one run per point"), std::string::npos)
      << "one run each: no spread, and the title says so";
  {
    std::istringstream lines_in(script);
    std::size_t data_rows = 0;
    bool in_block = false;
    for (std::string line; std::getline(lines_in, line);) {
      if (line.find("<< EOD") != std::string::npos) {
        in_block = true;
      } else if (line == "EOD") {
        in_block = false;
      } else if (in_block) {
        std::istringstream f(line);
        std::vector<double> v;
        for (double x; f >> x;) v.push_back(x);
        ASSERT_EQ(v.size(), 10u) << line;
        for (std::size_t k = 1; k < 10; k += 3) {
          EXPECT_LE(v[k + 1], v[k]) << "lo above the median: " << line;
          EXPECT_LE(v[k], v[k + 2]) << "hi below the median: " << line;
        }
        ++data_rows;
      }
    }
    EXPECT_EQ(data_rows, 10u) << "per CPU: two innodb points, one time point, the adaptive level's two ends";
  }

  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const std::string png = ::testing::TempDir() + "spinwise_stress_test_sweep.png";
  std::remove(png.c_str());
  ASSERT_EQ(st::render_png(runs, png, "test"), "");
  std::ifstream f(png, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}
