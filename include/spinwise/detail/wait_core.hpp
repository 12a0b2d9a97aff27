#pragma once
// The wait core every lock's slow path is built on: wait_meter (what one contended acquisition
// costs, for the lock's statistics policy), spin_then_yield (the spin locks' wait: Policy rounds,
// then a yield per poll) and park_episodes (the parking locks' wait: Policy rounds, one yield, a
// sleep, and a fresh episode after each wake-up, InnoDB's shape). For no_stats every measuring
// member is an empty inline function: the slow paths compile as if it were not there.

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/arch.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/lock_stats.hpp"

namespace spinwise::detail {

// Measures one contended acquisition for a lock's statistics policy. A lock's slow path routes its
// snoozes, yields and parks through it and calls done() once it holds the lock.
// It is made with the lock, the mode and the site of the wait (for the lock class's tracking).
template <class Stats, bool = Stats::enabled>
struct wait_meter {
  wait_meter(const void*, lock_mode, lock_site) noexcept {}
  template <class Waiter, class Until = never_ready>
  void snooze(Waiter& w, Until&& until = {}) noexcept {
    snooze_until(w, until);
  }
  void yield() noexcept { std::this_thread::yield(); }
  void parked() noexcept {}
  template <class Waiter>
  void account(const Waiter&) noexcept {}
  void done() noexcept {}
};

template <class Stats>
struct wait_meter<Stats, true> {
  std::uint64_t start = read_counter();
  wait_record r;
  lock_mode mode;
  bool tracked;  // the wait is listed (tracking on): unlisted when it ends, in the lock or not

  wait_meter(const void* lock, lock_mode m, lock_site site) noexcept
      : mode(m), tracked(Stats::wait_begin(lock, m, site, start)) {}
  ~wait_meter() {
    if (tracked) Stats::wait_end();
  }
  wait_meter(const wait_meter&) = delete;
  wait_meter& operator=(const wait_meter&) = delete;

  // A snooze is timed by the counter, so a thread descheduled in the middle of one would count
  // its time off the CPU as spinning (on an oversubscribed machine that inflated the spin CPU
  // share many times over). A snooze that took more than twice what its relaxes cost plus 50 us was
  // preempted: it counts at what its relaxes cost.
  template <class Waiter, class Until = never_ready>
  void snooze(Waiter& w, Until&& until = {}) noexcept {
    const std::uint64_t n0 = w.relaxes();
    const std::uint64_t t0 = read_counter();
    snooze_until(w, until);
    const std::uint64_t took = read_counter() - t0;
    const double hz = static_cast<double>(counter_frequency());
    r.spin_ticks += SPINWISE_LIKELY(static_cast<double>(took) <= 50e-6 * hz)
                        ? took
                        : clip_preempted(took, w.relaxes() - n0, snooze_relax_ns<Waiter>() * hz * 1e-9, hz);
  }
  void yield() noexcept {
    std::this_thread::yield();
    ++r.yields;
  }
  void parked() noexcept { ++r.parks; }
  // Adds a finished waiter's rounds and relaxes (a hybrid lock uses one waiter per spin budget).
  template <class Waiter>
  void account(const Waiter& w) noexcept {
    r.rounds += w.rounds();
    r.relaxes += w.relaxes();
  }
  void done() noexcept {
    // A counter read on another CPU can be behind `start` (unsynchronized TSCs, a migration):
    // that wait took no measurable time, not 2^64 ticks.
    const std::uint64_t now = read_counter();
    r.wait_ticks = now > start ? now - start : 0;
    Stats::on_contended(r, mode);
  }

  // The ticks a snooze of `relaxes` relaxes costing `ticks_per_relax` each is counted at.
  static std::uint64_t clip_preempted(std::uint64_t took, std::uint64_t relaxes, double ticks_per_relax,
                                      double hz) noexcept {
    const double expected = static_cast<double>(relaxes) * ticks_per_relax;
    return static_cast<double>(took) > 2.0 * expected + 50e-6 * hz ? static_cast<std::uint64_t>(expected)
                                                                   : took;
  }

