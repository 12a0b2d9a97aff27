// spinwise-bench smoke test: quick mode runs, every listed benchmark ran and reported its
// counters, bad flags are refused, and bench/micro/report.py turns the run into tables and plots.
// Asserts nothing about timings (a loaded 2-vCPU VM makes them noise).

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_json_check.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "spinwise/version.hpp"
#include "test_util.hpp"

namespace {

using nlohmann::json;
using spinwise::bench_test::check_bench_json;

const std::string kBench = SPINWISE_BENCH_EXE;
const std::string kOutDir = SPINWISE_BENCH_OUT_DIR;
const std::string kReport = SPINWISE_BENCH_REPORT;
const std::string kPython = SPINWISE_PYTHON3;
const std::string kGnuplot = SPINWISE_GNUPLOT;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct result {
  int status = -1;
  std::string out;
};

// Runs a shell command; stdout (and stderr when asked) captured.
result run(const std::string& cmd, bool with_stderr = false) {
  result r;
  FILE* p = popen((cmd + (with_stderr ? " 2>&1" : "")).c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Under sanitizers and emulation (SPINWISE_TEST_SCALE < 1) fewer thread counts:
// every lock and scenario still runs, which is what this test is about.
std::string quick_flags() {
  std::string f = "--mode=quick";
  if (spinwise_test::scale() < 1.0) f += " --threads=1,3";
  return f;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) v.push_back(l);
  }
  return v;
}

json minimal_run() {
  return json::parse(R"({
    "context": {"bench.mode": "quick", "lock.std::mutex": "peer", "bench.c2c_oneway_ns": "60.5",
                "bench.c2c_method": "cpus 0,1: store/load ping-pong"},
    "benchmarks": [
      {"name": "uncontended/std::mutex/real_time", "run_name": "uncontended/std::mutex/real_time",
       "run_type": "iteration", "iterations": 10, "real_time": 20.0},
      {"name": "handoff/std::mutex/real_time", "run_name": "handoff/std::mutex/real_time",
       "run_type": "iteration", "iterations": 10, "real_time": 2000.0,
       "p50_ns": 100, "p90_ns": 150, "p99_ns": 200, "p999_ns": 300, "samples": 20, "capped": 0,
       "c2c_ns": 61.0},
      {"name": "contended/std::mutex/cs_ns:100/local_ns:100/real_time/threads:2",
       "run_name": "contended/std::mutex/cs_ns:100/local_ns:100/real_time/threads:2",
       "run_type": "iteration", "iterations": 10, "real_time": 200.0,
       "acq_per_s": 5e6, "fair_cov": 0.1, "fair_min": 4, "fair_max": 6, "fair_window_acq": 10,
       "cpu_ns_per_acq": 300, "csw_per_acq": 0.01, "vcsw_per_acq": 0.01, "cpus_busy": 1.5, "capped": 0,
       "fair_min_cpu_ms": 0.5, "fair_max_cpu_ms": 0.6, "fair_window_ms": 2.0, "fair_window_open": 1}
    ]})");
}

const std::vector<std::string> kMinimalNames = {
    "uncontended/std::mutex/real_time", "handoff/std::mutex/real_time",
    "contended/std::mutex/cs_ns:100/local_ns:100/real_time/threads:2"};

// The checker itself: each way a run can be incomplete is caught.
TEST(BenchJsonCheck, CompleteRunPasses) {
  EXPECT_TRUE(check_bench_json(minimal_run(), kMinimalNames).empty());
}

TEST(BenchJsonCheck, MissingBenchmarkIsReported) {
  auto names = kMinimalNames;
  names.push_back("contended/ttas_mutex/cs_ns:100/local_ns:100/real_time/threads:2");
  const auto p = check_bench_json(minimal_run(), names);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("never ran"), std::string::npos);
}

TEST(BenchJsonCheck, MissingOrBadCounterIsReported) {
  json j = minimal_run();
  j["benchmarks"][2].erase("fair_cov");
  j["benchmarks"][1]["p50_ns"] = 0;
  const auto p = check_bench_json(j, kMinimalNames);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NE(p[0].find("p50_ns"), std::string::npos);
  EXPECT_NE(p[1].find("fair_cov missing"), std::string::npos);
}

TEST(BenchJsonCheck, FailedBenchmarkIsReported) {
  json j = minimal_run();
  j["benchmarks"][2]["error_occurred"] = true;
  j["benchmarks"][2]["error_message"] = "lock lost updates";
  const auto p = check_bench_json(j, kMinimalNames);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("lock lost updates"), std::string::npos);
}

