// The profile mode's per-thread count (src/preload/profile.hpp, tl_state.to_go): the countdown to
// the next sampled acquisition, the one thing every acquisition changes, and the two looks of a
// release (the timed hold, the kept records). Checked here on the header's own functions, with
// the sample drawn as profile_acquired draws it: the sampled acquisition is the (to_go + 1)-th
// after each draw, a batch of kept records is made at the first release once kFlushAt are kept
// (another lock held or not) and in a condition wait whenever any are, and only the timed hold's
// release is timed.
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
// the sampled one; after a draw of n to go, the (n + 1)-th.
TEST_F(CountsTest, TheFirstAcquisitionIsSampledThenTheDrawSaysWhich) {
  EXPECT_TRUE(profile_count_acquired());
  profile_sample_drawn(3);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(profile_count_acquired()) << "acquisition " << i + 2;
  EXPECT_TRUE(profile_count_acquired()) << "the 4th after a draw of 3 to go";
  profile_sample_drawn(0);
  EXPECT_TRUE(profile_count_acquired()) << "the next after a draw of 0 to go";
  profile_sample_drawn(2 * kSampleEvery - 2);  // the longest interval next_sample_interval() draws
  for (std::uint32_t i = 0; i < 2 * kSampleEvery - 2; ++i) EXPECT_FALSE(profile_count_acquired());
  EXPECT_TRUE(profile_count_acquired());
}

// A million acquisitions and releases in random order: an acquisition is sampled exactly when the
// draw before it said so, whatever the releases between; no release makes a batch when none is
// kept, nor times a hold when none is timed.
TEST_F(CountsTest, ReleasesBetweenKeepTheSampleOrder) {
  std::mt19937 rng(20261207);
  std::uint32_t to_go = 0;  // non-sampled acquisitions before the sampled one
  for (int step = 0; step < 1'000'000; ++step) {
    if (rng() % 2 == 0) {
      profile_count_released(&g_object);
      continue;
    }
    const bool due = profile_count_acquired();
    ASSERT_EQ(due, to_go == 0) << "step " << step;
    if (due) {
      to_go = static_cast<std::uint32_t>(rng() % (2 * kSampleEvery - 1));  // as next_sample_interval() - 1
      profile_sample_drawn(to_go);
    } else {
      --to_go;
    }
  }
  EXPECT_EQ(g_flushes, 0) << "no records were kept";
  EXPECT_EQ(g_released, 0) << "no hold was timed";
}

// Records kept (kFlushAt of them) are made at the next release, whatever else the thread holds;
// fewer wait for a later one.
TEST_F(CountsTest, AKeptBatchIsMadeAtTheFirstReleaseOnceKFlushAtAreKept) {
  ASSERT_TRUE(profile_count_acquired());
  profile_sample_drawn(10);
  ASSERT_FALSE(profile_count_acquired());  // a second lock, inside the first
  tl_state.pending = kFlushAt - 1;
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 0) << "fewer than kFlushAt kept: no batch yet";
  tl_state.pending = kFlushAt;
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 1) << "kFlushAt kept: made at this release";
  profile_count_released(&g_object);
  EXPECT_EQ(g_flushes, 1) << "nothing kept after the batch";
}

// A condition wait makes whatever the thread keeps, one record or more, before it sleeps.
TEST_F(CountsTest, AConditionWaitMakesAnyKeptRecords) {
  profile_flush_kept();
  EXPECT_EQ(g_flushes, 0) << "nothing kept: nothing to make";
  tl_state.pending = 1;
  profile_flush_kept();
  EXPECT_EQ(g_flushes, 1);
  EXPECT_EQ(tl_state.pending, 0);
}

// A timed hold's release reaches profile_released, once; any other release does not.
TEST_F(CountsTest, OnlyTheTimedHoldsReleaseIsTimed) {
  int other;
  tl_state.held = &g_object;
  profile_count_released(&other);
  EXPECT_EQ(g_released, 0);
  profile_count_released(&g_object);
  EXPECT_EQ(g_released, 1);
  profile_count_released(&g_object);
  EXPECT_EQ(g_released, 1) << "timed once";
}

}  // namespace
}  // namespace spinwise::preload
