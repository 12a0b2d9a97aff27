// A relax-cost table reaches the waits of every lock that converts time into relaxes, the shared
// latches included: install_relax_ns() (what load_profile() ends in), a profile loaded with
// load_profile_text(), and apply_quick_calibration(). Each lock runs time_policy with a Relax that
// has no relax_ns() of its own, so the policy converts its nanoseconds with the installed table.
//
// What is counted is relaxes, never time. The Relax's counter does not tick
// (counter_ticks_per_ns() == 0, "no usable counter" in detail/clock_bounded_delay.hpp), so a delay of d ns
// issues exactly round(d / table ns) relaxes in one relax_n call instead of running to a clock
// deadline: with spin_wait_delay and delay_unit_ns fixed, every delay is k x delay_unit_ns for a
// k in 1..spin_wait_delay-1, and its relax count is round(k x delay_unit_ns / table ns), whatever
// the machine, its load or an emulator do to the real time.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/profile.hpp"
#include "spinwise/spinwise.hpp"

namespace sw = spinwise;

namespace {

constexpr std::uint32_t kDelay = 6;      // spin_wait_delay: a delay is 0..5 units
constexpr std::uint32_t kUnitNs = 1000;  // delay_unit_ns
constexpr std::uint64_t kDelaysPerWait = 20;

// Counts what the waits issue and checks each delay against the counts the table allows.
struct table_relax {
  static inline std::atomic<std::uint64_t> calls{0};
  static inline std::atomic<std::uint64_t> unexpected{0};  // delays of a count no k gives
  static inline std::atomic<std::uint32_t> min_n{0}, max_n{0};
  static inline std::array<std::uint32_t, kDelay> allowed{};  // allowed[k]: the count for k units

  static void relax_n(std::uint32_t n) noexcept {
    calls.fetch_add(1, std::memory_order_relaxed);
    if (std::find(allowed.begin() + 1, allowed.end(), n) == allowed.end())
      unexpected.fetch_add(1, std::memory_order_relaxed);
    std::uint32_t m = min_n.load(std::memory_order_relaxed);
    while (n < m && !min_n.compare_exchange_weak(m, n, std::memory_order_relaxed)) {
    }
    m = max_n.load(std::memory_order_relaxed);
    while (n > m && !max_n.compare_exchange_weak(m, n, std::memory_order_relaxed)) {
    }
  }
  // A counter that does not tick: each delay is its converted count alone (see the file top).
  static std::uint64_t counter() noexcept { return 0; }
  static double counter_ticks_per_ns() noexcept { return 0.0; }

  // Expects delays converted at `ns` per relax, exactly as detail::relax_for_ns converts.
  static void expect_table(double ns) {
    const double per_ns = 1.0 / ns;
    for (std::uint32_t k = 0; k < kDelay; ++k)
      allowed[k] = sw::detail::relaxes_in(static_cast<double>(k) * kUnitNs, per_ns);
    calls = 0;
    unexpected = 0;
    min_n = 0xffffffffu;
    max_n = 0;
  }
};

struct table_tag;
using policy = sw::time_policy<table_tag, table_relax>;
struct table_class {
  static constexpr std::string_view name = "test.relax_table_latch";
};

// Waits until the waiter has issued kDelaysPerWait more delays (it spins with a budget far larger
// than that); false after 60 s (the waiter never delayed: the test fails, the lock is released).
bool await_delays(std::uint64_t since) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (table_relax::calls.load(std::memory_order_relaxed) < since + kDelaysPerWait) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

// One contended wait of `wait` (run in a new thread) while this thread holds the lock through
// `hold` and `release`.
template <class Hold, class Wait, class Release>
void contend(Hold hold, Wait wait, Release release) {
  hold();
  const std::uint64_t since = table_relax::calls.load();
  std::thread t(wait);
  EXPECT_TRUE(await_delays(since)) << "the waiter issued no delays";
  release();
  t.join();
}

template <class L>
struct traits {
  static constexpr bool shared = false;
};
template <class P, class S>
struct traits<sw::sx_lock_t<P, S>> {
  static constexpr bool shared = true;
};
template <class P, class S>
struct traits<sw::hybrid_shared_mutex_t<P, S>> {
  static constexpr bool shared = true;
};
template <class P, class S>
struct traits<sw::spin_shared_mutex_t<P, S>> {
  static constexpr bool shared = true;
};

// Every wait the lock has: X behind X, and for the shared locks S behind X and X behind S (the
// reservation draining the readers), and for sx_lock SX behind X.
template <class L>
void run_waits(L& l) {
  contend([&] { l.lock(); },
          [&] {
            l.lock();
            l.unlock();
          },
          [&] { l.unlock(); });
  if constexpr (traits<L>::shared) {
    contend([&] { l.lock(); },
            [&] {
              l.lock_shared();
              l.unlock_shared();
            },
            [&] { l.unlock(); });
    contend([&] { l.lock_shared(); },
            [&] {
              l.lock();
              l.unlock();
            },
            [&] { l.unlock_shared(); });
  }
  if constexpr (std::is_same_v<L, sw::sx_lock_t<typename L::policy, typename L::stats>>) {
    contend([&] { l.lock(); },
            [&] {
              l.lock_sx();
              l.unlock_sx();
            },
            [&] { l.unlock(); });
  }
}

template <class L>
class RelaxTableReachesLatch : public ::testing::Test {
 protected:
  void SetUp() override {
    hz_ = sw::counter_frequency();
    ASSERT_TRUE(policy::set({kDelay, kUnitNs, sw::kMaxSpinLoops}).ok());
  }
  void TearDown() override {
    sw::clear_relax_ns();
    sw::set_counter_frequency(hz_);
    policy::reset();
  }

