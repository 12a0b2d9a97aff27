// The FIFO gate's judgment of a queue head (detail/fifo_gate.hpp), on beats made to measure: how
// long a head may go without a beat, with and without kAlone (its thread has its CPU to itself),
// what a vouch for a successor keeps of its beat, and what a ticket's tagged beat carries. The
// patience is a second, so a beat's age is set by the test, not by how fast the host runs it: the
// checks hold unless the test is stopped for more than 8 s between a beat's making and its reading.

#include "spinwise/detail/fifo_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace {

constexpr std::uint32_t kSecondUs = 1'000'000;
using gate = spinwise::detail::fifo_gate<kSecondUs>;

// A beat of a thread that last showed it runs `patiences` patiences ago (with kAlone or not).
std::uint64_t beat_ago(double patiences, bool alone) {
  const auto back = static_cast<std::uint64_t>(patiences * static_cast<double>(gate::patience_ticks()));
  const std::uint64_t b = (gate::beat_now() - back) & gate::kBeatMask;
  return (b == 0 ? 1 : b) | (alone ? gate::kAlone : 0);
}

TEST(FifoGate, AHeadWithItsOwnCpuIsWaitedForTenPatiences) {
  gate g;
  g.vouch(beat_ago(2, true));
  EXPECT_FALSE(g.head_stale()) << "an alone head 2 patiences quiet is stopped, not gone";
  g.vouch(beat_ago(2, false));
  EXPECT_TRUE(g.head_stale()) << "a head that shares its CPU, 2 patiences quiet, is not running";
  g.vouch(beat_ago(spinwise::detail::kAloneFactor + 1, true));
  EXPECT_TRUE(g.head_stale()) << "past the alone patience even an alone head is not waited for";
  g.vouch(0);
  EXPECT_TRUE(g.head_stale()) << "no beat at all";
}

// Bug guarded: a successor whose thread had its CPU was vouched for a quarter of the patience
// (5 us), so each time an interrupt stopped it between its promotion and its first poll the
// releaser took the lock back, for as long as the stop lasted.
TEST(FifoGate, AVouchKeepsAnAloneSuccessorsWholeBeat) {
  gate g;
  g.vouch_waiter(beat_ago(0.5, true));
  EXPECT_FALSE(g.head_stale());
  g.vouch_waiter(beat_ago(2, true));
  EXPECT_FALSE(g.head_stale());
  // Without kAlone a vouched beat counts for a quarter of the patience: half a patience old is
  // stale already.
  g.vouch_waiter(beat_ago(0.5, false));
  EXPECT_TRUE(g.head_stale());
  g.vouch_waiter(0);
  EXPECT_TRUE(g.head_stale());
}

TEST(FifoGate, ATaggedBeatCarriesItsTicketAndKAlone) {
  const std::uint64_t alone = gate::tagged_beat(41, true);
  EXPECT_NE(gate::beat_if_tagged(alone, 41) & gate::kAlone, 0u);
  EXPECT_EQ(gate::beat_if_tagged(alone, 42), 0u) << "another ticket's beat";
  EXPECT_EQ(gate::beat_if_tagged(alone, 41 + gate::kTagMask + 1), gate::beat_if_tagged(alone, 41))
      << "the tag is the ticket's low bits";
  const std::uint64_t shared = gate::tagged_beat(41, false);
  EXPECT_EQ(gate::beat_if_tagged(shared, 41) & gate::kAlone, 0u);
  EXPECT_NE(gate::beat_if_tagged(shared, 41), 0u);
}

TEST(FifoGate, AYieldThatComesBackLateSaysTheCpuIsShared) {
  // A yield that gave the CPU to someone else for longer than a quarter patience.
  EXPECT_FALSE(gate::alone_after([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }));
  EXPECT_FALSE(gate::alone_now()) << "kept for the thread's next wait";
  // A yield that returned at once: alone, unless this thread itself was stopped for a quarter
  // patience around it (then either answer is right, and the test checks nothing more).
  const auto t0 = std::chrono::steady_clock::now();
  const bool alone = gate::alone_after([] {});
  if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(250)) {
    EXPECT_TRUE(alone);
    EXPECT_TRUE(gate::alone_now());
  }
}

}  // namespace
