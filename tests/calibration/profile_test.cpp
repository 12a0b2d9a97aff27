// Profiles: the round trip, each kind of bad profile (with nothing applied), and the
// SPINWISE_PROFILE start-up path engines use.
#include "spinwise/runtime/profile.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/atomic_file.hpp"
#include "spinwise/spinwise.hpp"
#include "test_util.hpp"

namespace sw = spinwise;
using spinwise_test::read_file;
using spinwise_test::temp_dir;
using spinwise_test::write_file;

namespace {

// A profile of this machine (so the machine check passes) with made-up, distinct costs:
// cpu c costs base + 0.5 c ns for every supported relax kind.
sw::calibration_result make_profile(double base_ns = 13.0, std::vector<sw::relax_kind> kinds = {}) {
  if (kinds.empty()) {
    for (sw::relax_kind k : sw::kAllRelaxKinds) {
      if (sw::relax_supported(k)) kinds.push_back(k);
    }
  }
  sw::calibration_result r;
  r.tool = "spinwise test";
  r.created = "2026-01-01T00:00:00Z";
  r.machine = sw::detect_machine();
  r.settings.quick = true;
  r.settings.trials = 15;
  r.settings.rounds = 1;
  r.settings.trial_ns = 2000;
  r.settings.cycles_used = "estimate";
  r.settings.perf_error = "not tried";
  r.topo.source = "test";
  r.topo.packages = 1;
  r.topo.cores = r.machine.cpu_count;
  r.topo.numa_nodes = 1;
  sw::core_kind all;
  all.name = "all";
  all.infos.emplace_back("CoreType", "Test");
  for (int c = 0; c < r.machine.cpu_count; ++c) {
    sw::topology_cpu tc;
    tc.cpu = c;
    tc.package = 0;
    tc.core = c;
    tc.numa_node = 0;
    tc.smt_siblings = {c};
    r.topo.cpus.push_back(tc);
    all.cpus.push_back(c);
  }
  r.topo.core_kinds.push_back(all);
  r.topo.caches.push_back({1, "data", 48 * 1024, 64, r.machine.cpu_count, 1});
  r.topo.numa_distances = {{10}};
  for (int c = 0; c < r.machine.cpu_count; ++c) {
    sw::cpu_calibration cc;
    cc.cpu = c;
    cc.core_hz = 3.0e9;
    cc.ticks_per_cycle = 0.766;
    cc.chain_check = 2.01;
    cc.core_clock_plausible = true;
    for (sw::relax_kind k : kinds) {
      sw::relax_measurement m;
      m.kind = k;
      m.trials = 15;
      m.relaxes_per_trial = 300;
      m.ns_median = base_ns + 0.5 * c;
      m.ticks.n = 15;
      m.ticks.median = m.ns_median * 2.3;
      m.ticks.min = m.ticks.p10 = m.ticks.median * 0.99;
      m.ticks.p90 = m.ticks.max = m.ticks.median * 1.01;
      m.ticks.median_lo = m.ticks.median * 0.995;
      m.ticks.median_hi = m.ticks.median * 1.005;
      m.ticks.spread = 0.02;
      m.ticks.status = sw::stability::stable;
      m.cycles_median = m.ns_median * 3.0;
      m.cycles_method = "estimate";
      cc.relax.push_back(m);
    }
    r.cpus.push_back(cc);
  }
  r.has_c2c = true;
  r.c2c.cpus = {0, 1};
  r.c2c.one_way_ns = {-1, 62.5, 62.5, -1};
  r.c2c.method = "test";
  r.warnings = {"an example warning"};
  sw::summarize_kinds(r);
  sw::derive_recommendations(r);
  return r;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << "test setup: '" << from << "' not in the profile";
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

// Process state a profile changes.
struct state {
  bool installed;
  double here;
  std::uint64_t hz;
  bool operator==(const state& o) const { return installed == o.installed && here == o.here && hz == o.hz; }
};

state snapshot() { return {sw::relax_ns_installed(), sw::relax_ns_here(), sw::counter_frequency()}; }

// Pins the test thread to one CPU so relax_ns_here() reads a known table entry.
class pin_first_cpu {
 public:
  pin_first_cpu() : cpu(first_allowed()), pin_(cpu) {}
  const int cpu;

 private:
  static int first_allowed() {
    const std::vector<int> cpus = sw::runtime::allowed_cpus();
    return cpus.empty() ? 0 : cpus.front();
  }
  sw::runtime::scoped_pin pin_;
};

class Profile : public ::testing::Test {
 protected:
  void SetUp() override {
    hz_ = sw::counter_frequency();
    sw::clear_relax_ns();
  }
  void TearDown() override {
    sw::clear_relax_ns();
    sw::set_counter_frequency(hz_);
  }
  std::uint64_t hz_ = 0;
};

}  // namespace

// Guards against a writer and a reader that disagree: every field written must read back, and
// writing the read-back profile must give the same document, byte for byte.
TEST_F(Profile, RoundTripIsExact) {
  const sw::calibration_result p = make_profile();
  const std::string text = sw::profile_to_json(p);
  sw::calibration_result q;
  const sw::profile_status st = sw::parse_profile(text, q);
  ASSERT_TRUE(st) << st.message;
  EXPECT_EQ(sw::profile_to_json(q), text);
  EXPECT_EQ(q.machine.cpu_model, p.machine.cpu_model);
  EXPECT_EQ(q.machine.counter_hz, p.machine.counter_hz);
  ASSERT_EQ(q.cpus.size(), p.cpus.size());
  EXPECT_EQ(q.cpus.back().relax.front().ns_median, p.cpus.back().relax.front().ns_median);
  EXPECT_EQ(q.cpus.back().relax.front().ticks.median_lo, p.cpus.back().relax.front().ticks.median_lo);
  EXPECT_EQ(q.cpus.back().relax.front().ticks.median_hi, p.cpus.back().relax.front().ticks.median_hi);
  EXPECT_EQ(q.topo.core_kinds.at(0).infos, p.topo.core_kinds.at(0).infos);
  EXPECT_EQ(q.c2c.one_way_ns, p.c2c.one_way_ns);
  EXPECT_EQ(q.recommendations.size(), p.recommendations.size());
  EXPECT_EQ(sw::profile_to_json(q, -1).find('\n'), std::string::npos) << "indent -1 is one line";
}

// Guards against load_profile parsing but not applying, or applying another CPU's entry or the
// wrong counter rate.
TEST_F(Profile, LoadAppliesPerCpuCostsAndCounterRate) {
  temp_dir d;
  sw::calibration_result p = make_profile(20.0);
  p.machine.counter_hz = hz_ + hz_ / 200;  // 0.5% off: same machine, and visible when applied
  std::string why;
  ASSERT_TRUE(sw::write_profile(d / "p.json", p, &why)) << why;
  pin_first_cpu pin;
  const sw::profile_status st = sw::load_profile(d / "p.json");
  ASSERT_TRUE(st) << st.message;
  EXPECT_TRUE(sw::relax_ns_installed());
  EXPECT_FLOAT_EQ(static_cast<float>(sw::relax_ns_here()), static_cast<float>(20.0 + 0.5 * pin.cpu));
  EXPECT_EQ(sw::counter_frequency(), p.machine.counter_hz);
  EXPECT_EQ(sw::relaxes_for_ns(2000.0 + 100.0 * pin.cpu), 100u);
}

// Guards against a profile of a subset of CPUs leaving the others at the quick estimate: CPUs of
// a measured core kind get their kind's median.
TEST_F(Profile, UnmeasuredCpusGetTheirKindsMedian) {
  sw::calibration_result p = make_profile(10.0);
  if (p.cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  pin_first_cpu pin;
  ASSERT_LT(static_cast<std::size_t>(pin.cpu), p.cpus.size());
  p.cpus.erase(p.cpus.begin() + pin.cpu);  // drop the CPU we run on
  ASSERT_TRUE(sw::apply_profile(p));
  std::vector<double> others;
  for (const auto& c : p.cpus) others.push_back(c.relax.front().ns_median);
  std::sort(others.begin(), others.end());
  const std::size_t m = others.size() / 2;
  const double median = others.size() % 2 ? others[m] : 0.5 * (others[m - 1] + others[m]);
  EXPECT_FLOAT_EQ(static_cast<float>(sw::relax_ns_here()), static_cast<float>(median));
}

// Guards against a profile that sets a knob: the profile carries a recommended delay_unit_ns
// (here for a 400 ns target, and one recommended at the library's default) and applying it changes
// the relax table and the counter rate only; every policy's knobs, process-wide and a lock's own,
// stay what the engine set (docs/profile-format.md, "What applying changes").
TEST_F(Profile, ApplyingSetsNoKnob) {
  ASSERT_TRUE(sw::sx_lock::policy::set_delay_unit_ns(120).ok());  // an engine's own setting
  const auto time_before = sw::time_policy<>::current();
  const auto sx_before = sw::sx_lock::policy::current();
  const auto innodb_before = sw::innodb_policy<>::current();
  const auto exp_before = sw::exp_backoff_policy<>::current();
  for (double target : {400.0, 0.0}) {
    sw::calibration_result p = make_profile(20.0);
    p.settings.target_ns = target;
    p.settings.target_reason.clear();
    sw::derive_recommendations(p);
    // The generic backend's kinds (none, barrier) are trivial: no recommendation to check there,
    // but its profile still must set no knob when applied.
    const bool real_relax =
        std::any_of(p.summaries.begin(), p.summaries.end(), [](const sw::kind_summary& s) {
          return s.relax != sw::relax_kind::none && s.relax != sw::relax_kind::barrier;
        });
    ASSERT_EQ(p.recommendations.empty(), !real_relax);
    if (real_relax) {
      EXPECT_EQ(p.recommendations.front().delay_unit_is_default, target == 0.0);
      EXPECT_EQ(p.recommendations.front().delay_unit_ns, target == 0.0 ? sw::kDefaultTargetNs : target);
    }
    sw::clear_relax_ns();
    const sw::profile_status st = sw::load_profile_text(sw::profile_to_json(p));
    ASSERT_TRUE(st) << st.message;
    EXPECT_TRUE(sw::relax_ns_installed());
    const auto time_after = sw::time_policy<>::current();
    EXPECT_EQ(std::memcmp(&time_before, &time_after, sizeof time_before), 0)
        << "time_policy<>'s knobs changed";
    const auto sx_after = sw::sx_lock::policy::current();
    EXPECT_EQ(sx_after.delay_unit_ns, 120u);
    EXPECT_EQ(std::memcmp(&sx_before, &sx_after, sizeof sx_before), 0) << "sx_lock's knobs changed";
    const auto innodb_after = sw::innodb_policy<>::current();
    const auto exp_after = sw::exp_backoff_policy<>::current();
    EXPECT_EQ(std::memcmp(&innodb_before, &innodb_after, sizeof innodb_before), 0);
    EXPECT_EQ(std::memcmp(&exp_before, &exp_after, sizeof exp_before), 0);
  }
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 200u);
  sw::sx_lock::policy::reset();
}

namespace {

struct bad_case {
  const char* name;
  std::string text;
  sw::profile_errc code;
};

std::vector<bad_case> bad_cases(const std::string& good, const std::string& cpu_model) {
  std::vector<bad_case> v;
  v.push_back({"empty", "", sw::profile_errc::empty});
  v.push_back({"whitespace", "  \n\t\n", sw::profile_errc::empty});
  v.push_back({"truncated half", good.substr(0, good.size() / 2), sw::profile_errc::truncated});
  v.push_back({"truncated last brace", good.substr(0, good.rfind('}')), sw::profile_errc::truncated});
  v.push_back({"not json", "spinwise profile v1\n", sw::profile_errc::malformed});
  v.push_back({"mismatched brackets", "{]", sw::profile_errc::malformed});
  v.push_back({"binary", std::string("\x00\xff\xfe{\"a\":1}", 10), sw::profile_errc::malformed});
  v.push_back({"trailing garbage", good + "}", sw::profile_errc::malformed});
  v.push_back({"deep nesting", std::string(200, '[') + std::string(200, ']'), sw::profile_errc::malformed});
  v.push_back({"not an object", "[1, 2, 3]", sw::profile_errc::wrong_version});
  v.push_back({"other format", replace_once(good, "\"spinwise-profile\"", "\"other-profile\""),
               sw::profile_errc::wrong_version});
  v.push_back(
      {"version 2", replace_once(good, "\"version\": 1", "\"version\": 2"), sw::profile_errc::wrong_version});
  v.push_back({"version as string", replace_once(good, "\"version\": 1", "\"version\": \"1\""),
               sw::profile_errc::wrong_version});
  v.push_back({"no version", replace_once(good, "\"version\": 1,", ""), sw::profile_errc::wrong_version});
  v.push_back({"cost not a number", replace_once(good, "\"ns_median\": 13.0", "\"ns_median\": \"13\""),
               sw::profile_errc::invalid});
  v.push_back({"negative cost", replace_once(good, "\"ns_median\": 13.0", "\"ns_median\": -13.0"),
               sw::profile_errc::invalid});
  v.push_back({"absurd cost", replace_once(good, "\"ns_median\": 13.0", "\"ns_median\": 1e9"),
               sw::profile_errc::invalid});
  v.push_back({"median outside its interval",
               replace_once(good, "\"median_lo\": ", "\"median_lo\": 1e6, \"x\": "),
               sw::profile_errc::invalid});
  v.push_back({"unknown relax kind", replace_once(good, "\"kind\": \"none\"", "\"kind\": \"warp\""),
               sw::profile_errc::invalid});
  v.push_back({"cpu out of range",
               replace_once(good, "\"cpu\": 0,\n      \"core_kind\"", "\"cpu\": 99999,\n      \"core_kind\""),
               sw::profile_errc::invalid});
  v.push_back({"no machine", replace_once(good, "\"machine\":", "\"mashine\":"), sw::profile_errc::invalid});
  v.push_back({"counter rate zero", replace_once(good, "\"counter_hz\": ", "\"counter_hz\": 0, \"x\": "),
               sw::profile_errc::invalid});
  v.push_back({"broken c2c at the end", replace_once(good, "\"one_way_ns\": [", "\"one_way_ns\": [[1], "),
               sw::profile_errc::invalid});
  v.push_back({"other cpu model", replace_once(good, "\"cpu_model\": \"", "\"cpu_model\": \"Other "),
               sw::profile_errc::other_machine});
  v.push_back({"other arch", replace_once(good, "\"arch\": \"", "\"arch\": \"sparc-"),
               sw::profile_errc::other_machine});
  (void)cpu_model;
  return v;
}

}  // namespace

// Each kind of bad profile gets its own error, a message that says nothing changed, and changes
// nothing: neither a table installed before nor the counter rate.
TEST_F(Profile, BadProfilesChangeNothing) {
  const std::string good = sw::profile_to_json(make_profile(13.0));
  ASSERT_TRUE(sw::load_profile_text(good)) << "test setup: the good profile must load";
  pin_first_cpu pin;  // the snapshot reads this CPU's entry: no migration between two snapshots
  const sw::calibration_result installed = make_profile(40.0);
  for (bool with_table : {false, true}) {
    for (const bad_case& c : bad_cases(good, installed.machine.cpu_model)) {
      sw::clear_relax_ns();
      sw::set_counter_frequency(hz_);
      if (with_table) {
        ASSERT_TRUE(sw::apply_profile(installed));
      }
      const state before = snapshot();
      const sw::profile_status st = sw::load_profile_text(c.text);
      EXPECT_EQ(st.code, c.code) << c.name << ": " << st.message;
      EXPECT_FALSE(st.ok()) << c.name;
      EXPECT_NE(st.message.find("nothing was applied"), std::string::npos) << c.name << ": " << st.message;
      EXPECT_TRUE(snapshot() == before) << c.name << (with_table ? " (over an installed table)" : "");
    }
  }
}

TEST_F(Profile, OtherMachineByCountOrCounterRate) {
  sw::calibration_result p = make_profile();
  p.machine.cpu_count += 1;
  sw::profile_status st = sw::load_profile_text(sw::profile_to_json(p));
  EXPECT_EQ(st.code, sw::profile_errc::other_machine) << st.message;
  EXPECT_NE(st.message.find("CPUs"), std::string::npos) << st.message;
  p = make_profile();
  p.machine.counter_hz *= 2;
  st = sw::load_profile_text(sw::profile_to_json(p));
  EXPECT_EQ(st.code, sw::profile_errc::other_machine) << st.message;
  EXPECT_NE(st.message.find("MHz"), std::string::npos) << st.message;
  EXPECT_FALSE(sw::relax_ns_installed());
  // An operator inspecting a profile from elsewhere can skip the check (and apply nothing).
  sw::profile_load_options o;
  o.check_machine = false;
  o.apply = false;
  EXPECT_TRUE(sw::load_profile_text(sw::profile_to_json(p), o));
  EXPECT_FALSE(sw::relax_ns_installed());
}

// Guards against a profile measured with another relax kind being applied to this one (ISB costs
// applied to YIELD loops would be off by 10x or more).
TEST_F(Profile, ActiveKindMissingIsRefused) {
  sw::relax_kind other = sw::active_relax();
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (k != sw::active_relax() && sw::relax_supported(k)) other = k;
  }
  ASSERT_NE(other, sw::active_relax()) << "every backend supports two kinds";
  const sw::profile_status st = sw::load_profile_text(sw::profile_to_json(make_profile(13.0, {other})));
  EXPECT_EQ(st.code, sw::profile_errc::kind_missing) << st.message;
  EXPECT_NE(st.message.find(std::string(sw::to_string(sw::active_relax()))), std::string::npos) << st.message;
  EXPECT_FALSE(sw::relax_ns_installed());
}

