// Scenario 8: the pthread_atfork pattern on a normal mutex, and what glibc tolerates of it.
// Each part runs in a process of its own (this program again, with the part's name), since
// pthread_atfork handlers cannot be removed:
//   queued        prepare locks the mutex, parent and child unlock it; two threads wait on the
//                 mutex when fork() runs. The child (whose copies of those threads do not exist)
//                 must be able to lock it; in the parent both waiters get it.
//   nested        the same handlers, and a child handler that forks again: the grandchild, too,
//                 must be able to lock the mutex.
//   double-unlock a normal mutex unlocked twice (glibc returns 0 and the mutex stays usable): then
//                 lock, a trylock from another thread (EBUSY), unlock, a trylock (0).
// A child reports by its exit status; its watchdog ends it after 4 s, and one alive after 8 s
// counts as hung and is killed.
#include <pthread.h>

#include "scenario.hpp"

namespace {

pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;

void prepare() { pthread_mutex_lock(&g_m); }
void unlock_handler() { pthread_mutex_unlock(&g_m); }

// In a forked process: lock and unlock the mutex, bounded by a watchdog of its own (a child
// inherits no alarm). 0: both returned 0.
int lock_in_child() {
  alarm(4);  // sc::on_alarm: prints the step and exits with kHangExit, before the parent's bound
  const int rc = pthread_mutex_lock(&g_m) | pthread_mutex_unlock(&g_m);
  return rc == 0 ? 0 : 1;
}

// --- queued -----------------------------------------------------------------------------------

struct waiter {
  pthread_t t;
  pid_t tid = 0;
  std::atomic<int> go{0};
  std::atomic<int> going{0};  // saw go: its next action is the lock, no system call between
  int rc = -1;
};
waiter g_waiters[2];

void* wait_on_mutex(void* p) {
  auto* w = static_cast<waiter*>(p);
  w->tid = gettid();
  while (w->go.load() == 0) usleep(100);
  w->going.store(1);
  w->rc = pthread_mutex_lock(&g_m);
  w->rc |= pthread_mutex_unlock(&g_m);
  return nullptr;
}

// Prepare handler of the queued part: holds the mutex, then lets both threads queue on it.
void prepare_and_queue() {
  pthread_mutex_lock(&g_m);
  for (auto& w : g_waiters) {
    w.go.store(1);
    // Asleep in its usleep() would pass for asleep in the lock: first see it leave the loop.
    while (w.going.load() == 0) usleep(50);
    sc::wait_blocked(w.tid);
  }
}

int part_queued() {
  pthread_atfork(prepare_and_queue, unlock_handler, unlock_handler);
  for (auto& w : g_waiters) pthread_create(&w.t, nullptr, wait_on_mutex, &w);
  for (auto& w : g_waiters)
    while (w.tid == 0) usleep(100);
  sc::step("queued: fork while two threads wait on the mutex", 20);
  const pid_t pid = fork();
  if (pid == 0) _exit(lock_in_child());
  sc::track_child(pid);
  sc::out("queued: child locks the mutex: %s\n", sc::status_name(sc::wait_child(pid, 8000)));
  sc::step("queued: the parent's waiters get the mutex");
  for (auto& w : g_waiters) {
    pthread_join(w.t, nullptr);
    sc::out("queued: a waiter in the parent: %s\n", sc::err(w.rc));
  }
  return 0;
}

// --- nested -----------------------------------------------------------------------------------

int g_depth = 0;
int g_grandchild_status = 0;

void fork_again() {
  if (g_depth != 0) return;
  g_depth = 1;
  const pid_t pid = fork();
  if (pid == 0) _exit(lock_in_child());
  g_grandchild_status = sc::wait_child(pid, 8000);
}

int part_nested() {
  pthread_atfork(prepare, unlock_handler, unlock_handler);
  pthread_atfork(nullptr, nullptr, fork_again);  // runs after the unlock in the child
  sc::step("nested: fork; the child handler forks again", 20);
  const pid_t pid = fork();
  if (pid == 0) {
    const int own = lock_in_child();
    const int gc = g_grandchild_status;
    _exit(own != 0 ? 1 : gc == -1 ? 2 : (WIFEXITED(gc) && WEXITSTATUS(gc) == 0) ? 0 : 3);
  }
  sc::track_child(pid);
  sc::out("nested: child (1: child's lock failed, 2: grandchild hung, 3: grandchild's lock failed): %s\n",
          sc::status_name(sc::wait_child(pid, 15000)));
  sc::step("nested: the parent locks the mutex");
  sc::out("nested: parent lock and unlock: %s\n",
          sc::err(pthread_mutex_lock(&g_m) | pthread_mutex_unlock(&g_m)));
  return 0;
}

// --- double-unlock ----------------------------------------------------------------------------

int g_try_rc = -1;
void* try_other(void*) {
  g_try_rc = pthread_mutex_trylock(&g_m);
  if (g_try_rc == 0) pthread_mutex_unlock(&g_m);
  return nullptr;
}
int trylock_from_another_thread() {
  pthread_t t;
  pthread_create(&t, nullptr, try_other, nullptr);
  pthread_join(t, nullptr);
  return g_try_rc;
}

int part_double_unlock(int type, const char* name) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, type);
  pthread_mutex_init(&g_m, &a);
  sc::step("double-unlock: lock, unlock, unlock again");
  sc::out("%s: lock %s", name, sc::err(pthread_mutex_lock(&g_m)));
  sc::out(", unlock %s", sc::err(pthread_mutex_unlock(&g_m)));
  sc::out(", second unlock %s\n", sc::err(pthread_mutex_unlock(&g_m)));
  sc::step("double-unlock: the mutex afterwards");
  sc::out("%s: then lock %s", name, sc::err(pthread_mutex_lock(&g_m)));
  sc::out(", trylock by another thread %s", sc::err(trylock_from_another_thread()));
  sc::out(", unlock %s", sc::err(pthread_mutex_unlock(&g_m)));
  sc::out(", trylock by another thread %s\n", sc::err(trylock_from_another_thread()));
  pthread_mutex_destroy(&g_m);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sc::begin();
  if (argc == 2) {
    if (strcmp(argv[1], "queued") == 0) return part_queued();
    if (strcmp(argv[1], "nested") == 0) return part_nested();
    if (strcmp(argv[1], "double-unlock") == 0) {
      part_double_unlock(PTHREAD_MUTEX_NORMAL, "normal");
      return part_double_unlock(PTHREAD_MUTEX_ADAPTIVE_NP, "adaptive");
    }
    return 2;
  }
  for (const char* part : {"queued", "nested", "double-unlock"}) {
    sc::step(part, 40);  // the part's own watchdog names its step first
    const pid_t pid = fork();
    if (pid == 0) {
      char* args[] = {argv[0], const_cast<char*>(part), nullptr};
      execv("/proc/self/exe", args);
      _exit(127);
    }
    sc::track_child(pid);
    sc::out("part %s: %s\n", part, sc::status_name(sc::wait_child(pid, 35000)));
  }
  sc::step("end");
  sc::out("done\n");
  return 0;
}
