// Child of the TSan lock-order test (driver: run_lock_order.cmake): takes two locks of one
// spinwise type in one order on one thread and, after it finished, in the opposite order on
// another (or the same order, as the control). Nothing deadlocks; TSan's deadlock detector must
// still see the cycle, which it can only do through spinwise's __tsan_mutex_* hooks (the lock
// words are plain atomics to it). Modes of taking a lock:
//   x  (every type): lock / unlock
//   sx (sx_lock_sx): lock_sx / unlock_sx: two SX requests in opposite orders deadlock for real
//                    (SX excludes SX)
// and the first pair is also taken with try_lock, which must count as an acquisition.
// Prints the two locks' addresses so the driver can check the report names them.
#include <cstdio>
#include <cstring>
#include <spinwise/spinwise.hpp>
#include <thread>

namespace {

template <class M, bool kSx = false>
int run(bool inverted) {
  static M a;
  static M b;
  std::printf("lock a: %p\nlock b: %p\n", static_cast<void*>(&a), static_cast<void*>(&b));
  std::fflush(stdout);
  auto take = [](M& m) {
    if constexpr (kSx) {
      m.lock_sx();
    } else {
      m.lock();
    }
  };
  auto drop = [](M& m) {
    if constexpr (kSx) {
      m.unlock_sx();
    } else {
      m.unlock();
    }
  };
  std::thread([&] {
    take(a);
    take(b);
    drop(b);
    drop(a);
  }).join();
  std::thread([&] {
    M& first = inverted ? b : a;
    M& second = inverted ? a : b;
    take(first);
    take(second);
    drop(second);
    drop(first);
  }).join();
  // try_lock success must count as an acquisition too (a try-locked pair in the same order).
  if (a.try_lock()) {
    if (b.try_lock()) b.unlock();
    a.unlock();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(
        stderr,
        "usage: %s tas|ttas|ticket|mcs|hybrid|spin_shared_mutex|hybrid_shared_mutex|sx_lock|sx_lock_sx "
        "inverted|ordered\n",
        argv[0]);
    return 2;
  }
  const bool inverted = std::strcmp(argv[2], "inverted") == 0;
  const char* t = argv[1];
  if (!std::strcmp(t, "tas")) return run<spinwise::tas_mutex>(inverted);
  if (!std::strcmp(t, "ttas")) return run<spinwise::ttas_mutex>(inverted);
  if (!std::strcmp(t, "ticket")) return run<spinwise::ticket_mutex>(inverted);
  if (!std::strcmp(t, "mcs")) return run<spinwise::mcs_mutex>(inverted);
  if (!std::strcmp(t, "hybrid")) return run<spinwise::hybrid_mutex>(inverted);
  if (!std::strcmp(t, "spin_shared_mutex")) return run<spinwise::spin_shared_mutex>(inverted);
  if (!std::strcmp(t, "hybrid_shared_mutex")) return run<spinwise::hybrid_shared_mutex>(inverted);
  if (!std::strcmp(t, "sx_lock")) return run<spinwise::sx_lock>(inverted);
  if (!std::strcmp(t, "sx_lock_sx")) return run<spinwise::sx_lock, true>(inverted);
  std::fprintf(stderr, "unknown lock type '%s'\n", t);
  return 2;
}
