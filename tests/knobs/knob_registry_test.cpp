// The knob registry and the knob text parser, header-only (this binary does not link the runtime):
// every built-in class listed, registration, set/get reaching the lock's policy, every kind of bad
// entry refused with nothing changed, rules checked on a batch's final values, and the error
// category.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "knob_test_util.hpp"
#include "spinwise/knob_text.hpp"
#include "spinwise/spinwise.hpp"
#include "test_util.hpp"

namespace sw = spinwise;
using knob_test::snapshot;

namespace {

class KnobRegistry : public ::testing::Test {
 protected:
  void SetUp() override { knob_test::reset_all(); }
  void TearDown() override { knob_test::reset_all(); }
};

std::vector<std::string> class_names() {
  std::vector<std::string> v;
  sw::for_each_knob_class([&](const sw::knob_class& c) { v.emplace_back(c.name()); });
  return v;
}

// Bug guarded: a lock alias missing from the registry cannot be configured by an engine at all.
TEST_F(KnobRegistry, ListsEveryBuiltInClassAndFamily) {
  const std::vector<std::string> names = class_names();
  for (const char* n :
       {"hybrid_mutex", "hybrid_shared_mutex", "sx_lock", "spin_shared_mutex", "ttas_mutex", "tas_mutex",
        "ticket_mutex", "mcs_mutex", "innodb", "time", "exp_backoff", "no_backoff"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  // Each name once: an alias is not listed again.
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(std::find(names.begin(), names.end(), "rw_spinlock"), names.end());

  // Each class has its alias's policy, so the registry follows a change of an alias's default.
  EXPECT_EQ(sw::find_knob_class("hybrid_mutex")->policy(), sw::hybrid_mutex::policy::name());
  EXPECT_EQ(sw::find_knob_class("hybrid_shared_mutex")->policy(), sw::hybrid_shared_mutex::policy::name());
  EXPECT_EQ(sw::find_knob_class("sx_lock")->policy(), sw::sx_lock::policy::name());
  EXPECT_EQ(sw::find_knob_class("tas_mutex")->policy(), sw::tas_mutex::policy::name());
  EXPECT_EQ(sw::find_knob_class("mcs_mutex")->policy(), sw::mcs_mutex::policy::name());
  EXPECT_FALSE(sw::find_knob_class("hybrid_mutex")->process_wide());
  EXPECT_TRUE(sw::find_knob_class("time")->process_wide());

  const auto rw = sw::find_knob_class("rw_spinlock");
  ASSERT_TRUE(rw);
  EXPECT_EQ(rw->alias_of(), "spin_shared_mutex");
  EXPECT_FALSE(sw::find_knob_class("no_such_lock"));
}

TEST_F(KnobRegistry, DescribesKnobsAsTheSpecDoes) {
  const auto c = sw::find_knob_class("hybrid_mutex");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->size(), 3u);
  const sw::knob_info d = *c->find("spin_wait_delay");
  EXPECT_EQ(d.min, 0u);
  EXPECT_EQ(d.max, 1000u);
  EXPECT_EQ(d.def, 6u);
  EXPECT_EQ(d.value, sw::hybrid_mutex::policy::spin_wait_delay());
  EXPECT_FALSE(d.overridden);
  EXPECT_FALSE(c->find("pause_multiplier"));  // a time-policy class has no multiplier
  const sw::knob_info m = *sw::find_knob_class("innodb")->find("pause_multiplier");
  EXPECT_EQ(m.min, 1u);
  EXPECT_EQ(m.max, 100u);
  EXPECT_EQ(m.def, 50u);
  EXPECT_EQ(c->knob_names(), "spin_wait_delay, delay_unit_ns, spin_loops");
}

// Bug guarded: a registry whose setter wrote a copy, or the family instead of the Tag, would
// report success while the locks kept waiting as before.
TEST_F(KnobRegistry, SetAndGetReachTheLocksPolicy) {
  const auto hm = sw::find_knob_class("hybrid_mutex");
  ASSERT_TRUE(hm->set("spin_wait_delay", 9));
  EXPECT_EQ(sw::hybrid_mutex::policy::spin_wait_delay(), 9u);
  EXPECT_TRUE(sw::hybrid_mutex::policy::overridden());
  EXPECT_EQ(sw::time_policy<>::spin_wait_delay(), 6u);  // the family is untouched
  EXPECT_EQ(hm->get("spin_wait_delay"), 9u);
  EXPECT_TRUE(hm->find("spin_wait_delay")->overridden);
  EXPECT_FALSE(hm->find("delay_unit_ns")->overridden);

  ASSERT_TRUE(sw::find_knob_class("time")->set("delay_unit_ns", 150));
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u);
  EXPECT_EQ(sw::hybrid_mutex::policy::delay_unit_ns(), 150u);  // follows its family
  EXPECT_EQ(hm->get("delay_unit_ns"), 150u);

  // The alias reaches the same knobs.
  ASSERT_TRUE(sw::find_knob_class("rw_spinlock")->set("spin_loops", 7));
  EXPECT_EQ(sw::spin_shared_mutex::policy::spin_loops(), 7u);

  // reset(knob): the class follows its family again.
  ASSERT_TRUE(hm->reset("spin_wait_delay"));
  EXPECT_FALSE(sw::hybrid_mutex::policy::overridden());
  EXPECT_FALSE(hm->get("no_such_knob"));

  const sw::knob_status bad = hm->set("spin_wait_delay", 1001);
  EXPECT_EQ(bad.reason(), sw::errc::knob_out_of_range);
  EXPECT_EQ(sw::hybrid_mutex::policy::spin_wait_delay(), 6u);
}

struct engine_latch_tag;
using engine_latch = sw::sx_lock_t<sw::exp_backoff_policy<engine_latch_tag>>;
struct engine_mutex_tag;

// Bug guarded: registered classes kept per module (or not at all) would be invisible to the host.
TEST_F(KnobRegistry, RegistersAnEngineClassProcessWide) {
  ASSERT_TRUE(sw::register_knob_class<engine_latch>("engine_latch"));  // a lock type: its ::policy
  ASSERT_TRUE(sw::register_knob_class<sw::innodb_policy<engine_mutex_tag>>("engine_mutex"));  // a policy
  EXPECT_NE(sw::detail::process().knob_classes.load(), nullptr);

  const std::vector<std::string> names = class_names();
  const auto latch = std::find(names.begin(), names.end(), "engine_latch");
  const auto mutex = std::find(names.begin(), names.end(), "engine_mutex");
  ASSERT_NE(latch, names.end());
  ASSERT_NE(mutex, names.end());
  EXPECT_LT(latch, mutex);  // in registration order, after the built-ins
  EXPECT_LT(std::find(names.begin(), names.end(), "no_backoff"), latch);

  const auto c = sw::find_knob_class("engine_latch");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->builtin());
  EXPECT_EQ(c->policy(), "exp_backoff");
  ASSERT_TRUE(c->set("spin_loops", 3));
  EXPECT_EQ(engine_latch::policy::spin_loops(), 3u);
  EXPECT_EQ(sw::exp_backoff_policy<>::spin_loops(), 12u);

