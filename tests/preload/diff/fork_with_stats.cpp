// Scenario 6: fork() in a threaded program with the interposer's statistics on
// (SPINWISE_PRELOAD_STATS, set by run_diff.cmake for this scenario). Threads lock a mutex in a
// loop while the main thread forks children that exit(0) at once; exit() runs the interposer's
// statistics writer in each child. Every child must end: the old code hung about once in 2000
// children (a lock of the statistics copied held into the child: a thread's first lock of a class
// and its exit take the class's record lock, so the lockers are short-lived threads, started one
// after another). A child alive after 3 s and asleep with no CPU time used since 200 ms before
// (sc::wait_child: one still running on a busy machine is waited for) counts as hung and is
// killed; after kMaxHung of them the scenario stops forking. SPINWISE_DIFF_FORKS overrides the count
// (default 1000). The old code hung 6 children of 4000; with its fix undone (the registry's locks
// not held across fork()), 1000 forks a kind hung 1-4 children in 11 of 12 runs of the three
// spinwise kinds (2026-12-07, 2-vCPU Zen 5 guest), so each run of the three catches it; 4000 took
// 70-80 s a kind of the release stage's 390 s of tests.
#include <pthread.h>

#include "scenario.hpp"

namespace {

constexpr int kLockers = 2;
constexpr int kMaxHung = 5;
pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> g_stop{false};
long g_counter = 0;  // guarded by g_m
constexpr int kLocksPerThread = 10;
std::atomic<long> g_done[kLockers];

void* short_lived(void* p) {
  auto* done = static_cast<std::atomic<long>*>(p);
  for (int i = 0; i < kLocksPerThread; ++i) {
    pthread_mutex_lock(&g_m);
    ++g_counter;
    pthread_mutex_unlock(&g_m);
    done->fetch_add(1, std::memory_order_relaxed);
  }
  return nullptr;
}

// Starts short-lived lockers one after another until told to stop.
void* locker(void* p) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    pthread_t t;
    if (pthread_create(&t, nullptr, short_lived, p) == 0) pthread_join(t, nullptr);
  }
  return nullptr;
}

}  // namespace

int main() {
  sc::begin();
  const char* n_env = getenv("SPINWISE_DIFF_FORKS");
  const int forks = n_env != nullptr && atoi(n_env) > 0 ? atoi(n_env) : 1000;
  pthread_t t[kLockers];
  sc::step("the lockers start");
  for (int i = 0; i < kLockers; ++i) pthread_create(&t[i], nullptr, locker, &g_done[i]);
  for (auto& d : g_done)
    while (d.load() == 0) usleep(100);
  int hung = 0, bad = 0, failed = 0;
  long during = 0;
  for (int i = 0; i < forks && hung < kMaxHung; ++i) {
    sc::step("fork a child that exits at once, while threads lock a mutex", 35);  // wait_child's bound
    const long before = g_done[0].load() + g_done[1].load();
    const pid_t pid = fork();
    if (pid == 0) exit(0);
    if (pid < 0) {
      ++failed;
      continue;
    }
    const int status = sc::wait_child(pid, 3000);
    if (status == -1)
      ++hung;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      ++bad;
    if (g_done[0].load() + g_done[1].load() != before) ++during;
  }
  sc::step("the lockers stop");
  g_stop.store(true);
  long total = 0;
  for (int i = 0; i < kLockers; ++i) {
    pthread_join(t[i], nullptr);
    total += g_done[i].load();
  }
  sc::out("children forked: %s\n", failed == 0 ? "all" : "some fork() failed");
  sc::out("children hung: %d%s\n", hung, hung >= kMaxHung ? " (then no more forks)" : "");
  sc::out("children with another status than exit 0: %d\n", bad);
  sc::out("lock loops ran while children were forked: %s\n", during > 0 ? "yes" : "no");
  sc::out("counter matches the loops: %s\n", total == g_counter ? "yes" : "no");
  sc::step("end");
  sc::out("done\n");
  return 0;
}
