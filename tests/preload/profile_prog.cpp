// The per-lock profile's test program (profile_check.py runs it, under spinwise-run or with
// SPINWISE_PRELOAD_PROFILE set; docs/preload.md "Per-lock profile"). Every wait it makes is
// forced by a handshake, never by timing: the lock's holder lets the waiter in only once the
// waiter sleeps in it ('S' in /proc), so each is a contended acquisition, and the waits of the
// three ranked locks are nested (each ends inside the one before), so their totals are ordered.
//
//   profile_prog rank         three C mutexes (pthread_mutex_t) at c_wait_hot, c_wait_warm and
//                             c_wait_cool: 6, 4 and 2 waits, each nested inside the one before
//   profile_prog rank-cxx     the same on std::mutex, at cxx_wait_hot, cxx_wait_warm, cxx_wait_cool
//   profile_prog lib          one wait inside a shared library's function (profile_lib_wait)
//   profile_prog many N       N mutexes, one wait each (more than the table holds)
//   profile_prog fork-signal  contention with signals arriving in a lock's handler, then a fork
//                             whose child waits on a lock of its own and exits normally; prints
//                             the child's pid and both locks' addresses
//   profile_prog cond         a condition variable broadcast to 4 waiters, 20 times
//   profile_prog kept         20 waits made while another lock is held, a thread that exits
//                             holding the lock it waited for, and one that waits 5 times, then
//                             sleeps in a condition wait until the exit; prints the three locks'
//                             addresses
//   profile_prog sampled N    one wait on a mutex (so that it enters the table), then N rounds of
//                             that mutex's lock and unlock and a read lock and unlock of an
//                             rwlock, in turn on one thread; prints the mutex's address
//   profile_prog threads T K  T threads, one after another, each locking and unlocking a mutex K
//                             times
//   profile_prog exit CODE    one line on each of stdout and stderr, then exits with CODE
//   profile_prog kill         one line on stdout, then kills itself with SIGTERM

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "test_util.hpp"  // spinwise_test::thread_state

extern "C" void profile_lib_wait(pthread_mutex_t* m);  // profile_lib.c

namespace {

// Returns once the thread `tid` (once known) sleeps; exits the program if it never does.
void wait_until_asleep(const std::atomic<pid_t>& tid) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (tid.load() == 0 || spinwise_test::thread_state(tid.load()) != 'S') {
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "profile_prog: a waiter never slept\n");
      std::exit(3);
    }
    std::this_thread::yield();
  }
}

// Starts a thread that runs `wait` (a lock the caller holds, then its unlock) and returns once
// that thread sleeps: inside the lock's wait, since it does nothing else.
std::thread start_waiter(void (*wait)(void*), void* lock) {
  std::atomic<pid_t> tid{0};
  std::thread t([&tid, wait, lock] {
    tid = gettid();
    wait(lock);
  });
  wait_until_asleep(tid);
  return t;
}

}  // namespace

// --- the ranked locks: C ----------------------------------------------------------------------

extern "C" {
__attribute__((noinline)) void c_wait_hot(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
  pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m));
}
__attribute__((noinline)) void c_wait_warm(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
  pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m));
}
__attribute__((noinline)) void c_wait_cool(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
  pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m));
}
}

// --- the ranked locks: C++ --------------------------------------------------------------------

__attribute__((noinline)) void cxx_wait_hot(void* m) {
  std::lock_guard<std::mutex> g(*static_cast<std::mutex*>(m));
}
__attribute__((noinline)) void cxx_wait_warm(void* m) {
  std::lock_guard<std::mutex> g(*static_cast<std::mutex*>(m));
}
__attribute__((noinline)) void cxx_wait_cool(void* m) {
  std::lock_guard<std::mutex> g(*static_cast<std::mutex*>(m));
}

namespace {

// Round r (of 6): hot waits in every round, warm in the first 4, cool in the first 2. Each waiter
// starts once the one before sleeps, and the locks are let go in the other order, each once its
// waiter has finished: cool's wait lies inside warm's, warm's inside hot's.
template <class Lock>
int rank(Lock* locks[3], void (*const waits[3])(void*), void (*lock)(Lock*), void (*unlock)(Lock*)) {
  for (int r = 0; r < 6; ++r) {
    const int n = r < 2 ? 3 : r < 4 ? 2 : 1;
    for (int i = 0; i < n; ++i) lock(locks[i]);
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i) ts.push_back(start_waiter(waits[i], locks[i]));
    for (int i = n - 1; i >= 0; --i) {
      unlock(locks[i]);
      ts[static_cast<std::size_t>(i)].join();
    }
  }
  return 0;
}

