// Knobs from configuration (spinwise::runtime): load_knobs files, SPINWISE_KNOBS and SPINWISE_RELAX
// through the start-up call, and profile_status in the spinwise error category.
#include "spinwise/runtime/knob_config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <system_error>
#include <vector>

#include "calibration/test_util.hpp"
#include "knob_test_util.hpp"

namespace sw = spinwise;
using knob_test::snapshot;
using spinwise_test::temp_dir;
using spinwise_test::write_file;

namespace {

class KnobConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    knob_test::reset_all();
    for (const char* v : {"SPINWISE_KNOBS", "SPINWISE_PROFILE", "SPINWISE_RELAX"}) ::unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(KnobConfig, LoadsAFile) {
  temp_dir dir;
  const std::string path = dir / "spinwise.conf";
  write_file(path,
             "# spinwise knobs of the engine\n"
             "hybrid_mutex.spin_wait_delay = 6\n"
             "\n"
             "   time.delay_unit_ns=150   # measured on this machine\n"
             "exp_backoff.min_delay_ns = 64\n");
  const sw::knob_config_status st = sw::load_knobs(path);
  ASSERT_TRUE(st) << st.message;
  EXPECT_EQ(st.applied, 3u);
  EXPECT_TRUE(sw::hybrid_mutex::policy::overridden());
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u);
  EXPECT_EQ(sw::exp_backoff_policy<>::min_delay_ns(), 64u);
}

// Bug guarded: a file applied up to its bad line.
TEST_F(KnobConfig, ABadFileChangesNothingAndNamesTheLine) {
  temp_dir dir;
  const std::string path = dir / "bad.conf";
  write_file(path, "time.delay_unit_ns = 150\n# comment\nsx_lock.spin_wait_delay = 2000\n");
  const std::vector<std::string> before = snapshot();
  const sw::knob_config_status st = sw::load_knobs(path);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(st.code, sw::errc::knob_out_of_range);
  EXPECT_EQ(st.line, 3u);
  EXPECT_EQ(st.key, "sx_lock.spin_wait_delay");
  EXPECT_EQ(st.message.rfind(path + ":3: sx_lock.spin_wait_delay = 2000", 0), 0u) << st.message;
  EXPECT_NE(st.message.find("0..1000"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("no knob was changed"), std::string::npos) << st.message;
}

TEST_F(KnobConfig, MissingAndUnreadableFiles) {
  const std::vector<std::string> before = snapshot();
  temp_dir dir;
  const sw::knob_config_status missing = sw::load_knobs(dir / "nope.conf");
  EXPECT_EQ(missing.code, sw::errc::knob_file_not_found);
  EXPECT_EQ(missing.error_code(), std::errc::no_such_file_or_directory);
  EXPECT_NE(missing.message.find("nope.conf"), std::string::npos);
  const sw::knob_config_status directory = sw::load_knobs(dir.path());
  EXPECT_EQ(directory.code, sw::errc::knob_file_unreadable);
  EXPECT_NE(directory.message.find("is a directory"), std::string::npos) << directory.message;
  const std::string big = dir / "big.conf";
  write_file(big, std::string(sw::kMaxKnobFileBytes + 1, '#'));
  const sw::knob_config_status too_big = sw::load_knobs(big);
  EXPECT_EQ(too_big.code, sw::errc::knob_file_unreadable);
  EXPECT_NE(too_big.message.find("is larger than"), std::string::npos) << too_big.message;
  // Bug guarded: a FIFO with no writer made the loader block in open() for ever (a start-up that
  // hangs); now only regular files are read.
  const std::string fifo = dir / "knobs.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const sw::knob_config_status pipe = sw::load_knobs(fifo);
  EXPECT_EQ(pipe.code, sw::errc::knob_file_unreadable);
  EXPECT_NE(pipe.message.find("is not a regular file"), std::string::npos) << pipe.message;
  EXPECT_EQ(snapshot(), before);
}

TEST_F(KnobConfig, StartUpCallAppliesKnobsFromTheEnvironment) {
  ::setenv("SPINWISE_KNOBS", "hybrid_mutex.spin_wait_delay=5, time.delay_unit_ns=150", 1);
  const sw::startup_status st = sw::configure_from_env();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(st.error_code());
  EXPECT_EQ(st.profile.code, sw::profile_errc::not_set);
  EXPECT_EQ(st.knobs.applied, 2u);
  EXPECT_EQ(sw::hybrid_mutex::policy::spin_wait_delay(), 5u);
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u);
  EXPECT_TRUE(st.relax.ok());
  EXPECT_FALSE(st.relax.set);
  const std::string m = st.notes();
  EXPECT_NE(m.find("spinwise profile: SPINWISE_PROFILE is not set"), std::string::npos) << m;
  EXPECT_NE(m.find("spinwise knobs: SPINWISE_KNOBS applied 2 knobs"), std::string::npos) << m;
  EXPECT_NE(m.find("spinwise relax: SPINWISE_RELAX is not set"), std::string::npos) << m;
}