  ASSERT_TRUE(sw::apply_knobs("engine_mutex.pause_multiplier=20"));
  EXPECT_EQ(sw::innodb_policy<engine_mutex_tag>::pause_multiplier(), 20u);
  EXPECT_NE(sw::format_knob_table().find("engine_mutex.pause_multiplier"), std::string::npos);

  // Duplicates are refused, the first registration stays.
  const sw::knob_status dup = sw::register_knob_class<sw::time_policy<engine_mutex_tag>>("engine_mutex");
  EXPECT_EQ(dup.reason(), sw::errc::knob_class_exists);
  EXPECT_EQ(dup.error_code(), sw::errc::knob_class_exists);
  EXPECT_EQ(sw::find_knob_class("engine_mutex")->policy(), "innodb");
  EXPECT_EQ(sw::register_knob_class<engine_latch>("hybrid_mutex").reason(), sw::errc::knob_class_exists);
  EXPECT_EQ(sw::register_knob_class<engine_latch>("time").reason(), sw::errc::knob_class_exists);
  for (const char* bad : {"", "a.b", "a b", "x=y", "latch-1"}) {
    EXPECT_EQ(sw::register_knob_class<engine_latch>(bad).reason(), sw::errc::bad_knob_class_name) << bad;
  }
}

TEST_F(KnobRegistry, AppliesAListAndAFile) {
  const sw::knob_config_status st =
      sw::apply_knobs(" hybrid_mutex.spin_wait_delay=7 ,time.delay_unit_ns = 150,, innodb.spin_loops=0 ");
  ASSERT_TRUE(st) << st.message;
  EXPECT_EQ(st.applied, 3u);
  EXPECT_EQ(sw::hybrid_mutex::policy::spin_wait_delay(), 7u);
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u);
  EXPECT_EQ(sw::innodb_policy<>::spin_loops(), 0u);
  EXPECT_FALSE(st.error_code());

  const sw::knob_config_status file = sw::apply_knobs(
      "# engine knobs\n"
      "\n"
      "  sx_lock.spin_wait_delay = 4   # the hot page latch\n"
      "\tsx_lock.spin_loops=10\r\n"
      "exp_backoff.max_delay_ns = 4096\n"
      "   # the end\n",
      sw::knob_text_format::lines);
  ASSERT_TRUE(file) << file.message;
  EXPECT_EQ(file.applied, 3u);
  EXPECT_EQ(sw::sx_lock::policy::spin_wait_delay(), 4u);
  EXPECT_EQ(sw::sx_lock::policy::spin_loops(), 10u);
  EXPECT_EQ(sw::exp_backoff_policy<>::max_delay_ns(), 4096u);

  EXPECT_TRUE(sw::apply_knobs(""));
  EXPECT_TRUE(sw::apply_knobs("# nothing\n\n", sw::knob_text_format::lines));
}