int rank_c() {
  static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER,
                         c = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_t* locks[3] = {&a, &b, &c};
  void (*const waits[3])(void*) = {c_wait_hot, c_wait_warm, c_wait_cool};
  return rank<pthread_mutex_t>(
      locks, waits, [](pthread_mutex_t* m) { pthread_mutex_lock(m); },
      [](pthread_mutex_t* m) { pthread_mutex_unlock(m); });
}

int rank_cxx() {
  static std::mutex a, b, c;
  std::mutex* locks[3] = {&a, &b, &c};
  void (*const waits[3])(void*) = {cxx_wait_hot, cxx_wait_warm, cxx_wait_cool};
  return rank<std::mutex>(
      locks, waits, [](std::mutex* m) { m->lock(); }, [](std::mutex* m) { m->unlock(); });
}

int lib() {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&m);
  std::thread t = start_waiter([](void* p) { profile_lib_wait(static_cast<pthread_mutex_t*>(p)); }, &m);
  pthread_mutex_unlock(&m);
  t.join();
  return 0;
}

extern "C" __attribute__((noinline)) void many_wait(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
  pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m));
}

int many(int n) {
  std::vector<pthread_mutex_t> ms(static_cast<std::size_t>(n));
  for (auto& m : ms) pthread_mutex_init(&m, nullptr);
  for (auto& m : ms) {
    pthread_mutex_lock(&m);
    std::thread t = start_waiter(many_wait, &m);
    pthread_mutex_unlock(&m);
    t.join();
  }
  for (auto& m : ms) pthread_mutex_destroy(&m);
  return 0;
}

// --- records kept past a wait ----------------------------------------------------------------------

extern "C" __attribute__((noinline)) void held_wait(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
}

// `n` waits of one thread, the i-th on locks[(i - 1) % count], each forced: the thread that made
// this holds the i-th lock before the i-th wait (the first from here), and let_in() lets the
// waiter start its i-th wait, lets that lock go once the waiter sleeps in it and waits until that
// wait is done. The waiter lets each lock go at once, or with `hold` keeps every lock it takes
// until it has taken all `count`, then lets them all go; waiter() runs on the waiting thread.
struct forced_waits {
  forced_waits(pthread_mutex_t* ls, int locks_count, int waits, bool hold_them = false)
      : locks(ls), count(locks_count), n(waits), hold(hold_them) {
    pthread_mutex_lock(&locks[0]);
  }
  void waiter() {
    tid = gettid();
    for (int i = 1; i <= n; ++i) {
      while (go.load() != i) std::this_thread::yield();
      if (!hold) {
        many_wait(lock_of(i));
      } else {
        held_wait(lock_of(i));
        if (i % count == 0)
          for (int k = 0; k < count; ++k) pthread_mutex_unlock(&locks[k]);
      }
      done = i;
    }
  }
  void let_in() {
    for (int i = 1; i <= n; ++i) {
      if (i > 1) pthread_mutex_lock(lock_of(i));  // free: the waiter let it go (hold: its round's end)
      go = i;
      wait_until_asleep(tid);
      pthread_mutex_unlock(lock_of(i));
      while (done.load() != i) std::this_thread::yield();
    }
  }
  pthread_mutex_t* lock_of(int i) const { return &locks[(i - 1) % count]; }
  pthread_mutex_t* locks;
  int count, n;
  bool hold;
  std::atomic<int> go{0}, done{0};
  std::atomic<pid_t> tid{0};
};