TEST_F(Profile, TooLargeIsRefusedBeforeParsing) {
  const sw::profile_status st = sw::load_profile_text(std::string(sw::kMaxProfileBytes + 1, ' '));
  EXPECT_EQ(st.code, sw::profile_errc::too_large) << st.message;
}

TEST_F(Profile, FileErrors) {
  temp_dir d;
  sw::profile_status st = sw::load_profile(d / "missing.json");
  EXPECT_EQ(st.code, sw::profile_errc::not_found) << st.message;
  EXPECT_NE(st.message.find("missing.json"), std::string::npos) << st.message;
  st = sw::load_profile(d.path());
  EXPECT_EQ(st.code, sw::profile_errc::unreadable) << st.message;
  write_file(d / "trunc.json", sw::profile_to_json(make_profile()).substr(0, 200));
  st = sw::load_profile(d / "trunc.json");
  EXPECT_EQ(st.code, sw::profile_errc::truncated) << st.message;
  EXPECT_NE(st.message.find("trunc.json"), std::string::npos) << "the message names the file: " << st.message;
  EXPECT_FALSE(sw::relax_ns_installed());
}

// Guards against write_profile leaving a partial file behind (a reader would see "truncated").
TEST_F(Profile, WriteIsAtomicAndReportsFailures) {
  temp_dir d;
  std::string why;
  const sw::calibration_result p = make_profile();
  ASSERT_TRUE(sw::write_profile(d / "p.json", p, &why)) << why;
  EXPECT_EQ(read_file(d / "p.json"), sw::profile_to_json(p));
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u) << "no temporary file left behind";
  const std::string missing = d / "no/such/dir/p.json";
  EXPECT_FALSE(sw::write_profile(missing, p, &why));
  EXPECT_NE(why.find("cannot create " + missing + ": "), std::string::npos) << why;
  EXPECT_EQ(why.find(".tmp."), std::string::npos) << "names the file asked for, not its temporary: " << why;
}