// Bug guarded: message() carried every part's outcome, so the documented
// `if (!st.ok()) log_warning(st.message())` logged "SPINWISE_PROFILE is not set" and "SPINWISE_RELAX
// is not set" beside the real problem. message() now holds the failed parts only (empty when
// ok()); notes() keeps every part's outcome for an informational log.
TEST_F(KnobConfig, StartUpMessageCarriesOnlyProblems) {
  ::setenv("SPINWISE_KNOBS", "time.delay_unit_ns=150", 1);
  sw::startup_status st = sw::configure_from_env();
  EXPECT_TRUE(st.ok()) << st.notes();
  EXPECT_EQ(st.message(), "");
  EXPECT_NE(st.notes().find("SPINWISE_PROFILE is not set"), std::string::npos) << st.notes();
  EXPECT_NE(st.notes().find("SPINWISE_RELAX is not set"), std::string::npos) << st.notes();

  // One problem: one line, that part's, and no note about the unset variables.
  ::setenv("SPINWISE_RELAX", "paus", 1);
  st = sw::configure_from_env();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "spinwise relax: " + st.relax.message);
  EXPECT_EQ(st.message().find("is not set"), std::string::npos) << st.message();

  // Two: a line each, in the parts' order.
  temp_dir dir;
  ::setenv("SPINWISE_PROFILE", (dir / "missing.json").c_str(), 1);
  st = sw::configure_from_env();
  EXPECT_EQ(st.message(),
            "spinwise profile: " + st.profile.message + "\nspinwise relax: " + st.relax.message);
}

TEST_F(KnobConfig, StartUpCallWithNothingSet) {
  const std::vector<std::string> before = snapshot();
  const sw::startup_status st = sw::configure_from_env();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(st.message(), "") << "nothing set is nothing to warn about";
  EXPECT_EQ(st.knobs.applied, 0u);
  EXPECT_EQ(snapshot(), before);
}

// Bug guarded: a bad SPINWISE_KNOBS half-applied, or a failing profile skipping the knobs.
TEST_F(KnobConfig, StartUpCallReportsEachPartOnItsOwn) {
  temp_dir dir;
  ::setenv("SPINWISE_PROFILE", (dir / "missing.json").c_str(), 1);
  ::setenv("SPINWISE_KNOBS", "time.delay_unit_ns=150,ttas_mutex.spin_loop=3", 1);
  const std::vector<std::string> before = snapshot();
  sw::startup_status st = sw::configure_from_env();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.profile.code, sw::profile_errc::not_found);
  EXPECT_EQ(st.error_code(), sw::profile_errc::not_found);  // the first failure
  EXPECT_EQ(st.knobs.code, sw::errc::unknown_knob);
  EXPECT_EQ(st.knobs.key, "ttas_mutex.spin_loop");
  EXPECT_EQ(snapshot(), before);
  EXPECT_NE(st.message().find("spinwise knobs: SPINWISE_KNOBS entry 2: ttas_mutex.spin_loop"),
            std::string::npos)
      << st.message();

  // The knobs apply even though the profile failed.
  ::setenv("SPINWISE_KNOBS", "time.delay_unit_ns=150", 1);
  st = sw::configure_from_env();
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(st.knobs.ok());
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u);
}

// Bug guarded: SPINWISE_RELAX with a typo or a kind this CPU cannot issue was ignored silently.
TEST_F(KnobConfig, RelaxVariableIsReported) {
  ::setenv("SPINWISE_RELAX", "paus", 1);
  sw::startup_status st = sw::configure_from_env();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.relax.code, sw::errc::relax_unknown);
  EXPECT_TRUE(st.relax.set);
  EXPECT_EQ(st.error_code(), sw::errc::relax_unknown);
  EXPECT_NE(st.relax.message.find("'paus' names no relax kind"), std::string::npos) << st.relax.message;
  EXPECT_NE(st.relax.message.find(std::string(sw::to_string(sw::active_relax()))), std::string::npos);

  // A kind this CPU cannot issue, where there is one.
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (sw::relax_supported(k)) continue;
    ::setenv("SPINWISE_RELAX", std::string(sw::to_string(k)).c_str(), 1);
    const sw::relax_env_report r = sw::check_relax_env();
    EXPECT_EQ(r.code, sw::errc::relax_unsupported) << r.message;
    EXPECT_EQ(r.error_code(), std::errc::not_supported);
    EXPECT_NE(r.message.find("cannot issue"), std::string::npos) << r.message;
    break;
  }

  // The active kind: usable, reported as applied.
  ::setenv("SPINWISE_RELAX", std::string(sw::to_string(sw::active_relax())).c_str(), 1);
  const sw::relax_env_report ok = sw::check_relax_env();
  EXPECT_TRUE(ok.ok()) << ok.message;
  EXPECT_NE(ok.message.find("applied"), std::string::npos) << ok.message;
}

TEST(ProfileErrors, ProfileStatusConvertsToTheSpinwiseCategory) {
  temp_dir dir;
  const sw::profile_status st = sw::load_profile(dir / "missing.json");
  ASSERT_EQ(st.code, sw::profile_errc::not_found);
  const std::error_code ec = st;
  EXPECT_EQ(&ec.category(), &sw::error_category());
  EXPECT_EQ(ec.value(), sw::kProfileErrcBase + static_cast<int>(sw::profile_errc::not_found));
  EXPECT_EQ(ec, sw::profile_errc::not_found);
  EXPECT_EQ(ec, std::errc::no_such_file_or_directory);
  EXPECT_EQ(ec.message(), "profile not found");
  EXPECT_NE(st.message.find("missing.json"), std::string::npos);  // the message is kept
  EXPECT_EQ(sw::make_error_code(sw::profile_errc::malformed).message(), "profile malformed");
  EXPECT_EQ(sw::make_error_code(sw::profile_errc::rejected).message(), "profile rejected");
  EXPECT_FALSE(sw::profile_status{}.error_code());
}

}  // namespace