// A thread's waits are recorded in batches (src/preload/profile.hpp, kPending): a thread holding
// `outer` waits 20 times on `inner` (more than the 16 records a thread keeps: batches made at
// inner's releases, outer held), then lets both go; another waits on `left` and exits holding it.
int kept() {
  static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER, inner = PTHREAD_MUTEX_INITIALIZER,
                         left = PTHREAD_MUTEX_INITIALIZER;
  forced_waits kept_waits(&inner, 1, 20);
  std::thread t([&] {
    pthread_mutex_lock(&outer);
    kept_waits.waiter();
    pthread_mutex_unlock(&outer);
  });
  kept_waits.let_in();
  t.join();
  pthread_mutex_lock(&left);
  std::thread u = start_waiter([](void* m) { pthread_mutex_lock(static_cast<pthread_mutex_t*>(m)); }, &left);
  pthread_mutex_unlock(&left);
  u.join();  // `left` stays locked by a thread that is gone: nothing takes it again

  // A thread holding `m` waits 5 times on `napped` (fewer than a release makes), then sleeps in a
  // condition wait it never leaves: its kept records are made before it sleeps there
  // (src/preload/cond.cpp), so they are in the report though the thread still runs at exit.
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, napped = PTHREAD_MUTEX_INITIALIZER;
  static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
  forced_waits nap_waits(&napped, 1, 5);
  std::thread s([&] {
    pthread_mutex_lock(&m);
    nap_waits.waiter();
    for (;;) pthread_cond_wait(&never, &m);
  });
  nap_waits.let_in();
  pthread_mutex_lock(&m);            // free once the thread is inside its condition wait
  wait_until_asleep(nap_waits.tid);  // and asleep there, its records made before
  s.detach();

  // A thread waits once on each of kHeldLocks locks, keeping every one it takes (no release between
  // its waits), twice over: the first round's waits are at sites new to their locks (made at
  // once), the second's are kept, and the 17th finds the thread's list full (kPending, 16): the 16
  // are made first. Each lock has its 2 waits.
  constexpr int kHeldLocks = 17;
  static pthread_mutex_t held[kHeldLocks];
  for (auto& h : held) pthread_mutex_init(&h, nullptr);
  forced_waits held_waits(held, kHeldLocks, 2 * kHeldLocks, true);
  std::thread f([&] { held_waits.waiter(); });
  held_waits.let_in();
  f.join();
  std::printf("inner %p left %p napped %p held %p %d %zu\n", static_cast<void*>(&inner),
              static_cast<void*>(&left), static_cast<void*>(&napped), static_cast<void*>(held), kHeldLocks,
              sizeof held[0]);
  return 0;
}

// --- fork and signals ----------------------------------------------------------------------------

pthread_mutex_t g_work = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_in_handler = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_child_only = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t g_parent_only = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> g_stop{false};
std::atomic<long> g_handled{0};

// Takes a lock in a signal handler (not async-signal-safe in POSIX, done by real programs): the
// handler may come while its thread is inside an interposed call that records, and the handlers
// of the three workers contend for it, so that its waits are recorded from handlers. The workers
// never take it themselves (a handler would wait for its own thread).
void on_signal(int) {
  pthread_mutex_lock(&g_in_handler);
  ++g_handled;
  pthread_mutex_unlock(&g_in_handler);
}

extern "C" __attribute__((noinline)) void child_only_wait(void* m) { many_wait(m); }
extern "C" __attribute__((noinline)) void parent_only_wait(void* m) { many_wait(m); }

int fork_signal() {
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigaction(SIGUSR1, &sa, nullptr);
  pthread_atfork([] { pthread_mutex_lock(&g_work); }, [] { pthread_mutex_unlock(&g_work); },
                 [] { pthread_mutex_unlock(&g_work); });
  // The statistics' first use in a thread (its class's record, its shard) takes the registry's
  // lock: a handler that waits for a lock held by a thread that waits for that registry lock,
  // which the handler's own thread holds, would never return (docs/preload.md). So every thread
  // here has counted a lock before the first signal.
  pthread_mutex_lock(&g_in_handler);
  pthread_mutex_unlock(&g_in_handler);
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  std::vector<pthread_t> handles;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&ready] {
      pthread_mutex_lock(&g_work);
      pthread_mutex_unlock(&g_work);
      ++ready;
      while (!g_stop.load()) {
        pthread_mutex_lock(&g_work);
        pthread_mutex_unlock(&g_work);
      }
    });
    handles.push_back(workers.back().native_handle());
  }
  while (ready.load() != 3) std::this_thread::yield();
  for (int i = 0; i < 2000; ++i) pthread_kill(handles[static_cast<std::size_t>(i) % handles.size()], SIGUSR1);
  const pid_t child = fork();
  if (child == 0) {
    // The only thread here: the lock the atfork handler released works, and a wait of its own.
    pthread_mutex_lock(&g_work);
    pthread_mutex_unlock(&g_work);
    pthread_mutex_lock(&g_child_only);
    std::thread t = start_waiter(child_only_wait, &g_child_only);
    pthread_mutex_unlock(&g_child_only);
    t.join();
    std::exit(0);  // normally: the profile is written at exit
  }
  for (int i = 0; i < 2000; ++i) pthread_kill(handles[static_cast<std::size_t>(i) % handles.size()], SIGUSR1);
  int status = 0;
  const bool waited = child > 0 && waitpid(child, &status, 0) == child;
  g_stop = true;
  for (auto& t : workers) t.join();
  if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "profile_prog: the child failed (status %d)\n", status);
    return 1;
  }
  pthread_mutex_lock(&g_parent_only);
  std::thread t = start_waiter(parent_only_wait, &g_parent_only);
  pthread_mutex_unlock(&g_parent_only);
  t.join();
  std::printf("child %d child_only %p parent_only %p\n", static_cast<int>(child),
              static_cast<void*>(&g_child_only), static_cast<void*>(&g_parent_only));
  return 0;
}