// The one whole-file writer (profiles, spinwise-calibrate's documents, spinwise-stress's results):
// it replaces a file, writes through a link and leaves the link, and writes a device in place.
TEST(AtomicFile, ReplacesWritesThroughLinksAndLeavesDevicesAlone) {
  temp_dir d;
  std::string why;
  const std::string file = d / "r.json";
  ASSERT_TRUE(sw::write_file_atomically(file, "old", &why)) << why;
  ASSERT_TRUE(sw::write_file_atomically(file, "new", &why)) << why;
  EXPECT_EQ(read_file(file), "new");
  const std::string link = d / "link.json";
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  ASSERT_TRUE(sw::write_file_atomically(link, "through", &why)) << why;
  EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(read_file(file), "through");
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2u) << "no temporary file left behind";
  // A rename over /dev/null would leave a regular file there, for every process on the machine.
  ASSERT_TRUE(sw::write_file_atomically("/dev/null", "nothing", &why)) << why;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_FALSE(std::filesystem::exists("/dev/null.tmp." + std::to_string(::getpid())));
}

// The start-up path an engine uses: unset is not an error, a bad file is reported with its path.
TEST_F(Profile, EnvironmentVariable) {
  ::unsetenv("SPINWISE_PROFILE");
  sw::profile_status st = sw::load_profile_from_env();
  EXPECT_EQ(st.code, sw::profile_errc::not_set) << st.message;
  ::setenv("SPINWISE_PROFILE", "", 1);
  EXPECT_EQ(sw::load_profile_from_env().code, sw::profile_errc::not_set);
  temp_dir d;
  std::string why;
  ASSERT_TRUE(sw::write_profile(d / "p.json", make_profile(), &why)) << why;
  ::setenv("SPINWISE_PROFILE", (d / "p.json").c_str(), 1);
  st = sw::load_profile_from_env();
  EXPECT_TRUE(st) << st.message;
  EXPECT_TRUE(sw::relax_ns_installed());
  sw::clear_relax_ns();
  ::setenv("SPINWISE_PROFILE", (d / "nope.json").c_str(), 1);
  st = sw::load_profile_from_env();
  EXPECT_EQ(st.code, sw::profile_errc::not_found);
  EXPECT_FALSE(sw::relax_ns_installed());
  ::unsetenv("SPINWISE_PROFILE");
}

TEST(ProfileErrc, EveryCodeHasAName) {
  for (int i = 0; i <= static_cast<int>(sw::profile_errc::rejected); ++i) {
    EXPECT_NE(sw::to_string(static_cast<sw::profile_errc>(i)), "unknown") << i;
  }
}
