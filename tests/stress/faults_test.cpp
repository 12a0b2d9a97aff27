// spinwise-stress, the injected faults: --stall-holder-ms and --stuck-after-ms.

#include "stress_test_util.hpp"

using namespace stress_test;

// --- faults: --stall-holder-ms and --stuck-after-ms ------------------------------------------------

// Guards against a stall that fires twice (a load and a store where one exchange belongs), or
// before it is armed: of four threads calling after the arming, exactly one call stalls.
TEST(StressFaults, HolderStallFiresOnceAfterArming) {
  st::holder_stall s(1);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(s.hold_if_armed()) << "stalled before it was armed";
  EXPECT_FALSE(s.fired());
  s.arm();
  std::atomic<int> stalls{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) stalls += s.hold_if_armed() ? 1 : 0;
    });
  }
  for (std::thread& t : ts) t.join();
  EXPECT_EQ(stalls.load(), 1);
  EXPECT_TRUE(s.fired());
  st::holder_stall off(0);
  off.arm();
  EXPECT_FALSE(off.hold_if_armed()) << "a stall of 0 ms is no stall";
}

// Guards against a stall wired into one lock's path only: it is done around the critical
// section, so every lock of --list-locks stalls, in either scenario, and keeps its data whole.
TEST(StressFaults, EveryLockStallsAHolder) {
  std::size_t i = 0;
  for (const st::lock_info& li : st::lock_catalog()) {
    const st::scenario sc = i++ % 2 == 0 ? st::scenario::stats_lock : st::scenario::hot_page;
    st::workload_config c = small(sc);
    c.lock.lock = li.name;
    c.duration_s = 0.1;
    c.warmup_s = 0.02;
    c.stall_holder_ms = 20;
    SCOPED_TRACE(li.name + " " + std::string(st::to_string(sc)));
    const st::run_result r = run_with_work(c);
    expect_sound(r);
    EXPECT_TRUE(r.holder_stalled);
    EXPECT_EQ(st::to_json(r)["holder_stalled"], true);
    EXPECT_EQ(st::to_json(r)["config"]["stall_holder_ms"], 20);
  }
}

// Guards against stuck reports that cannot say where: every acquisition (its try and its lock)
// passes the scenario's site, so the waits behind a stalled holder name scenario_hot_page.cpp for
// the waiter and the holder, and those waits are counted. Tracking is off again once the watch
// stops.
TEST(StressFaults, StuckWaitsNameTheScenarioSites) {
  st::workload_config c = small(st::scenario::hot_page);
  c.lock.lock = "sx_lock";
  c.pages = 4;
  c.stall_holder_ms = 200;
  std::vector<spinwise::stuck_wait_report> reports;
  st::run_result r;
  {
    st::stuck_watch watch(50, false);
    EXPECT_TRUE(st::stress_tracking());
    r = run_with_work(c);
    watch.stop();
    reports = watch.reports();
  }
  EXPECT_FALSE(st::stress_tracking());
  expect_sound(r);
  EXPECT_TRUE(r.holder_stalled);
  EXPECT_GT(r.latch_waits, 0u) << "the waits behind a 200 ms stall went uncounted";
  ASSERT_FALSE(reports.empty());
  bool named = false;
  for (const spinwise::stuck_wait_report& w : reports) {
    EXPECT_GE(w.waiter.ms, 50.0) << "reported below the threshold";
    EXPECT_EQ(w.waiter.lock_class, "stress_latch");
    for (const spinwise::tracked_lock& h : w.holders) {
      named |= w.waiter.site.find("scenario_hot_page.cpp:") != std::string::npos &&
               h.site.find("scenario_hot_page.cpp:") != std::string::npos;
    }
  }
  EXPECT_TRUE(named) << spinwise::format_stuck_report(reports.front());
}

// Guards against a JSON that drifts from what stuck_watch.hpp promises: the keys, the modes as
// "x" / "s" / "sx", and a report without holders as an empty list.
TEST(StressFaults, StuckReportsJson) {
  spinwise::stuck_wait_report a;
  a.waiter = {101, 0x1000, "stress_latch", spinwise::lock_mode::s, "scenario_hot_page.cpp:97", 250.5};
  a.holders.push_back(
      {102, 0x1000, "stress_latch", spinwise::lock_mode::sx, "scenario_hot_page.cpp:80", 300});
  spinwise::stuck_wait_report b;
  b.waiter = {103, 0x2000, "stress_latch", spinwise::lock_mode::x, "", 120};
  const nlohmann::json j = st::stuck_reports_json({a, b});
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["waiter_tid"], 101);
  EXPECT_EQ(j[0]["mode"], "s");
  EXPECT_EQ(j[0]["site"], "scenario_hot_page.cpp:97");
  EXPECT_DOUBLE_EQ(j[0]["waited_ms"].get<double>(), 250.5);
  EXPECT_EQ(j[0]["lock_class"], "stress_latch");
  EXPECT_EQ(j[0]["lock"], "0x1000");
  ASSERT_EQ(j[0]["holders"].size(), 1u);
  EXPECT_EQ(j[0]["holders"][0]["tid"], 102);
  EXPECT_EQ(j[0]["holders"][0]["mode"], "sx");
  EXPECT_EQ(j[0]["holders"][0]["site"], "scenario_hot_page.cpp:80");
  EXPECT_DOUBLE_EQ(j[0]["holders"][0]["held_ms"].get<double>(), 300.0);
  EXPECT_EQ(j[1]["mode"], "x");
  EXPECT_EQ(j[1]["site"], "");
  EXPECT_TRUE(j[1]["holders"].is_array());
  EXPECT_TRUE(j[1]["holders"].empty());
  EXPECT_TRUE(st::stuck_reports_json({}).is_array());
}

// Guards against the flags landing in the wrong place: --stall-holder-ms is a run's (a --compare
// setting may differ in it), --stuck-after-ms the session's.
TEST(StressFaults, FlagsParse) {
  const st::parse_outcome p = parse({"--stall-holder-ms", "300", "--stuck-after-ms", "100"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.stall_holder_ms, 300u);
  EXPECT_EQ(p.options.stuck_after_ms, 100u);
  const st::parse_outcome none = parse({});
  ASSERT_TRUE(none.run) << none.message;
  EXPECT_EQ(none.options.workload.stall_holder_ms, 0u);
  EXPECT_EQ(none.options.stuck_after_ms, 0u);
  const st::parse_outcome cmp = parse({"--compare", "--seed 1", "--stall-holder-ms 50"});
  ASSERT_TRUE(cmp.run) << cmp.message;
  ASSERT_EQ(cmp.options.compare.size(), 2u);
  EXPECT_EQ(cmp.options.compare[0].config.stall_holder_ms, 0u);
  EXPECT_EQ(cmp.options.compare[1].config.stall_holder_ms, 50u);
  for (const char* bad : {"0", "600001", "-1", "1.5", "soon", ""}) {
    const st::parse_outcome e = parse({"--stall-holder-ms", bad});
    EXPECT_FALSE(e.run) << bad;
    EXPECT_EQ(e.exit_code, 2) << bad;
  }
  st::workload_config c;
  c.stall_holder_ms = st::kMaxStallHolderMs + 1;
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
}