// A key's semantics are Policy::set(name, value)'s: a class's knob becomes an override, and a
// class that sets one of exp_backoff's tied fields overrides both.
TEST_F(KnobRegistry, SettingAKeyIsPolicySet) {
  ASSERT_TRUE(sw::tas_mutex::policy::set("min_delay_ns", 64));
  const std::vector<std::string> by_policy = snapshot();
  knob_test::reset_all();
  ASSERT_TRUE(sw::apply_knobs("tas_mutex.min_delay_ns=64"));
  EXPECT_EQ(snapshot(), by_policy);
  EXPECT_TRUE(sw::find_knob_class("tas_mutex")->find("max_delay_ns")->overridden);
}

struct bad_case {
  const char* text;
  sw::knob_text_format format;
  sw::errc code;
  const char* key;
  std::size_t line;
  std::vector<const char*> says;  // substrings of the message
};

// Bug guarded: a batch applied up to its first bad entry leaves a process half-configured, and an
// error that does not name the key and its bounds sends an operator to the source code.
TEST_F(KnobRegistry, EveryKindOfBadEntryChangesNothing) {
  using F = sw::knob_text_format;
  const std::vector<bad_case> cases = {
      {"hybrid_mutex.spin_wait_delay=7,hybrid_mutx.spin_wait_delay=6",
       F::list,
       sw::errc::unknown_knob_class,
       "hybrid_mutx.spin_wait_delay",
       2,
       {"entry 2", "unknown knob class 'hybrid_mutx'", "known: tas_mutex, ttas_mutex"}},
      {"hybrid_mutex.spin_wait_delay=7,hybrid_mutex.pause_multiplier=6",
       F::list,
       sw::errc::unknown_knob,
       "hybrid_mutex.pause_multiplier",
       2,
       {"no knob 'pause_multiplier'", "spin_wait_delay, delay_unit_ns, spin_loops"}},
      {"time.delay_unit_ns=150\nhybrid_mutex.spin_wait_delay = 1001\n",
       F::lines,
       sw::errc::knob_out_of_range,
       "hybrid_mutex.spin_wait_delay",
       2,
       {"line 2", "1001", "0..1000"}},
      {"innodb.pause_multiplier=0",
       F::list,
       sw::errc::knob_out_of_range,
       "innodb.pause_multiplier",
       1,
       {"1..100"}},
      {"innodb.spin_loops=99999999999999999999",
       F::list,
       sw::errc::knob_out_of_range,
       "innodb.spin_loops",
       1,
       {"0..1000000"}},
      {"time.delay_unit_ns=150,hybrid_mutex.spin_wait_delay=six",
       F::list,
       sw::errc::knob_syntax,
       "hybrid_mutex.spin_wait_delay",
       2,
       {"'six' is not a number", "0..1000"}},
      {"time.spin_loops=-1", F::list, sw::errc::knob_syntax, "time.spin_loops", 1, {"not a number"}},
      {"time.spin_loops=", F::list, sw::errc::knob_syntax, "time.spin_loops", 1, {"not a number"}},
      {"time.spin_loops=1 2", F::list, sw::errc::knob_syntax, "time.spin_loops", 1, {"not a number"}},
      {"time.delay_unit_ns=150\n# ok\n\ntime.delay_unit_ns=160\n",
       F::lines,
       sw::errc::duplicate_knob,
       "time.delay_unit_ns",
       4,
       {"set twice", "line 1"}},
      {"spin_shared_mutex.spin_loops=5,rw_spinlock.spin_loops=6",
       F::list,
       sw::errc::duplicate_knob,
       "rw_spinlock.spin_loops",
       2,
       {"as spin_shared_mutex.spin_loops"}},
      {"exp_backoff.min_delay_ns=5000,exp_backoff.max_delay_ns=100",
       F::list,
       sw::errc::inconsistent_knobs,
       "exp_backoff.max_delay_ns",
       2,
       {"min_delay_ns must not exceed max_delay_ns", "5000", "100"}},
      {"time.delay_unit_ns=150,tas_mutex.min_delay_ns=5000",
       F::list,
       sw::errc::inconsistent_knobs,
       "tas_mutex.min_delay_ns",
       2,
       {"min_delay_ns must not exceed"}},
      {"time.delay_unit_ns=150,hybrid_mutex.spin_wait_delay",
       F::list,
       sw::errc::knob_syntax,
       "",
       2,
       {"is not <class>.<knob>=<value>"}},
      {"spin_wait_delay=6", F::list, sw::errc::knob_syntax, "spin_wait_delay", 1, {"is not <class>.<knob>"}},
      {".spin_wait_delay=6",
       F::list,
       sw::errc::knob_syntax,
       ".spin_wait_delay",
       1,
       {"is not <class>.<knob>"}},
  };
  // Set something first, so "nothing changed" is checked against non-default values too.
  ASSERT_TRUE(sw::apply_knobs("hybrid_mutex.spin_wait_delay=3,tas_mutex.spin_loops=2"));
  for (const bad_case& c : cases) {
    const std::vector<std::string> before = snapshot();
    const sw::knob_config_status checked = sw::check_knobs(c.text, c.format);
    const sw::knob_config_status st = sw::apply_knobs(c.text, c.format);
    EXPECT_EQ(snapshot(), before) << c.text;
    EXPECT_FALSE(st) << c.text;
    EXPECT_EQ(st.code, c.code) << c.text << ": " << st.message;
    EXPECT_EQ(checked.code, c.code) << c.text;
    EXPECT_EQ(st.key, c.key) << c.text;
    EXPECT_EQ(st.line, c.line) << c.text;
    EXPECT_EQ(st.applied, 0u);
    EXPECT_NE(st.message.find("no knob was changed"), std::string::npos) << st.message;
    if (c.key[0] != '\0') {
      EXPECT_NE(st.message.find(c.key), std::string::npos) << st.message;
    }
    for (const char* s : c.says)
      EXPECT_NE(st.message.find(s), std::string::npos) << st.message << " lacks " << s;
    EXPECT_EQ(st.error_code(), c.code);
    EXPECT_EQ(&st.error_code().category(), &sw::error_category());
  }
}