// --- a condition variable --------------------------------------------------------------------------

extern "C" __attribute__((noinline)) void cond_storm_wait(std::condition_variable* cv,
                                                          std::unique_lock<std::mutex>* l, const int* gen,
                                                          int seen) {
  cv->wait(*l, [&] { return *gen != seen; });
}

int cond() {
  std::mutex m;
  std::condition_variable cv;
  int gen = 0, waiting = 0;
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&] {
      std::unique_lock<std::mutex> l(m);
      for (int round = 0; round < 20; ++round) {
        ++waiting;
        cond_storm_wait(&cv, &l, &gen, round);
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    for (;;) {  // every waiter is inside the wait (it counted itself under the mutex)
      std::lock_guard<std::mutex> g(m);
      if (waiting == 4 * (round + 1)) break;
    }
    std::lock_guard<std::mutex> g(m);
    ++gen;
    cv.notify_all();
  }
  for (auto& t : ts) t.join();
  return 0;
}

// --- the sampled acquisitions --------------------------------------------------------------------

extern "C" __attribute__((noinline)) void sampled_wait(void* m) {
  pthread_mutex_lock(static_cast<pthread_mutex_t*>(m));
  pthread_mutex_unlock(static_cast<pthread_mutex_t*>(m));
}

// Two acquisitions a round, of two types in turn: a fixed sampling interval of an even length
// would count one of them only.
int sampled(long n) {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  pthread_mutex_lock(&m);
  std::thread t = start_waiter(sampled_wait, &m);
  pthread_mutex_unlock(&m);
  t.join();
  for (long i = 0; i < n; ++i) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_unlock(&rw);
  }
  std::printf("mutex %p\n", static_cast<void*>(&m));
  return 0;
}

// Short-lived threads of a few acquisitions each: each thread's estimate must be right from its
// first acquisition on.
int threads(int t, int k) {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < t; ++i) {
    std::thread([k] {
      for (int j = 0; j < k; ++j) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
      }
    }).join();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "rank") == 0) return rank_c();
  if (std::strcmp(mode, "rank-cxx") == 0) return rank_cxx();
  if (std::strcmp(mode, "lib") == 0) return lib();
  if (std::strcmp(mode, "many") == 0 && argc > 2) return many(std::atoi(argv[2]));
  if (std::strcmp(mode, "fork-signal") == 0) return fork_signal();
  if (std::strcmp(mode, "cond") == 0) return cond();
  if (std::strcmp(mode, "kept") == 0) return kept();
  if (std::strcmp(mode, "sampled") == 0 && argc > 2) return sampled(std::atol(argv[2]));
  if (std::strcmp(mode, "threads") == 0 && argc > 3) return threads(std::atoi(argv[2]), std::atoi(argv[3]));
  if (std::strcmp(mode, "exit") == 0 && argc > 2) {
    std::printf("profile_prog: out\n");
    std::fprintf(stderr, "profile_prog: err\n");
    return std::atoi(argv[2]);
  }
  if (std::strcmp(mode, "kill") == 0) {
    std::printf("profile_prog: out\n");
    std::fflush(stdout);
    raise(SIGTERM);
    return 0;
  }
  std::fprintf(stderr, "usage: profile_prog rank|rank-cxx|lib|many N|fork-signal|cond|exit CODE|kill\n");
  return 2;
}