TEST(BenchJsonCheck, CatalogueLockWithoutBenchmarkIsReported) {
  json j = minimal_run();
  j["context"]["lock.ttas_mutex"] = "spinwise";
  const auto p = check_bench_json(j, kMinimalNames);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("ttas_mutex"), std::string::npos);
}

TEST(BenchJsonCheck, EmptyListingIsReported) { EXPECT_FALSE(check_bench_json(minimal_run(), {}).empty()); }

TEST(BenchJsonCheck, HandoffWithoutCoreToCoreLatencyIsReported) {
  json j = minimal_run();
  j["context"].erase("bench.c2c_oneway_ns");
  auto p = check_bench_json(j, kMinimalNames);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("bench.c2c_oneway_ns"), std::string::npos);
  // -1 is an answer only with the reason.
  j["context"]["bench.c2c_oneway_ns"] = "-1";
  p = check_bench_json(j, kMinimalNames);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("without a reason"), std::string::npos);
  j["context"]["bench.c2c_method"] = "not measured: cpus 0-1: timed out";
  EXPECT_TRUE(check_bench_json(j, kMinimalNames).empty());
}

// Bad flags: a clear message naming the flag, exit status 2, nothing run.
TEST(BenchFlags, BadValuesAreRefused) {
  for (const char* bad :
       {"--threads=0", "--threads=2,x", "--cs-ns=-5", "--read-pct=101", "--mode=slow", "--max-run-ms=0",
        "--scenarios=uncontended,bogus", "--handoff-delay-ns", "--benchmark_bogus=1", "--bogus", "--cs_ns=-5",
        "--repetitions=0", "--repetitions=101", "--repetitions=x"}) {
    const result r = run(quote(kBench) + " " + bad, true);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    std::string flag = std::string(bad).substr(0, std::string(bad).find('='));
    if (flag == "--cs_ns") flag = "--cs-ns";  // an old spelling: the message names the flag as it is now
    EXPECT_NE(r.out.find(flag), std::string::npos) << "the message should name the flag: " << r.out;
    EXPECT_EQ(r.out.find("Benchmark "), std::string::npos) << bad << " ran benchmarks: " << r.out;
  }
  // --repetitions is --benchmark_repetitions in short: both at once is a mistake, said as such.
  const result both = run(quote(kBench) + " --repetitions=3 --benchmark_repetitions=5", true);
  EXPECT_EQ(both.status, 2) << both.out;
  EXPECT_NE(both.out.find("--repetitions and --benchmark_repetitions=5"), std::string::npos) << both.out;
  const result stray = run(quote(kBench) + " stray", true);
  EXPECT_EQ(stray.status, 2) << stray.out;
  EXPECT_NE(stray.out.find("'stray'"), std::string::npos) << stray.out;
}

// SPINWISE_KNOBS is applied before anything runs, as an engine's start-up applies it: a good one
// shows in --list-knobs, a bad one is a usage error that names the key and runs nothing.
TEST(BenchFlags, KnobsFromTheEnvironment) {
  const result good =
      run("SPINWISE_KNOBS=hybrid_shared_mutex.delay_unit_ns=500 " + quote(kBench) + " --list-knobs");
  EXPECT_EQ(good.status, 0) << good.out;
  const std::size_t row = good.out.find("hybrid_shared_mutex.delay_unit_ns");
  ASSERT_NE(row, std::string::npos) << good.out;
  const std::string line = good.out.substr(row, good.out.find('\n', row) - row);
  EXPECT_NE(line.find(" 500 "), std::string::npos) << line;
  EXPECT_NE(line.find("override"), std::string::npos) << line;
  const result bad =
      run("SPINWISE_KNOBS=hybrid_shared_mutex.delay_unit_ns=0 " + quote(kBench) + " --list-knobs", true);
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("hybrid_shared_mutex.delay_unit_ns"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("key "), std::string::npos) << "the table was printed: " << bad.out;
}

TEST(BenchFlags, VersionAndHelp) {
  const result v = run(quote(kBench) + " --version");
  EXPECT_EQ(v.status, 0) << v.out;
  EXPECT_EQ(v.out, "spinwise-bench " + std::string(spinwise::kVersion) + "\n");
  const result h = run(quote(kBench) + " --help");
  EXPECT_EQ(h.status, 0) << h.out;
  for (const char* flag :
       {"--mode", "--scenarios", "--threads", "--cs-ns", "--local-ns", "--rw-cs-ns", "--rw-local-ns",
        "--read-pct", "--max-run-ms", "--repetitions", "--handoff-delay-ns", "--list-locks", "--version"}) {
    EXPECT_NE(h.out.find(flag), std::string::npos) << "--help lacks " << flag;
  }
  for (const char* old : {"--cs_ns", "--max_run_ms", "--list_locks"}) {
    EXPECT_EQ(h.out.find(old), std::string::npos) << "--help lists the old spelling " << old;
  }
}

