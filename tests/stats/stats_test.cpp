// Wait statistics: exact counts, no lost updates, diff and reset semantics, counter wrap.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/sx_lock.hpp"
#include "stats_test_util.hpp"

namespace sw = spinwise;
using spinwise_test::find_class;
using spinwise_test::recorded_since;
using spinwise_test::scale;

namespace {

SPINWISE_TEST_STATS_CLASS(exact_class, "test.exact");
SPINWISE_TEST_STATS_CLASS(concurrent_class, "test.concurrent");
SPINWISE_TEST_STATS_CLASS(wrap_class, "test.wrap");
SPINWISE_TEST_STATS_CLASS(reset_class, "test.reset");
SPINWISE_TEST_STATS_CLASS(upgrade_class, "test.upgrades");

}  // namespace

static_assert(std::is_empty_v<sw::no_stats>, "statistics off must cost no storage");

TEST(WaitHistogram, BucketsAreLog2) {
  EXPECT_EQ(sw::wait_histogram_bucket(0), 0u);
  EXPECT_EQ(sw::wait_histogram_bucket(1), 0u);
  EXPECT_EQ(sw::wait_histogram_bucket(2), 1u);
  EXPECT_EQ(sw::wait_histogram_bucket(3), 1u);
  EXPECT_EQ(sw::wait_histogram_bucket(4), 2u);
  EXPECT_EQ(sw::wait_histogram_bucket(1023), 9u);
  EXPECT_EQ(sw::wait_histogram_bucket(1024), 10u);
  EXPECT_EQ(sw::wait_histogram_bucket(~std::uint64_t{0}), sw::kWaitHistogramBuckets - 1);
}

// A scripted workload whose every count is known.
TEST(LockStats, ExactCountsFromAScriptedWorkload) {
  using S = sw::class_stats<exact_class>;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  for (int i = 0; i < 100; ++i) S::on_acquire(nullptr, spinwise::lock_mode::x);
  for (int i = 0; i < 7; ++i) {
    sw::wait_record w;
    w.rounds = 3;
    w.relaxes = 150;
    w.spin_ticks = 1000;
    w.yields = i % 2;
    w.parks = i == 6 ? 1 : 0;
    w.wait_ticks = 4096u << i;
    S::on_contended(w, spinwise::lock_mode::x);
  }
  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const sw::lock_class_stats* c = find_class(d, "test.exact");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.acquisitions, 100u);
  EXPECT_EQ(c->totals.contended, 7u);
  EXPECT_EQ(c->totals.rounds, 21u);
  EXPECT_EQ(c->totals.relaxes, 1050u);
  EXPECT_EQ(c->totals.spin_ticks, 7000u);
  EXPECT_EQ(c->totals.yields, 3u);
  EXPECT_EQ(c->totals.parks, 1u);
  EXPECT_EQ(c->totals.spin_won, 6u) << "six of the seven waits ended before any futex wait";
  EXPECT_EQ(c->totals.wait_ticks, 4096u * 127u);
  EXPECT_EQ(c->totals.max_wait_ticks, 4096u << 6);
  for (std::size_t b = 0; b < sw::kWaitHistogramBuckets; ++b) {
    EXPECT_EQ(c->totals.histogram[b], (b >= 12 && b <= 18) ? 1u : 0u) << "bucket " << b;
  }
  const sw::lock_class_summary m = sw::summarize(d, *c);
  EXPECT_DOUBLE_EQ(m.spin_rounds_per_wait, 3.0);
  EXPECT_DOUBLE_EQ(m.contended_share, 0.07);
  EXPECT_DOUBLE_EQ(m.spin_efficiency, 6.0 / 7.0);
}

