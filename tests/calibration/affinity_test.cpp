// Affinity: the allowed set as the kernel reports it, pinning to each allowed CPU, and the mask
// put back afterwards (calibration and c2c move the caller's thread from CPU to CPU).
#include "spinwise/runtime/affinity.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace rt = spinwise::runtime;

namespace {

// The calling thread's mask read straight from the kernel, independently of the code under test.
std::vector<int> kernel_mask() {
  cpu_set_t s;
  CPU_ZERO(&s);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(s), &s) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &s)) out.push_back(c);
  }
  return out;
}

}  // namespace

// Bug guarded: an allowed set read from the wrong mask (the process's first thread, the online
// list), so a calibration measured CPUs the caller had excluded.
TEST(Affinity, AllowedCpusAreTheThreadsMask) {
  const std::vector<int> allowed = rt::allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_EQ(allowed, kernel_mask());
  EXPECT_TRUE(std::is_sorted(allowed.begin(), allowed.end()));
  const std::vector<int> online = rt::online_cpus();
  if (!online.empty()) {
    for (int cpu : allowed) EXPECT_TRUE(std::binary_search(online.begin(), online.end(), cpu)) << cpu;
  }
}

// Bug guarded: a measurement that pinned the caller's thread and left it pinned (every later
// thread it spawned inherited one CPU), or that "pinned" without the thread moving.
TEST(Affinity, ScopedPinMovesTheThreadAndRestoresTheMask) {
  const std::vector<int> before = kernel_mask();
  ASSERT_FALSE(before.empty());
  {
    rt::scoped_pin pin;
    EXPECT_TRUE(pin.ok());
    for (int cpu : before) {
      ASSERT_TRUE(pin.pin(cpu)) << cpu;
      EXPECT_TRUE(pin.ok());
      EXPECT_EQ(kernel_mask(), std::vector<int>{cpu});
      EXPECT_EQ(sched_getcpu(), cpu);  // the kernel moves the thread before the call returns
    }
  }
  EXPECT_EQ(kernel_mask(), before);
  {
    rt::scoped_pin pin(before.back());
    EXPECT_TRUE(pin.ok());
    EXPECT_EQ(kernel_mask(), std::vector<int>{before.back()});
  }
  EXPECT_EQ(kernel_mask(), before);
}

// Bug guarded: an out-of-range CPU number written past the cpu_set_t, or a refused pin that
// left the thread with an empty or changed mask.
TEST(Affinity, RefusedPinsChangeNothing) {
  const std::vector<int> before = kernel_mask();
  EXPECT_FALSE(rt::pin_to(-1));
  EXPECT_FALSE(rt::pin_to(CPU_SETSIZE));
  EXPECT_EQ(kernel_mask(), before);
  int outside = -1;  // a CPU number this thread may not use, if there is one
  for (int c = 0; c < CPU_SETSIZE && outside < 0; ++c) {
    if (!std::binary_search(before.begin(), before.end(), c)) outside = c;
  }
  if (outside >= 0) {
    {
      rt::scoped_pin pin(outside);
      EXPECT_FALSE(pin.ok()) << "pinned to cpu " << outside << ", which is not in the mask";
      EXPECT_EQ(kernel_mask(), before);
      ASSERT_TRUE(pin.pin(before.front()));
      EXPECT_TRUE(pin.ok());
    }
    EXPECT_EQ(kernel_mask(), before);
  }
}

// Bug guarded: pinning that acted on the process (sched_setaffinity on the thread group leader)
// rather than on the calling thread.
TEST(Affinity, PinningIsPerThread) {
  const std::vector<int> before = kernel_mask();
  std::vector<int> in_thread;
  std::thread t([&] {
    rt::scoped_pin pin(before.front());
    in_thread = kernel_mask();
  });
  t.join();
  EXPECT_EQ(in_thread, std::vector<int>{before.front()});
  EXPECT_EQ(kernel_mask(), before);
}