 private:
  template <class W, class = void>
  struct has_relax : std::false_type {};
  template <class W>
  struct has_relax<W, std::void_t<typename W::relax>> : std::true_type {};

  // Nanoseconds one relax of the waiter's Relax costs (an emulated relax says its own length; a
  // waiter that names no Relax is taken to issue this CPU's relax instruction).
  template <class Waiter>
  static double snooze_relax_ns() noexcept {
    if constexpr (has_relax<Waiter>::value) {
      return 1.0 / detail::relaxes_per_ns<typename Waiter::relax>();
    } else {
      return relax_ns_here();
    }
  }
};

// What every wait of a lock has: the current spin budget's waiter and the wait's meter, and the
// report once the wait ends in the lock.
template <class Policy, class Stats>
class one_wait {
 public:
  typename Policy::waiter w;  // the current budget's

  one_wait(const void* lock, lock_mode m, lock_site site) noexcept : m_(lock, m, site) {}

 protected:
  // The wait ended in the lock; won: its last spin budget paid off (learnt: the budget's outcome
  // was told already).
  void report(bool won, bool learnt = false) noexcept {
    if (!learnt) finish_spin(w, won);
    m_.account(w);
    m_.done();
  }

  wait_meter<Stats> m_;
};

// A policy may ask the locks that park not to spin behind a sleeper: park_behind_sleepers.hpp
// (Policy::kParkBehindSleepers, true). Its parking waits then count their sleeps here, one count
// per policy type, and a wait that starts while the count is not zero parks at once.
template <class Policy, class = void>
struct parks_behind_sleepers : std::false_type {};
template <class Policy>
struct parks_behind_sleepers<Policy, std::enable_if_t<Policy::kParkBehindSleepers>> : std::true_type {};
template <class Policy>
inline std::atomic<std::uint32_t> sleepers{0};
// A policy may ask a parking lock not to spin on a lock that has a sleeper of its own
// (park_on_marked_word.hpp, Policy::kParkOnMarkedWord): an episode that starts on a lock word
// saying a waiter may sleep there parks at its first step.
template <class Policy, class = void>
struct parks_on_marked_word : std::false_type {};
template <class Policy>
struct parks_on_marked_word<Policy, std::enable_if_t<Policy::kParkOnMarkedWord>> : std::true_type {};

// One wait of a lock that parks, with its statistics: spin episodes (Policy rounds while the
// budget lasts, then one yield) with a sleep between them, InnoDB's shape. The lock polls its
// word, calls pause(until) while it may not enter (until: "the word looks as if I may", which
// ends a long round early), parks when pause() says the episode is over and then calls
// next_episode(), and calls entered() once it holds the lock.
template <class Policy, class Stats>
class park_episodes : public one_wait<Policy, Stats> {
 public:
  park_episodes(const void* lock, lock_mode m, lock_site site = {}) noexcept
      : one_wait<Policy, Stats>(lock, m, site) {}

