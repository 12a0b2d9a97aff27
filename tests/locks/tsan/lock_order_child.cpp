// Child of the TSan lock-order test: takes two locks of one spinwise type in one order on one
// thread and, after it finished, in the opposite order on another (or the same order, as the
// control). Nothing deadlocks; TSan's deadlock detector must still see the cycle, which it can
// only do through spinwise's __tsan_mutex_* hooks (the lock words are plain atomics to it).
// Prints the two locks' addresses so the driver can check the report names them.
#include <cstdio>
#include <cstring>
#include <spinwise/spinwise.hpp>
#include <thread>

namespace {

template <class M>
int run(bool inverted) {
  static M a;
  static M b;
  std::printf("lock a: %p\nlock b: %p\n", static_cast<void*>(&a), static_cast<void*>(&b));
  std::fflush(stdout);
  std::thread([&] {
    a.lock();
    b.lock();
    b.unlock();
    a.unlock();
  }).join();
  std::thread([&] {
    M& first = inverted ? b : a;
    M& second = inverted ? a : b;
    first.lock();
    second.lock();
    second.unlock();
    first.unlock();
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
    std::fprintf(stderr, "usage: %s tas|ttas|ticket|mcs|hybrid inverted|ordered\n", argv[0]);
    return 2;
  }
  const bool inverted = std::strcmp(argv[2], "inverted") == 0;
  const char* t = argv[1];
  if (!std::strcmp(t, "tas")) return run<spinwise::tas_mutex>(inverted);
  if (!std::strcmp(t, "ttas")) return run<spinwise::ttas_mutex>(inverted);
  if (!std::strcmp(t, "ticket")) return run<spinwise::ticket_mutex>(inverted);
  if (!std::strcmp(t, "mcs")) return run<spinwise::mcs_mutex>(inverted);
  if (!std::strcmp(t, "hybrid")) return run<spinwise::hybrid_mutex>(inverted);
  std::fprintf(stderr, "unknown lock type '%s'\n", t);
  return 2;
}