// Bug guarded: checking each entry against the values before the batch refuses batches whose
// final values are fine (raising min and max together) and accepts ones whose are not.
TEST_F(KnobRegistry, RulesHoldOnTheBatchsFinalValues) {
  ASSERT_TRUE(sw::apply_knobs("exp_backoff.min_delay_ns=3000,exp_backoff.max_delay_ns=4000"));
  EXPECT_EQ(sw::exp_backoff_policy<>::min_delay_ns(), 3000u);
  knob_test::reset_all();
  EXPECT_FALSE(sw::exp_backoff_policy<>::set_min_delay_ns(3000));  // alone it breaks the rule

  // A class is checked against its family's values as the batch leaves them, whatever the order.
  ASSERT_TRUE(sw::apply_knobs("tas_mutex.min_delay_ns=5000,exp_backoff.max_delay_ns=8000"));
  EXPECT_EQ(sw::tas_mutex::policy::min_delay_ns(), 5000u);
  EXPECT_EQ(sw::tas_mutex::policy::max_delay_ns(), 8000u);
  knob_test::reset_all();

  // And lowering the family's max under a class's new min is caught before anything is set.
  const std::vector<std::string> before = snapshot();
  const sw::knob_config_status st =
      sw::apply_knobs("exp_backoff.max_delay_ns=100,tas_mutex.min_delay_ns=200");
  EXPECT_EQ(st.code, sw::errc::inconsistent_knobs) << st.message;
  EXPECT_EQ(snapshot(), before);
}