  // One step of the episode; false when it is over and the caller should park. After the yield
  // it is true once more, for one more poll of the word before the park.
  template <class Until = never_ready>
  bool pause(Until&& until = {}) noexcept {
    if (yielded_) return false;
    (void)step(until);
    return true;
  }
  // The same without the poll after the yield: a round while the budget lasts (true), then the
  // episode's one yield (false: park now). For a lock whose step to the park takes a free word
  // too (hybrid_mutex's exchange); a poll there cost hybrid_mutex_adaptive throughput at 2 threads.
  // marked: the lock's word says a waiter may sleep on it (read only under parks_on_marked_word).
  template <class Until = never_ready>
  bool step(Until&& until = {}, bool marked = false) noexcept {
    if constexpr (parks_behind_sleepers<Policy>::value || parks_on_marked_word<Policy>::value) {
      // An episode's first step, while a waiter of this policy sleeps (or one of this lock's):
      // park now, without a round or the yield, and learn nothing (no spin was tried). The class's
      // count is read on that step only, never in the rounds.
      if (this->w.rounds() == 0 && !yielded_) {
        bool behind = false;
        if constexpr (parks_on_marked_word<Policy>::value) behind = marked;
        if constexpr (parks_behind_sleepers<Policy>::value)
          behind = behind || sleepers<Policy>.load(std::memory_order_relaxed) != 0;
        if (behind) {
          learnt_ = true;
          yielded_ = true;
          return false;
        }
      }
    }
    if (!this->w.is_completed()) {
      this->m_.snooze(this->w, until);
      return true;
    }
    // The budget is spent and the lock still busy: a spin lost, learnt now, before the yield
    // and the sleep (learnt after the sleep, the class would hear of a parked waiter's loss
    // only once it woke, while the wins of the running waiters came in at once).
    if (!learnt_) finish_spin(this->w, false);
    learnt_ = true;
    yielded_ = true;
    this->m_.yield();
    return false;
  }
  // The wait ended in the lock: a spin won if the lock was taken before the episode's yield (the
  // poll after its budget's last round included); one taken after it was learnt lost at the yield.
  void entered() noexcept { this->report(!yielded_, learnt_); }
  // A timed wait's deadline passed: a spent budget is a spin lost, one not spent says nothing (a
  // deadline is not a lost spin), and what follows (a timed hybrid_mutex waiter that slept takes
  // the lock back as it leaves) teaches nothing either.
  void deadline_passed() noexcept {
    if (!learnt_ && this->w.is_completed()) finish_spin(this->w, false);
    learnt_ = true;
  }
  // Just before the lock's futex wait (the wait's next_episode() follows it).
  void sleeping() noexcept {
    if constexpr (parks_behind_sleepers<Policy>::value) {
      sleepers<Policy>.fetch_add(1, std::memory_order_relaxed);
      counted_ = true;
    }
  }
  // After the park (slept: the thread did sleep in the kernel): a fresh episode.
  void next_episode(bool slept) noexcept {
    if constexpr (parks_behind_sleepers<Policy>::value) {
      if (counted_) sleepers<Policy>.fetch_sub(1, std::memory_order_relaxed);
      counted_ = false;
    }
    if (slept) this->m_.parked();
    this->m_.account(this->w);  // its loss was learnt at the yield
    this->w = typename Policy::waiter{};
    yielded_ = false;
    learnt_ = false;
  }

 private:
  bool yielded_ = false;
  bool learnt_ = false;   // the budget's outcome was told (at the yield, or by deadline_passed())
  bool counted_ = false;  // this wait's sleep is in sleepers<Policy> (parks_behind_sleepers only)
};

// One wait of a spin lock: Policy rounds while the budget lasts, then a yield per poll, for as
// long as it waits (progress when threads outnumber CPUs, without parking). The lock polls its
// word, calls pause(until) while it may not enter, and entered() once it holds the lock.
template <class Policy, class Stats>
class spin_then_yield : public one_wait<Policy, Stats> {
 public:
  spin_then_yield(const void* lock, lock_mode m, lock_site site = {}) noexcept
      : one_wait<Policy, Stats>(lock, m, site) {}

  template <class Until = never_ready>
  void pause(Until&& until = {}) noexcept {
    if (!this->w.is_completed()) {
      this->m_.snooze(this->w, until);
    } else {
      this->m_.yield();
    }
  }
  // The budget is spent: the next pause() is a yield.
  bool spent() const noexcept { return this->w.is_completed(); }
  // A yield outside the budget, for a waiter that has others ahead of it (a FIFO queue's): its
  // turn cannot come before theirs, and the CPU it gives up may be the one they need.
  void yield() noexcept { this->m_.yield(); }
  // The wait ended in the lock: a lock taken in the yield phase counts as a spin lost.
  void entered() noexcept { this->report(!this->w.is_completed()); }
  // The same for a FIFO queue's wait, which may never have spun (it only yielded behind others):
  // such a wait says nothing about spinning.
  void entered_from_queue() noexcept { this->report(!this->w.is_completed(), this->w.rounds() == 0); }
};

}  // namespace spinwise::detail
