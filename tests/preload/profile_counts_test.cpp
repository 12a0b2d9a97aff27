// The profile mode's per-thread counts (src/preload/profile.hpp, tl_state.counts): the profiled
// locks a thread holds and its countdown to the next sampled acquisition, one word that every
// acquisition and release changes with one add. Checked here on the header's own functions, with
// the sample drawn as profile_acquired draws it: the held count is exact after every call, the
// sampled acquisition is the (to_go + 1)-th after each draw, and a batch of kept records is made
// at the release that leaves the thread holding no profiled lock, never while it holds one.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "preload/profile.hpp"

namespace spinwise::preload {

__thread thread_state tl_state __attribute__((tls_model("initial-exec")));

// What profile.hpp's inline functions call in profile.cpp, counted.
int g_flushes = 0;
int g_released = 0;
void profile_flush() noexcept {
  ++g_flushes;
  tl_state.pending = 0;
}
void profile_released(const void*) noexcept {
  ++g_released;
  tl_state.held = nullptr;
}

namespace {

int g_object;  // a lock's address; which one does not matter here

struct CountsTest : ::testing::Test {
  void SetUp() override {
    tl_state = thread_state{};
    g_flushes = 0;
    g_released = 0;
  }
};

// A thread's first acquisition finds the countdown at 0 (a thread's state starts zeroed): it is
// the sampled one, and its draw gives back what its step borrowed.
TEST_F(CountsTest, TheFirstAcquisitionIsSampledAndTheHeldCountStaysExact) {
  EXPECT_TRUE(profile_count_acquired());
  profile_sample_drawn(3);
  EXPECT_EQ(held_locks(), 1);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(profile_count_acquired()) << "acquisition " << i + 2;
  EXPECT_TRUE(profile_count_acquired()) << "the 4th after a draw of 3 to go";
  profile_sample_drawn(0);
  EXPECT_EQ(held_locks(), 5);
  EXPECT_TRUE(profile_count_acquired()) << "the next after a draw of 0 to go";
  profile_sample_drawn(30);
  EXPECT_EQ(held_locks(), 6);
  for (int i = 6; i > 0; --i) {
    profile_count_released(&g_object);
    EXPECT_EQ(held_locks(), i - 1);
  }
  EXPECT_TRUE(holds_no_lock(tl_state.counts));
}

// Random nestings, up to 40 deep, a million calls: after every call the held count is the depth,
// and an acquisition is sampled exactly when the draw before it said so.
TEST_F(CountsTest, RandomNestingsKeepTheHeldCountAndTheSampleOrder) {
  std::mt19937 rng(20261207);
  int depth = 0;
  std::uint32_t to_go = 0;  // non-sampled acquisitions before the sampled one
  long sampled = 0, acquisitions = 0;
  for (int step = 0; step < 1'000'000; ++step) {
    if (depth == 0 || (depth < 40 && rng() % 2 == 0)) {
      const bool due = profile_count_acquired();
      ++acquisitions;
      ++depth;
      ASSERT_EQ(due, to_go == 0) << "step " << step;
      if (due) {
        ++sampled;
        to_go = static_cast<std::uint32_t>(rng() % (2 * kSampleEvery - 1));  // as next_sample_interval() - 1
        profile_sample_drawn(to_go);
      } else {
        --to_go;
      }
    } else {
      profile_count_released(&g_object);
      --depth;
    }
    ASSERT_EQ(held_locks(), depth) << "step " << step;
    ASSERT_EQ(holds_no_lock(tl_state.counts), depth == 0) << "step " << step;
  }
  EXPECT_NEAR(static_cast<double>(acquisitions) / static_cast<double>(sampled), kSampleEvery, 0.5);
  EXPECT_EQ(g_flushes, 0) << "no records were kept";
}

// Records kept (kFlushAt of them) are made at the release of the thread's last profiled lock.
TEST_F(CountsTest, AKeptBatchIsMadeAtTheReleaseOfTheLastLockHeld) {
  ASSERT_TRUE(profile_count_acquired());
  profile_sample_drawn(10);
  ASSERT_FALSE(profile_count_acquired());
  tl_state.pending = kFlushAt;
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 0) << "made while the thread still holds a lock";
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 1);
  tl_state.pending = kFlushAt - 1;
  ASSERT_FALSE(profile_count_acquired());
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 1) << "fewer than kFlushAt kept: no batch yet";
}

// A lock taken inside a counted call (uncounted) and released outside one: the held count goes
// below zero, which still reads as holding none.
TEST_F(CountsTest, AReleaseWithoutItsAcquisitionHoldsNone) {
  profile_count_released(&g_object);
  EXPECT_EQ(held_locks(), -1);
  EXPECT_TRUE(holds_no_lock(tl_state.counts));
  ASSERT_TRUE(profile_count_acquired());
  profile_sample_drawn(5);
  EXPECT_EQ(held_locks(), 0);
}

// A timed hold's release reaches profile_released, once; any other release does not.
TEST_F(CountsTest, OnlyTheTimedHoldsReleaseIsTimed) {
  int other;
  tl_state.held = &g_object;
  profile_count_released(&other);
  EXPECT_EQ(g_released, 0);
  profile_count_released(&g_object);
  EXPECT_EQ(g_released, 1);
}

}  // namespace
}  // namespace spinwise::preload
