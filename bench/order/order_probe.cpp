// spinwise-order-probe: how often a FIFO lock's acquisition overtakes a queued waiter.
//
//   spinwise-order-probe [--lock ticket|mcs|all] [--threads N] [--ms N] [--cs WORDS] [--reps N]
//
// N threads (default 2) take the lock in a loop; the holder, just before it unlocks, reads whether
// anyone is queued (has_waiters(): exact while it holds, since a queued waiter leaves the queue
// only by taking the lock). The next acquisition then overtakes a queued waiter if it is made by
// a thread that was not queued at that release: with 2 threads, the releaser itself. Only the
// public API is used. One line per lock and repetition: acquisitions, releases with a waiter
// queued, overtakes and their share of those releases. Exit 1 on bad arguments, or on a broken
// lock (a lost count).
//
// The rate depends on the host: a queue head that does not run (its vCPU stopped by the host, its
// thread preempted) is not waited for (detail/fifo_gate.hpp); run it alone on an idle machine.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "spinwise/mcs_mutex.hpp"
#include "spinwise/ticket_mutex.hpp"

namespace {

struct alignas(128) shared_state {
  std::uint64_t words[16] = {};
  std::uint64_t count = 0;
  std::uint64_t queued_releases = 0;  // releases with a waiter queued
  std::uint64_t overtakes = 0;        // acquisitions past a queued waiter
  int last = -1;
  bool queued_at_release = false;
};

struct result {
  std::uint64_t acquisitions, queued_releases, overtakes;
};

template <class Lock>
result run(int threads, int ms, int words) {
  Lock m;
  shared_state s;
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int> ready{0};
  std::vector<std::uint64_t> mine(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      std::uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        m.lock();
        // With 2 threads a queued waiter at the last release is the other thread: the releaser
        // taking it again overtook it. (With more, any thread that was not queued then could be
        // the one; counted only for the releaser, a lower bound.)
        if (s.queued_at_release && s.last == t) ++s.overtakes;
        for (int i = 0; i < words; ++i) s.words[i] = s.words[i] * 6364136223846793005ull + 1;
        ++s.count;
        s.last = t;
        s.queued_at_release = m.has_waiters();
        if (s.queued_at_release) ++s.queued_releases;
        m.unlock();
        ++n;
      }
      mine[static_cast<std::size_t>(t)] = n;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop.store(true);
  for (auto& th : ts) th.join();
  std::uint64_t total = 0;
  for (auto n : mine) total += n;
  if (total != s.count) {
    std::fprintf(stderr, "order-probe: lost count (%llu acquisitions, %llu counted)\n",
                 static_cast<unsigned long long>(total), static_cast<unsigned long long>(s.count));
    std::exit(1);
  }
  return {s.count, s.queued_releases, s.overtakes};
}

void print(const char* name, int rep, const result& r) {
  const double share = r.queued_releases
                           ? 100.0 * static_cast<double>(r.overtakes) / static_cast<double>(r.queued_releases)
                           : 0.0;
  std::printf("%-6s rep %d  acquisitions %10llu  queued releases %10llu  overtakes %9llu  %6.2f%%\n", name,
              rep, static_cast<unsigned long long>(r.acquisitions),
              static_cast<unsigned long long>(r.queued_releases),
              static_cast<unsigned long long>(r.overtakes), share);
}

int number(const char* flag, const char* v, int lo, int hi) {
  char* end = nullptr;
  const long x = v ? std::strtol(v, &end, 10) : 0;
  if (!v || *end != '\0' || x < lo || x > hi) {
    std::fprintf(stderr, "order-probe: %s needs a number in %d..%d\n", flag, lo, hi);
    std::exit(2);
  }
  return static_cast<int>(x);
}

}  // namespace

int main(int argc, char** argv) {
  std::string lock = "all";
  int threads = 2, ms = 1000, words = 4, reps = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--lock" && v) {
      lock = v;
      ++i;
    } else if (a == "--threads") {
      threads = number("--threads", v, 2, 256), ++i;
    } else if (a == "--ms") {
      ms = number("--ms", v, 1, 600000), ++i;
    } else if (a == "--cs") {
      words = number("--cs", v, 0, 16), ++i;
    } else if (a == "--reps") {
      reps = number("--reps", v, 1, 1000), ++i;
    } else {
      std::fprintf(stderr,
                   "usage: spinwise-order-probe [--lock ticket|mcs|all] [--threads N] [--ms N] [--cs WORDS] "
                   "[--reps N]\n");
      return 2;
    }
  }
  if (lock != "all" && lock != "ticket" && lock != "mcs") {
    std::fprintf(stderr, "order-probe: unknown lock '%s' (ticket, mcs, all)\n", lock.c_str());
    return 2;
  }
  for (int r = 0; r < reps; ++r) {
    if (lock != "mcs") print("ticket", r, run<spinwise::ticket_mutex>(threads, ms, words));
    if (lock != "ticket") print("mcs", r, run<spinwise::mcs_mutex>(threads, ms, words));
  }
  return 0;
}