// Sharded counters: N threads record concurrently, including threads that exit before the
// snapshot (their shards are folded into the class), and nothing is lost.
TEST(LockStats, NoLostUpdatesUnderConcurrentRecording) {
  using S = sw::class_stats<concurrent_class>;
  const int threads = 4;
  const int per_thread = static_cast<int>(20000 * scale()) + 100;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  std::atomic<int> done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i) {
        S::on_acquire(nullptr, spinwise::lock_mode::x);
        if (i % 10 == 0) {
          sw::wait_record w;
          w.rounds = 2;
          w.wait_ticks = 5;
          S::on_contended(w, spinwise::lock_mode::x);
        }
      }
      done.fetch_add(1);
    });
  }
  // A snapshot taken while threads record never sees more than was recorded.
  const sw::stats_snapshot mid = sw::diff_stats(before, sw::take_stats_snapshot());
  if (const auto* c = find_class(mid, "test.concurrent")) {
    EXPECT_LE(c->totals.acquisitions, static_cast<std::uint64_t>(threads) * per_thread);
  }
  for (auto& th : pool) th.join();
  ASSERT_EQ(done.load(), threads);
  const sw::lock_class_stats c = recorded_since(before, "test.concurrent");
  const std::uint64_t contended_per_thread = (per_thread + 9) / 10;
  EXPECT_EQ(c.totals.acquisitions, static_cast<std::uint64_t>(threads) * per_thread);
  EXPECT_EQ(c.totals.contended, threads * contended_per_thread);
  EXPECT_EQ(c.totals.rounds, 2 * threads * contended_per_thread);
  EXPECT_EQ(c.totals.histogram[2], threads * contended_per_thread);
}

// Guards against MySQL bug #79703: a counter near its limit wraps, and a diff across the wrap
// is still the true difference; derived ratios never go negative.
TEST(LockStats, DiffAcrossACounterWrapIsExact) {
  using S = sw::class_stats<wrap_class>;
  sw::wait_record big;
  big.rounds = ~std::uint64_t{0} - 10;  // 11 below the wrap
  big.wait_ticks = 1;
  S::on_contended(big, spinwise::lock_mode::x);
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  sw::wait_record w;
  w.rounds = 25;  // crosses 2^64
  w.wait_ticks = 1;
  S::on_contended(w, spinwise::lock_mode::x);
  const sw::stats_snapshot after = sw::take_stats_snapshot();
  const sw::lock_class_stats* raw = find_class(after, "test.wrap");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->totals.rounds, 14u);  // wrapped
  const sw::stats_snapshot d = sw::diff_stats(before, after);
  const sw::lock_class_stats* c = find_class(d, "test.wrap");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.rounds, 25u);
  EXPECT_EQ(c->totals.contended, 1u);
  EXPECT_GE(sw::summarize(after, *raw).spin_rounds_per_wait, 0.0);
}

TEST(LockStats, ResetCountsFromZeroAgain) {
  using S = sw::class_stats<reset_class>;
  sw::wait_record w;
  w.wait_ticks = 1u << 20;
  for (int i = 0; i < 5; ++i) S::on_acquire(nullptr, spinwise::lock_mode::x);
  S::on_contended(w, spinwise::lock_mode::x);
  sw::reset_stats();
  const sw::stats_snapshot z = sw::take_stats_snapshot();
  const sw::lock_class_stats* zero = find_class(z, "test.reset");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->totals.acquisitions, 0u);
  EXPECT_EQ(zero->totals.contended, 0u);
  EXPECT_EQ(zero->totals.max_wait_ticks, 0u);
  S::on_acquire(nullptr, spinwise::lock_mode::x);
  w.wait_ticks = 8;
  S::on_contended(w, spinwise::lock_mode::x);
  const sw::stats_snapshot s = sw::take_stats_snapshot();
  const sw::lock_class_stats* c = find_class(s, "test.reset");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.acquisitions, 1u);
  EXPECT_EQ(c->totals.contended, 1u);
  EXPECT_EQ(c->totals.max_wait_ticks, 8u);
}