// Google Benchmark's flags reach it both ways, and the old spellings still work (unlisted).
TEST(BenchFlags, BenchmarkFlagsPassThroughAndOldSpellingsWork) {
  const std::string base = quote(kBench) + " --mode quick --scenarios uncontended --threads 2";
  const result direct = run(base + " --benchmark_list_tests=true --benchmark_filter=std::mutex");
  const result after_dashes = run(base + " -- --benchmark_list_tests=true --benchmark_filter=std::mutex");
  EXPECT_EQ(direct.status, 0) << direct.out;
  EXPECT_EQ(after_dashes.status, 0) << after_dashes.out;
  EXPECT_EQ(direct.out, after_dashes.out);
  EXPECT_NE(direct.out.find("uncontended/std::mutex"), std::string::npos) << direct.out;
  EXPECT_EQ(direct.out.find("ttas_mutex"), std::string::npos)
      << "the filter did not reach Google Benchmark: " << direct.out;

  const result now = run(quote(kBench) + " --list-locks");
  const result old = run(quote(kBench) + " --list_locks");
  EXPECT_EQ(now.status, 0) << now.out;
  EXPECT_EQ(old.status, 0) << old.out;
  EXPECT_EQ(now.out, old.out);
  EXPECT_NE(now.out.find("std::mutex=peer"), std::string::npos) << now.out;
}

// The console keeps a line short and every figure a number; the JSON keeps every counter. Two
// repetitions give the _cv rows, where a counter that is 0 in both was printed "capped=-nan%".
TEST(BenchConsole, ShortLinesOfNumbersAndTheJsonKeepsEveryCounter) {
  const std::string json_path = kOutDir + "/console.json";
  std::remove(json_path.c_str());
  const result r = run(quote(kBench) +
                       " --mode quick --scenarios handoff,contended --threads 2 --repetitions 2"
                       " --benchmark_filter=std::mutex --benchmark_out=" +
                       quote(json_path) + " --benchmark_out_format=json");
  ASSERT_EQ(r.status, 0) << r.out;
  std::size_t rows = 0;
  for (const std::string& l : lines(r.out)) {
    if (l.rfind("contended/", 0) != 0 && l.rfind("handoff/", 0) != 0) continue;
    ++rows;
    EXPECT_LE(l.size(), 200u) << l;
    EXPECT_EQ(l.find("nan"), std::string::npos) << l;
    EXPECT_EQ(l.find("fair_window"), std::string::npos) << "not a headline counter: " << l;
  }
  EXPECT_GE(rows, 8u) << r.out;  // two runs and four aggregates of each
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << "no JSON at " << json_path;
  // Google Benchmark writes a 0/0 coefficient of variation as NaN, which report.py's reader takes
  // and nlohmann's does not.
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at; (at = text.find("NaN")) != std::string::npos;) {
    const bool minus = at > 0 && text[at - 1] == '-';
    text.replace(minus ? at - 1 : at, minus ? 4 : 3, "null");
  }
  json j;
  ASSERT_NO_THROW(j = json::parse(text));
  bool contended = false;
  for (const json& b : j["benchmarks"]) {
    if (b.value("run_type", "") != "iteration" || b["name"].get<std::string>().rfind("contended/", 0) != 0)
      continue;
    contended = true;
    for (const char* k : {"acq_per_s", "fair_min", "fair_window_acq", "csw_per_acq", "cpus_busy", "capped"}) {
      EXPECT_TRUE(b.contains(k)) << "the JSON lost " << k;
    }
  }
  EXPECT_TRUE(contended) << "no contended run in the JSON";
  // Another format asked for is Google Benchmark's own, whole.
  const result csv = run(quote(kBench) +
                         " --mode quick --scenarios contended --threads 2 --benchmark_filter=std::mutex"
                         " --benchmark_format=csv");
  ASSERT_EQ(csv.status, 0) << csv.out;
  EXPECT_NE(csv.out.find("fair_window_acq"), std::string::npos) << csv.out;
}