// Bug guarded: a batch checked, then another batch moving the family's values, then the first
// batch's class word set against values it was not checked with (and failing half-way). Batches
// hold one process-wide lock from their check to their last word.
TEST_F(KnobRegistry, ConcurrentBatchesDoNotInterleave) {
  const int rounds = spinwise_test::scaled(20000, 2000);
  std::atomic<bool> stop{false};
  std::atomic<int> lowered{0};
  std::thread other([&] {
    while (!stop.load()) {
      EXPECT_TRUE(sw::apply_knobs("exp_backoff.max_delay_ns=100"));
      lowered.fetch_add(1);
    }
  });
  // Until both threads did work: each batch of this thread with the other one running.
  int failures = 0, done = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((done < rounds || lowered.load() < rounds) && std::chrono::steady_clock::now() < give_up) {
    sw::tas_mutex::policy::reset();  // so that its batch reads the family's max when it sets min
    const sw::knob_config_status st =
        sw::apply_knobs("exp_backoff.max_delay_ns=8000,tas_mutex.min_delay_ns=5000");
    if (!st) ++failures;
    ++done;
  }
  stop.store(true);
  other.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GE(lowered.load(), rounds);  // the other thread did run beside this one
}

TEST_F(KnobRegistry, CheckKnobsChangesNothing) {
  const std::vector<std::string> before = snapshot();
  const sw::knob_config_status st = sw::check_knobs("hybrid_mutex.spin_wait_delay=9,time.spin_loops=5");
  EXPECT_TRUE(st) << st.message;
  EXPECT_EQ(st.applied, 2u);
  EXPECT_EQ(snapshot(), before);
}

TEST(KnobErrors, StatusesConvertToTheSpinwiseCategory) {
  const std::error_category& cat = sw::error_category();
  EXPECT_STREQ(cat.name(), "spinwise");

  const sw::knob_status range = sw::time_policy<>::set_delay_unit_ns(0);
  EXPECT_EQ(range.reason(), sw::errc::knob_out_of_range);
  EXPECT_EQ(range.code(), std::errc::argument_out_of_domain);  // as before the category
  EXPECT_STREQ(range.message(), "time delay_unit_ns must be in 1..10000");
  const std::error_code ec = range;
  EXPECT_EQ(&ec.category(), &cat);
  EXPECT_EQ(ec, sw::errc::knob_out_of_range);
  EXPECT_EQ(ec, std::errc::argument_out_of_domain);  // equivalent to the generic condition
  EXPECT_EQ(ec.message(), "knob value out of range");

  const sw::knob_status unknown = sw::time_policy<>::set("pause_multiplier", 5);
  EXPECT_EQ(unknown.reason(), sw::errc::unknown_knob);
  EXPECT_EQ(unknown.code(), std::errc::invalid_argument);
  EXPECT_EQ(unknown.error_code(), std::errc::invalid_argument);

  const sw::knob_status inconsistent = sw::exp_backoff_policy<>::set_min_delay_ns(100'000);
  EXPECT_EQ(inconsistent.reason(), sw::errc::inconsistent_knobs);
  EXPECT_EQ(inconsistent.error_code().message(), "inconsistent knob values");

  const sw::knob_status ok = sw::time_policy<>::set_spin_loops(30);
  EXPECT_TRUE(ok);
  EXPECT_FALSE(ok.error_code());
  EXPECT_STREQ(ok.message(), "");

  EXPECT_EQ(sw::make_error_code(sw::errc::knob_file_not_found), std::errc::no_such_file_or_directory);
  EXPECT_EQ(sw::make_error_code(sw::errc::relax_unsupported), std::errc::not_supported);
  EXPECT_EQ(sw::make_error_code(sw::errc::unknown_knob_class).message(), "unknown knob class");
}

TEST_F(KnobRegistry, TableListsEveryKnob) {
  ASSERT_TRUE(sw::apply_knobs("hybrid_mutex.spin_wait_delay=9"));
  const std::string t = sw::format_knob_table();
  for (const char* s : {"hybrid_mutex.spin_wait_delay", "sx_lock.spin_loops", "time.delay_unit_ns",
                        "innodb.pause_multiplier", "exp_backoff.max_delay_ns", "no_backoff.spin_loops",
                        "0..1000", "override", "process-wide", "rw_spinlock"}) {
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  }
}

}  // namespace

