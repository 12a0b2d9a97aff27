#pragma once
// The wait-policy wrapper of the stress locks: it counts, into the calling thread's spin_tally,
// what the library's lock statistics do not (they count rounds, relaxes, spin time, contended
// waits, yields and parks per lock class; lock_catalog.cpp reads them):
//   - each waiter built is a spin episode (the lock was busy; a hybrid lock starts one per
//     wake-up);
//   - the first is_completed() that answers true is a spent budget, after which every spinwise
//     lock yields and, for the hybrid ones (hybrid_mutex, hybrid_shared_mutex, sx_lock), parks on
//     a futex unless the lock came free in between;
//   - each round (snooze) either delayed (issued relaxes) or came out zero-length (InnoDB's
//     random delay of 0 units); one that delayed and took far longer than its relaxes cost was
//     preempted, by the statistics' own rule (detail::wait_meter::clip_preempted: more than twice
//     the relaxes' cost plus 50 us), which counts it at what its relaxes cost.
// Counting per round, not per relax call, keeps the counts right whatever a policy does inside a
// round (a clock-bounded delay issues its relaxes in chunks between counter reads).
//
// While the thread measures (t_delay_sink set), each round that delayed also goes into the
// thread's delay_sample (delay_sample.hpp): its achieved length, for every policy. The time
// policies run their rules' timed copies (timed_rules.hpp), which add each delay against the ns
// it asked for.
//
// Cost: two counter reads per round (about 20 ns on our VM), inside the round the statistics
// time: noise against an InnoDB round (50 relaxes per unit), but it triples a no_backoff round
// (one relax), so read no_backoff's spin figures as an upper bound. While measuring, a histogram
// update per round (a few ns), and for the time policies two more counter reads around each
// delay, outside the delay they time but inside the round.

#include <cstdint>
#include <type_traits>

#include "delay_sample.hpp"
#include "lock_catalog.hpp"
#include "spin_tally.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_stats.hpp"
#include "timed_rules.hpp"

namespace spinwise::stress {

// A Relax that wants to know where rounds begin and end (emulated_relaxer: the drift level is
// looked up once per round, at the wrapper's own counter reading); nothing for any other Relax.
template <class Relax, class = void>
struct round_hooks {
  static void begin(std::uint64_t) noexcept {}
  static void end() noexcept {}
};
template <class Relax>
struct round_hooks<Relax,
                   std::void_t<decltype(Relax::begin_round(std::uint64_t{})), decltype(Relax::end_round())>> {
  static void begin(std::uint64_t now) noexcept { Relax::begin_round(now); }
  static void end() noexcept { Relax::end_round(); }
};

template <class Inner>
struct counted : Inner {
  class waiter : public timed_waiter<Inner>::type {
    using base = typename timed_waiter<Inner>::type;

   public:
    waiter() noexcept { ++this_thread_tally().episodes; }

    void snooze() noexcept { snooze(detail::never_ready{}); }
    template <class Until>
    void snooze(Until&& until) noexcept {
      const std::uint64_t n0 = base::relaxes();
      const std::uint64_t t0 = read_counter();
      round_hooks<typename Inner::relax>::begin(t0);
      detail::snooze_until(static_cast<base&>(*this), until);
      round_hooks<typename Inner::relax>::end();
      const std::uint64_t took = read_counter() - t0;
      const std::uint64_t n = base::relaxes() - n0;
      spin_tally& t = this_thread_tally();
      if (n == 0) {
        ++t.zero_rounds;
        return;
      }
      ++t.delay_rounds;
      using meter = detail::wait_meter<class_stats<stress_latch_class>>;
      const double hz = static_cast<double>(counter_frequency());
      const double ticks_per_relax = hz * 1e-9 / detail::relaxes_per_ns<typename Inner::relax>();
      if (meter::clip_preempted(took, n, ticks_per_relax, hz) != took) ++t.preempted_rounds;
      if (delay_sample* s = t_delay_sink) s->record_round(took, n, ticks_per_relax);
    }

    bool is_completed() const noexcept {
      const bool done = base::is_completed();
      if (done && !reported_) {
        reported_ = true;
        ++this_thread_tally().budgets_spent;
      }
      return done;
    }

   private:
    mutable bool reported_ = false;
  };
};

}  // namespace spinwise::stress