namespace {

// "12.34 us" (the report's human_ns) as nanoseconds; -1 for anything else.
double parse_duration_ns(const std::string& text) {
  const std::smatch m = [&] {
    std::smatch r;
    std::regex_match(text, r, std::regex(R"(([0-9]+(?:\.[0-9]+)?) (ns|us|ms|s))"));
    return r;
  }();
  if (m.empty()) return -1;
  const double v = std::stod(m[1].str());
  const std::string unit = m[2].str();
  return unit == "ns" ? v : unit == "us" ? v * 1e3 : unit == "ms" ? v * 1e6 : v * 1e9;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// One class's three lines of the text report, read back into numbers.
struct text_class {
  std::string name;
  std::uint64_t spin_waits = 0, rounds = 0, os_waits = 0, yields = 0, spin_won = 0, relaxes = 0,
                acquisitions = 0;
  double efficiency_percent = -1;
  double rounds_per_wait = -1, spin_ns = -1, cpu_percent = -1, contended_percent = -1;
  double wait_ns = -1, mean_ns = -1, max_ns = -1, p50_ns = -1, p99_ns = -1;
};

// Parses lines[at..at+2]; fails the test (and returns false) on a line of another shape.
bool parse_text_class(const std::vector<std::string>& lines, std::size_t at, text_class& c) {
  if (at + 2 >= lines.size()) {
    ADD_FAILURE() << "the report ends before line " << at + 2;
    return false;
  }
  static const std::regex head(
      R"((.*) spin waits ([0-9]+), rounds ([0-9]+), OS waits ([0-9]+), yields ([0-9]+), )"
      R"(won before an OS wait ([0-9]+) \(([0-9.]+)%\))");
  static const std::regex spin(
      R"(  Spin rounds per wait: ([0-9.]+); relaxes ([0-9]+), spin time (.+) \(([0-9.]+)% of process CPU\))");
  static const std::regex waits(
      R"(  Acquisitions ([0-9]+) \(([0-9.]+)% contended\); wait total (.+), mean (.+), max (.+), p50 <= (.+), )"
      R"(p99 <= (.+))");
  std::smatch m;
  if (!std::regex_match(lines[at], m, head)) {
    ADD_FAILURE() << "not a class header: '" << lines[at] << "'";
    return false;
  }
  c.name = m[1].str();
  c.spin_waits = std::stoull(m[2].str());
  c.rounds = std::stoull(m[3].str());
  c.os_waits = std::stoull(m[4].str());
  c.yields = std::stoull(m[5].str());
  c.spin_won = std::stoull(m[6].str());
  c.efficiency_percent = std::stod(m[7].str());
  if (!std::regex_match(lines[at + 1], m, spin)) {
    ADD_FAILURE() << "not a spin line: '" << lines[at + 1] << "'";
    return false;
  }
  c.rounds_per_wait = std::stod(m[1].str());
  c.relaxes = std::stoull(m[2].str());
  c.spin_ns = parse_duration_ns(m[3].str());
  c.cpu_percent = std::stod(m[4].str());
  if (!std::regex_match(lines[at + 2], m, waits)) {
    ADD_FAILURE() << "not a wait line: '" << lines[at + 2] << "'";
    return false;
  }
  c.acquisitions = std::stoull(m[1].str());
  c.contended_percent = std::stod(m[2].str());
  c.wait_ns = parse_duration_ns(m[3].str());
  c.mean_ns = parse_duration_ns(m[4].str());
  c.max_ns = parse_duration_ns(m[5].str());
  c.p50_ns = parse_duration_ns(m[6].str());
  c.p99_ns = parse_duration_ns(m[7].str());
  return true;
}

// A printed figure against its exact value: within the rounding of its last printed digit.
void expect_printed(double printed, double exact, double last_digit, const char* what) {
  EXPECT_NEAR(printed, exact, last_digit / 2 + exact * 1e-12) << what;
}

}  // namespace

// Bug guarded: the JSON printed figures with 6 significant digits (4155290.43 rounds per wait came
// out as 4.15529e+06); a counter written as a double loses what lies past 2^53.
TEST(LockStats, JsonNumbersReadBackExactly) {
  sw::stats_snapshot s;
  s.wall_seconds = 1234.5678901;
  s.process_cpu_seconds = 0.1 + 0.2;  // not 0.3: every bit must survive
  s.counter_hz = 2'893'456'789;
  sw::lock_class_stats c;
  c.name = "test.precision";
  c.totals.acquisitions = ~std::uint64_t{0} - 1;  // no double holds it
  c.totals.contended = 7;
  c.totals.rounds = 4'155'290 * std::uint64_t{7} + 3;  // 4155290.43 rounds per wait
  c.totals.spin_ticks = 4'155'290;
  c.totals.wait_ticks = 123'456'789'012'345'678;
  c.totals.max_wait_ticks = 4'155'290;
  c.totals.histogram[47] = (std::uint64_t{1} << 53) + 1;
  s.classes = {c};
  const nlohmann::json j = nlohmann::json::parse(sw::format_stats_json(s));
  EXPECT_EQ(j.at("wall_seconds").get<double>(), 1234.5678901);
  EXPECT_EQ(j.at("process_cpu_seconds").get<double>(), 0.1 + 0.2);
  EXPECT_EQ(j.at("counter_hz").get<std::uint64_t>(), 2'893'456'789u);
  const nlohmann::json& jc = j.at("classes").at(0);
  for (const sw::lock_stats_counter& k : sw::kLockStatsCounters) {
    const nlohmann::json& v = jc.at(std::string(k.key));
    EXPECT_TRUE(v.is_number_unsigned()) << k.key << " written as " << v.dump();
    EXPECT_EQ(v.get<std::uint64_t>(), c.totals.*k.total) << k.key;
  }
  EXPECT_EQ(jc.at("max_wait_ticks").get<std::uint64_t>(), 4'155'290u);
  EXPECT_EQ(jc.at("wait_histogram_log2_ticks").at(47).get<std::uint64_t>(), (std::uint64_t{1} << 53) + 1);
  const sw::lock_class_summary m = sw::summarize(s, c);
  ASSERT_GT(m.spin_rounds_per_wait, 4'155'290.0);
  for (const sw::lock_class_figure& f : sw::kLockClassFigures) {
    EXPECT_EQ(jc.at(std::string(f.key)).get<double>(), m.*f.value) << f.key;
  }
}

// Bug guarded: a counter added to the table (SPINWISE_STATS_COUNTERS) but left out of a report,
// or a report's key or line showing another counter's value. Each counter of the table in turn
// is the only one set: its JSON key holds it and no other key does, and the text changes.
TEST(LockStats, EveryCounterOfTheTableIsInBothReports) {
  sw::stats_snapshot zero;
  zero.wall_seconds = 1;
  zero.process_cpu_seconds = 1;
  zero.counter_hz = 1'000'000'000;
  zero.classes = {sw::lock_class_stats{"test.schema", {}}};
  const std::string zero_text = sw::format_stats_text(zero);
  ASSERT_GT(std::size(sw::kLockStatsCounters), 7u);
  auto expect_reported = [&](const sw::stats_snapshot& s, const std::string& what) {
    EXPECT_NE(sw::format_stats_text(s), zero_text) << what << " is not in the text report";
    return nlohmann::json::parse(sw::format_stats_json(s)).at("classes").at(0);
  };
  for (const sw::lock_stats_counter& k : sw::kLockStatsCounters) {
    const std::string key(k.key);
    EXPECT_FALSE(k.help.empty()) << key;
    sw::stats_snapshot s = zero;
    s.classes[0].totals.*k.total = 4'155'290;
    const nlohmann::json j = expect_reported(s, key);
    for (const sw::lock_stats_counter& other : sw::kLockStatsCounters) {
      const std::string other_key(other.key);
      ASSERT_TRUE(j.contains(other_key)) << other_key << " is not in the JSON report";
      EXPECT_EQ(j[other_key].get<std::uint64_t>(), other.total == k.total ? 4'155'290u : 0u)
          << "with only " << key << " set, JSON " << other_key;
    }
  }
  // The two that are not sums.
  sw::stats_snapshot s = zero;
  s.classes[0].totals.max_wait_ticks = 4'155'290;
  EXPECT_EQ(expect_reported(s, "max_wait_ticks").at("max_wait_ticks"), 4'155'290u);
  s = zero;
  s.classes[0].totals.histogram[20] = 4'155'290;
  EXPECT_EQ(expect_reported(s, "the histogram").at("wait_histogram_log2_ticks").at(20), 4'155'290u);
}

// Bug guarded: a report field showing another counter (parks as rounds, relaxes dropped), a
// derived figure computed wrongly (per acquisition instead of per wait, a percentage off by 100,
// ticks shown as ns), a name not escaped in JSON, the text not sorted by wait time, a class lost.
// A made-up snapshot whose every figure is known: the counter runs at 1 GHz (a tick is a ns).
TEST(LockStats, TextAndJsonReports) {
  sw::stats_snapshot s;
  s.wall_seconds = 2.5;
  s.process_cpu_seconds = 0.5;
  s.counter_hz = 1'000'000'000;
  sw::lock_class_stats quiet;  // first in the snapshot, second in the text (it waited less)
  quiet.name = "test.quiet";
  quiet.totals.acquisitions = 10;
  sw::lock_class_stats busy;
  busy.name = "test.report \"quoted\"";
  sw::lock_stats_totals& t = busy.totals;
  t.acquisitions = 200;
  t.contended = 8;
  t.rounds = 40;
  t.relaxes = 1200;
  t.spin_ticks = 50'000'000;  // 50 ms: 10% of the 0.5 s of process CPU
  t.yields = 3;
  t.parks = 2;
  t.spin_won = 6;         // 6 of the 8 waits ended before a futex wait
  t.wait_ticks = 80'000;  // mean 10 us over 8 waits
  t.max_wait_ticks = 30'000;
  t.histogram[13] = 6;  // 8192..16383 ticks: p50 <= 16383 ns
  t.histogram[14] = 2;  // 16384..32767 ticks: p99 <= 32767 ns
  s.classes = {quiet, busy};

  // JSON: parsed, every field compared with its value.
  const std::string json = sw::format_stats_json(s);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(json)) << json;
  EXPECT_EQ(j.at("format"), "spinwise.lock_stats");
  EXPECT_EQ(j.at("version"), 5);
  EXPECT_DOUBLE_EQ(j.at("wall_seconds").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j.at("process_cpu_seconds").get<double>(), 0.5);
  EXPECT_EQ(j.at("counter_hz").get<std::uint64_t>(), 1'000'000'000u);
  ASSERT_EQ(j.at("classes").size(), 2u) << json;
  const nlohmann::json& jq = j["classes"][0];
  const nlohmann::json& jb = j["classes"][1];
  EXPECT_EQ(jq.at("name"), "test.quiet");
  EXPECT_EQ(jq.at("acquisitions"), 10);
  EXPECT_EQ(jq.at("contended"), 0);
  EXPECT_EQ(jq.at("wait_ticks"), 0);
  EXPECT_EQ(jb.at("name"), "test.report \"quoted\"");
  const std::pair<const char*, std::uint64_t> counters[] = {
      {"acquisitions", 200},      {"contended", 8}, {"spin_rounds", 40}, {"relaxes", 1200},
      {"spin_ticks", 50'000'000}, {"yields", 3},    {"os_waits", 2},     {"wait_ticks", 80'000},
      {"max_wait_ticks", 30'000}, {"spin_won", 6},  {"upgrades", 0}};
  for (const auto& [key, value] : counters) {
    ASSERT_TRUE(jb.contains(key)) << key;
    EXPECT_EQ(jb[key].get<std::uint64_t>(), value) << key;
  }
  const std::pair<const char*, double> derived[] = {
      {"spin_rounds_per_wait", 5.0},   {"spin_efficiency", 0.75},
      {"contended_share", 0.04},       {"spin_ns", 5e7},
      {"spin_cpu_share", 0.1},         {"wait_ns", 80'000.0},
      {"mean_wait_ns", 10'000.0},      {"max_wait_ns", 30'000.0},
      {"p50_wait_ns_upper", 16'383.0}, {"p99_wait_ns_upper", 32'767.0}};
  for (const auto& [key, value] : derived) {
    ASSERT_TRUE(jb.contains(key)) << key;
    EXPECT_DOUBLE_EQ(jb[key].get<double>(), value) << key;
  }
  const nlohmann::json& hist = jb.at("wait_histogram_log2_ticks");
  ASSERT_EQ(hist.size(), sw::kWaitHistogramBuckets);
  for (std::size_t b = 0; b < sw::kWaitHistogramBuckets; ++b)
    EXPECT_EQ(hist[b].get<std::uint64_t>(), t.histogram[b]) << b;
  ASSERT_TRUE(jb.contains("modes"));
  EXPECT_EQ(jb.at("modes").size(), 1u) << "a totals object without per-mode counts lists x alone";
  EXPECT_EQ(jb.size(), 1 + std::size(counters) + std::size(derived) + 1 + 1)
      << "fields added or lost: " << jb.dump();

  // Text: the header, then three lines per class, longest total wait first, read back by value.
  const std::vector<std::string> lines = lines_of(sw::format_stats_text(s));
  ASSERT_EQ(lines.size(), 4u + 2 * 3) << sw::format_stats_text(s);
  EXPECT_EQ(lines[1], "SEMAPHORES");
  EXPECT_EQ(lines[3], "spinwise lock classes: 2; interval 2.500 s wall, 0.500 s process CPU");
  text_class b;
  ASSERT_TRUE(parse_text_class(lines, 4, b));
  EXPECT_EQ(b.name, "test.report \"quoted\"") << "the class that waited longest comes first";
  EXPECT_EQ(b.spin_waits, 8u);
  EXPECT_EQ(b.rounds, 40u);
  EXPECT_EQ(b.os_waits, 2u);
  EXPECT_EQ(b.yields, 3u);
  EXPECT_EQ(b.spin_won, 6u);
  expect_printed(b.efficiency_percent, 75.0, 0.1, "spin efficiency");
  EXPECT_EQ(b.relaxes, 1200u);
  EXPECT_EQ(b.acquisitions, 200u);
  expect_printed(b.rounds_per_wait, 5.0, 0.01, "spin rounds per wait");
  expect_printed(b.spin_ns, 5e7, 0.01e6, "spin time");
  expect_printed(b.cpu_percent, 10.0, 0.1, "spin share of process CPU");
  expect_printed(b.contended_percent, 4.0, 0.01, "contended share");
  expect_printed(b.wait_ns, 80'000, 10, "wait total");
  expect_printed(b.mean_ns, 10'000, 10, "mean wait");
  expect_printed(b.max_ns, 30'000, 10, "max wait");
  expect_printed(b.p50_ns, 16'383, 10, "p50");
  expect_printed(b.p99_ns, 32'767, 10, "p99");
  text_class q;
  ASSERT_TRUE(parse_text_class(lines, 7, q));
  EXPECT_EQ(q.name, "test.quiet");
  EXPECT_EQ(q.acquisitions, 10u);
  EXPECT_EQ(q.spin_waits + q.rounds + q.os_waits + q.yields + q.relaxes, 0u);
  EXPECT_EQ(q.rounds_per_wait, 0.0);
  EXPECT_EQ(q.contended_percent, 0.0);
  EXPECT_EQ(q.wait_ns, 0.0);
  EXPECT_EQ(q.p99_ns, 0.0);
}

namespace {

SPINWISE_TEST_STATS_CLASS(clip_class, "test.clip");

// A Relax that says each relax costs 10 ns but is descheduled for 5 ms whenever it runs: what a
// spinning thread preempted in the middle of its delay looks like to the counter.
struct preempted_relaxer {
  static constexpr double relax_ns() noexcept { return 10.0; }
  static void relax_n(std::uint32_t) noexcept { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }
};

struct preempted_waiter {
  using relax = preempted_relaxer;
  void snooze() noexcept {
    relax::relax_n(100);
    relaxes_ += 100;
    ++rounds_;
  }
  std::uint32_t rounds() const noexcept { return rounds_; }
  std::uint64_t relaxes() const noexcept { return relaxes_; }

 private:
  std::uint64_t relaxes_ = 0;
  std::uint32_t rounds_ = 0;
};

}  // namespace

TEST(LockStats, PreemptedSnoozeCountsAtItsRelaxCost) {
  using meter = sw::detail::wait_meter<sw::class_stats<clip_class>>;
  const double hz = static_cast<double>(sw::counter_frequency());
  meter m(nullptr, sw::lock_mode::x, {});
  preempted_waiter w;
  m.snooze(w);
  m.snooze(w);
  // Two snoozes of 100 relaxes x 10 ns: 2 us of spinning, not the 10 ms spent asleep.
  const auto expected = static_cast<std::uint64_t>(100 * 10e-9 * hz);
  EXPECT_NEAR(static_cast<double>(m.r.spin_ticks), 2.0 * static_cast<double>(expected), 2.0);
  EXPECT_LT(static_cast<double>(m.r.spin_ticks), 5e-3 * hz);
}

TEST(LockStats, ClipKeepsASnoozeWithinTwiceItsCostPlus50us) {
  using meter = sw::detail::wait_meter<sw::class_stats<clip_class>>;
  const double hz = 1e9;  // 1 tick = 1 ns
  // 1000 relaxes of 2 ticks: expected 2000 ticks, limit 2 x 2000 + 50000.
  EXPECT_EQ(meter::clip_preempted(2000, 1000, 2.0, hz), 2000u);    // as expected
  EXPECT_EQ(meter::clip_preempted(54000, 1000, 2.0, hz), 54000u);  // slow, at the limit: measured
  EXPECT_EQ(meter::clip_preempted(54001, 1000, 2.0, hz), 2000u);   // beyond: preempted, clipped
  EXPECT_EQ(meter::clip_preempted(10'000'000, 0, 2.0, hz), 0u);    // a zero-length round asleep
}

// Bug guarded: sx_lock's upgrades (SX -> X, 20,000 in a trial) were counted nowhere and so in no
// report. Each upgrade counts once, under mode x, and is no acquisition; downgrades are not
// upgrades; with counting switched off nothing is counted. The text, the JSON and the Prometheus
// exposition all show the count.
TEST(LockStats, UpgradesAreCountedAndReported) {
  using latch = sw::sx_lock::with_stats<upgrade_class>;
  latch l;
  const sw::stats_snapshot before = sw::take_stats_snapshot();
  for (int i = 0; i < 3; ++i) {
    l.lock_sx();
    l.upgrade();
    l.downgrade();
    l.unlock_sx();
  }
  l.lock_sx();
  l.upgrade();
  l.unlock();
  latch::stats::set_counting(false);
  l.lock_sx();
  l.upgrade();  // not counted
  l.unlock();
  latch::stats::set_counting(true);
  const sw::stats_snapshot d = sw::diff_stats(before, sw::take_stats_snapshot());
  const sw::lock_class_stats* c = find_class(d, upgrade_class::name);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->totals.upgrades, 4u);
  EXPECT_EQ(c->totals.mode(sw::lock_mode::x).upgrades, 4u);
  EXPECT_EQ(c->totals.mode(sw::lock_mode::sx).upgrades, 0u);
  EXPECT_EQ(c->totals.acquisitions, 4u) << "an upgrade is no acquisition";

  sw::stats_snapshot only;
  only.counter_hz = d.counter_hz;
  only.classes = {*c};
  const std::string text = sw::format_stats_text(only);
  EXPECT_NE(text.find("\n  Upgrades SX -> X 4 (not acquisitions)\n"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(sw::format_stats_json(only)).at("classes").at(0);
  EXPECT_EQ(j.at("upgrades"), 4);
  EXPECT_EQ(j.at("modes").at("x").at("upgrades"), 4);
  EXPECT_EQ(j.at("modes").at("sx").at("upgrades"), 0);
  const std::string prom = sw::format_stats_prometheus(only);
  EXPECT_NE(prom.find("\nspinwise_lock_upgrades_total{class=\"test.upgrades\",mode=\"x\"} 4\n"),
            std::string::npos)
      << prom;

  // A class without upgrades (every mutex) has no upgrade line.
  only.classes[0].totals.upgrades = 0;
  EXPECT_EQ(sw::format_stats_text(only).find("Upgrades"), std::string::npos);
}
