// Child of the TSan SX-model test (driver: sx_model.cmake). What ThreadSanitizer
// must conclude about data handed from one sx_lock holder to the next (sx_lock.hpp, file top):
//   sx_then_s   written under SX, read under a later S: a race (S may read during SX), reported
//   sx_then_sx  written under SX, written under a later SX: ordered by the SX token, no report
//   sx_then_x   written under SX, written under a later X: no report
//   x_then_sx   written under X, written under a later SX: no report
//   sx_then_up  written under SX, written under a later SX upgraded to X: no report
//   none_then_s written with no lock, read under S: a race, reported (the control)
// The two threads are ordered by a relaxed flag only, which TSan does not count as
// synchronization: whatever ordering it sees comes from the latch's annotations.
#include <atomic>
#include <cstdio>
#include <spinwise/sx_lock.hpp>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s sx_then_s|sx_then_sx|sx_then_x|x_then_sx|sx_then_up|none_then_s\n",
                 argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  static spinwise::sx_lock l;
  static long x = 0;
  static long seen = 0;
  std::atomic<int> flag{0};
  std::thread first([&] {
    if (mode == "x_then_sx") {
      l.lock();
      x = 1;
      l.unlock();
    } else if (mode == "none_then_s") {
      x = 1;
    } else {
      l.lock_sx();
      x = 1;
      l.unlock_sx();
    }
    flag.store(1, std::memory_order_relaxed);
  });
  std::thread second([&] {
    while (flag.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
    if (mode == "sx_then_s" || mode == "none_then_s") {
      l.lock_shared();
      seen = x;
      l.unlock_shared();
    } else if (mode == "sx_then_sx" || mode == "x_then_sx") {
      l.lock_sx();
      x = 2;
      l.unlock_sx();
    } else if (mode == "sx_then_x") {
      l.lock();
      x = 2;
      l.unlock();
    } else if (mode == "sx_then_up") {
      l.lock_sx();
      l.upgrade();
      x = 2;
      l.downgrade();
      l.unlock_sx();
    } else {
      std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
    }
  });
  first.join();
  second.join();
  std::printf("x=%ld seen=%ld\n", x, seen);
  return 0;
}