// ---- a failed batch's rollback ----------------------------------------------------------------

namespace {

std::size_t field_index(const sw::detail::knob_class_ops& ops, std::string_view name) {
  for (std::size_t f = 0; f < ops.count; ++f) {
    if (ops.fields[f].name == name) return f;
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

// The group a batch keeps for `ops` before it sets `field` to `value`, and that set.
sw::detail::knob_group set_as_a_batch(const sw::detail::knob_class_ops& ops, std::string_view field,
                                      std::uint32_t value) {
  sw::detail::knob_group g;
  g.ops = &ops;
  const std::size_t f = field_index(ops, field);
  g.which = std::uint32_t{1} << f;
  g.v[f] = value;
  for (std::size_t i = 0; i < ops.count; ++i) {
    g.old_v[i] = ops.value(i);
    if (ops.overridden(i)) g.old_overridden |= std::uint32_t{1} << i;
  }
  EXPECT_TRUE(ops.set_fields(g.which, g.v).ok());
  return g;
}

}  // namespace

// Bug guarded: the rollback of a batch that failed part-way (a plain setter raced it) rewrote every
// field of the words it had set: a family's other knobs went back to what they were before the
// batch, and a class lost every override, the ones another thread had just set included.
TEST_F(KnobRegistry, RollbackPutsBackOnlyTheFieldsTheBatchSet) {
  const auto& family = sw::detail::knob_ops_of<sw::time_policy<>>;  // "time"
  ASSERT_TRUE(sw::time_policy<>::set_delay_unit_ns(180).ok());
  const sw::detail::knob_group fam = set_as_a_batch(family, "spin_wait_delay", 40);
  ASSERT_TRUE(sw::time_policy<>::set_delay_unit_ns(150).ok());  // another thread, meanwhile
  sw::detail::restore_knob_group(fam);
  EXPECT_EQ(sw::time_policy<>::spin_wait_delay(), 6u) << "the batch's field is put back";
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 150u) << "the other thread's change is kept";

  // A class of the exp_backoff family: min and max are tied, so setting min pins max too.
  const auto& tas = sw::detail::knob_ops_of<sw::tas_mutex::policy>;
  const sw::detail::knob_group cls = set_as_a_batch(tas, "min_delay_ns", 64);
  ASSERT_TRUE(tas.overridden(field_index(tas, "max_delay_ns"))) << "max is pinned beside min";
  ASSERT_TRUE(sw::tas_mutex::policy::set_spin_loops(5).ok());  // another thread, meanwhile
  sw::detail::restore_knob_group(cls);
  const auto c = sw::find_knob_class("tas_mutex");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->knob(field_index(tas, "min_delay_ns")).overridden) << "min follows its family again";
  EXPECT_FALSE(c->knob(field_index(tas, "max_delay_ns")).overridden) << "so does its tied partner";
  EXPECT_EQ(c->get("min_delay_ns"), sw::exp_backoff_policy<>::min_delay_ns());
  EXPECT_TRUE(c->knob(field_index(tas, "spin_loops")).overridden) << "the other thread's override is kept";
  EXPECT_EQ(c->get("spin_loops"), 5u);
}