// The quick mode end to end: list, run, check the JSON, make the report.
TEST(BenchQuick, EveryBenchmarkRanWithItsCountersAndTheReportIsMade) {
  const std::string flags = quick_flags();
  const result listing = run(quote(kBench) + " " + flags + " --benchmark_list_tests=true");
  ASSERT_EQ(listing.status, 0) << listing.out;
  const std::vector<std::string> expected = lines(listing.out);
  // Every scenario is in quick mode.
  for (const char* s : {"uncontended/", "uncontended_shared/", "handoff/", "contended/", "rw/"}) {
    bool any = false;
    for (const auto& n : expected) any = any || n.rfind(s, 0) == 0;
    EXPECT_TRUE(any) << "no " << s << " benchmark listed";
  }

  const std::string json_path = kOutDir + "/quick.json";
  std::remove(json_path.c_str());
  const result r = run(quote(kBench) + " " + flags + " --benchmark_out=" + quote(json_path) +
                           " --benchmark_out_format=json > " + quote(kOutDir + "/quick.txt"),
                       true);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << "no JSON at " << json_path;
  json j;
  ASSERT_NO_THROW(in >> j);
  const auto problems = check_bench_json(j, expected);
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_EQ(j["context"].value("bench.libc_single_threaded", "0"), "0")
      << "uncontended numbers were taken on glibc's single-threaded path";
  // The run context as spinwise-stress and --advise write it (tests/stress/run_context_test.cpp
  // checks that those keys are the same), flat: every run.<key>, and no other run.* key.
  std::set<std::string> want, have;
  for (const auto& [key, value] : spinwise::run_context_fields(spinwise::run_context{})) want.insert(key);
  for (const auto& [key, value] : j["context"].items()) {
    if (key.rfind("run.", 0) == 0) have.insert(key);
  }
  EXPECT_EQ(have, want);
  EXPECT_GT(std::stod(j["context"].value("run.relax_ns", "0")), 0)
      << "the cost the locks convert delays with";

  if (kPython.empty() || kGnuplot.empty()) {
    GTEST_SKIP() << "python3 or gnuplot not found at configure time: report.py not run";
  }
  const std::string report_dir = kOutDir + "/report";
  std::remove((report_dir + "/report.md").c_str());
  const result rep = run(quote(kPython) + " " + quote(kReport) + " " + quote(json_path) + " --out " +
                             quote(report_dir) + " --bench " + quote(kBench),
                         true);
  ASSERT_EQ(rep.status, 0) << rep.out;
  std::ifstream md(report_dir + "/report.md");
  ASSERT_TRUE(md) << rep.out;
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  for (const char* section : {"## Targets", "## Uncontended lock + unlock", "## Handoff latency",
                              "## Contended", "## Read/write mixes", "vs std::mutex", "vs best peer"}) {
    EXPECT_NE(text.find(section), std::string::npos) << "report.md lacks " << section;
  }
  // One repetition: no spread to show, and the report says so; the compact summary is written.
  EXPECT_NE(text.find("one repetition per benchmark"), std::string::npos)
      << "quick mode's report lacks its caveat";
  EXPECT_TRUE(std::ifstream(report_dir + "/summary.json")) << "report.py wrote no summary.json";
  // Each plot the report links exists and is a PNG.
  size_t plots = 0;
  for (size_t at = text.find("](plots/"); at != std::string::npos; at = text.find("](plots/", at + 1)) {
    const std::string file = text.substr(at + 2, text.find(')', at) - at - 2);
    std::ifstream png(report_dir + "/" + file, std::ios::binary);
    char sig[8] = {};
    png.read(sig, 8);
    EXPECT_TRUE(png && std::string(sig + 1, 3) == "PNG") << file << " is not a PNG";
    ++plots;
  }
  EXPECT_GE(plots, 2u) << "throughput and fairness plots expected";
}

TEST(BenchReport, BadInputGetsAClearError) {
  if (kPython.empty()) GTEST_SKIP() << "python3 not found at configure time";
  const std::string bad = kOutDir + "/not_a_run.json";
  std::ofstream(bad) << "{\"hello\": 1}";
  const result r = run(
      quote(kPython) + " " + quote(kReport) + " " + quote(bad) + " --out " + quote(kOutDir + "/bad"), true);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("benchmarks"), std::string::npos) << r.out;
  const result missing =
      run(quote(kPython) + " " + quote(kReport) + " " + quote(kOutDir + "/no_such.json"), true);
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_NE(missing.out.find("no_such.json"), std::string::npos) << missing.out;
  // The quick run with no spinwise-bench to answer the statistics: the report stops and says so.
  const result no_bench =
      run(quote(kPython) + " " + quote(kReport) + " " + quote(kOutDir + "/quick.json") + " --out " +
              quote(kOutDir + "/bad") + " --bench " + quote(kOutDir + "/no_such_bench"),
          true);
  EXPECT_EQ(no_bench.status, 1) << no_bench.out;
  EXPECT_NE(no_bench.out.find("not an executable spinwise-bench"), std::string::npos) << no_bench.out;
}

}  // namespace