  // Runs every wait of L and checks each delay's relax count against a table at `ns`; returns
  // the largest delay seen, in relaxes.
  std::uint32_t waits_follow(double ns) {
    table_relax::expect_table(ns);
    L l;
    run_waits(l);
    EXPECT_GE(table_relax::calls.load(), kDelaysPerWait) << "no delays were issued";
    EXPECT_EQ(table_relax::unexpected.load(), 0u)
        << "a delay's relax count is not round(k x " << kUnitNs << " / " << ns << ") for any k in 1.."
        << kDelay - 1 << " (min " << table_relax::min_n << ", max " << table_relax::max_n << ")";
    EXPECT_LE(table_relax::max_n.load(), static_cast<std::uint32_t>((kDelay - 1) * kUnitNs / ns + 1));
    return table_relax::max_n.load();
  }

  std::uint64_t hz_ = 0;
};

using Latches = ::testing::Types<sw::sx_lock_t<policy>, sw::sx_lock_t<policy, sw::class_stats<table_class>>,
                                 sw::hybrid_shared_mutex_t<policy>, sw::spin_shared_mutex_t<policy>,
                                 sw::hybrid_mutex_t<policy>, sw::ttas_mutex_t<policy>>;
TYPED_TEST_SUITE(RelaxTableReachesLatch, Latches);

// Bug guarded: a lock whose waits ignore the installed table (a policy converting with its own
// constant, or the shared latches left on innodb_policy, which never converts): a table that makes
// a relax 100x dearer must make every delay 100x shorter in relaxes.
TYPED_TEST(RelaxTableReachesLatch, InstalledTable) {
  ASSERT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, 1000.0));  // 1 relax per unit
  const std::uint32_t dear = this->waits_follow(1000.0);
  EXPECT_LE(dear, kDelay - 1);
  ASSERT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, 250.0));  // 4 per unit
  EXPECT_LE(this->waits_follow(250.0), 4 * (kDelay - 1));
  ASSERT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, 10.0));  // 100 per unit
  const std::uint32_t cheap = this->waits_follow(10.0);
  EXPECT_GE(table_relax::min_n.load(), 100u) << "a delay of at least one unit is 100 relaxes at 10 ns";
  EXPECT_GT(cheap, dear);
}

// The engine's path: a profile (here for this machine's active relax kind at 50 ns on CPU 0, so
// every CPU gets 50 ns) loaded with load_profile_text reaches the waits; loading it changes no knob.
TYPED_TEST(RelaxTableReachesLatch, LoadedProfile) {
  const std::string kind(sw::to_string(sw::active_relax()));
  const std::string profile =
      R"({"format": "spinwise-profile", "version": 1,
          "machine": {"arch": "test", "cpu_model": "test", "cpu_count": 1, "counter": "test",
                      "counter_hz": )" +
      std::to_string(sw::counter_frequency()) + R"(},
          "settings": {"target_ns": 400},
          "cpus": [{"cpu": 0, "relax": [{"kind": ")" +
      kind + R"(", "ticks": {"median": 100}, "ns_median": 50}]}]})";
  sw::profile_load_options opt;
  opt.check_machine = false;
  const sw::profile_status st = sw::load_profile_text(profile, opt);
  ASSERT_TRUE(st.ok()) << st.message;
  ASSERT_TRUE(sw::relax_ns_installed());
  EXPECT_EQ(sw::relax_ns_here(), 50.0);
  EXPECT_LE(this->waits_follow(50.0), 20 * (kDelay - 1));
  EXPECT_EQ(policy::delay_unit_ns(), kUnitNs) << "a profile changed a knob";
  EXPECT_EQ(sw::time_policy<>::delay_unit_ns(), 200u) << "a profile changed a knob";
}

// Engines without a profile: the quick in-process calibration reaches the waits too.
TYPED_TEST(RelaxTableReachesLatch, QuickCalibration) {
  sw::quick_calibration q;
  if (!sw::apply_quick_calibration(sw::active_relax(), &q))
    GTEST_SKIP() << "no usable quick measurement here";
  ASSERT_TRUE(sw::relax_ns_installed());
  const double installed = sw::relax_ns_here();
  EXPECT_NEAR(installed, std::max(q.ns, 0.05), std::max(q.ns, 0.05) * 1e-6);
  this->waits_follow(installed);
}

// Bug guarded: a table that says a relax costs next to nothing (1e-9 ns was accepted) converts a
// delay's check interval into billions of relaxes, all issued before the delay first reads its
// counter or asks the lock: a 1 us delay issued 4,294,967,295. Costs below kMinRelaxNs (the floor
// the quick measurement and profile loading apply) or above 100 us are refused, and the table
// installed before stays.
TEST(RelaxTable, RefusesCostsOutsideItsBounds) {
  ASSERT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, 7.0));
  for (const double bad : {1e-9, 0.049, 0.0, -1.0, 100'001.0}) {
    EXPECT_FALSE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, bad)) << bad;
    const double table[2] = {7.0, bad};
    if (bad != 0.0) {  // 0 in a table means "not measured": allowed
      EXPECT_FALSE(sw::install_relax_ns(sw::active_relax(), table, 2, 7.0)) << bad;
    }
    EXPECT_EQ(sw::relax_ns_here(), 7.0) << "a refused table changed the installed one";
  }
  EXPECT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, sw::detail::kMinRelaxNs));
  EXPECT_TRUE(sw::install_relax_ns(sw::active_relax(), nullptr, 0, 100'000.0));
  sw::clear_relax_ns();
}

}  // namespace
