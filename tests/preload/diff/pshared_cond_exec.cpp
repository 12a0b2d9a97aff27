// Scenario 5: a process-shared mutex and condition variable in shared memory, used by two
// processes of which only one runs under the interposer: the parent waits (untimed), and a child
// exec'd without LD_PRELOAD (glibc's own pthread_cond_signal) signals once the parent sleeps. The
// parent must wake. The interposer kept its own condition-variable state in glibc's bytes, which
// glibc's signal does not wake (the watchdog reports the parent's wait).
#include <pthread.h>
#include <sys/mman.h>

#include "scenario.hpp"

extern char** environ;

namespace {

struct shared {
  pthread_mutex_t m;
  pthread_cond_t c;
  int flag;  // guarded by m
};

shared* map_shared(int fd) {
  void* p = mmap(nullptr, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  return static_cast<shared*>(p);
}

// The child, on glibc's locks: takes the mutex (free only once the parent waits), waits until the
// parent's thread sleeps, signals. Exit status: 0 when every call returned 0.
int signaller(int fd, pid_t parent) {
  shared* s = map_shared(fd);
  int rc = pthread_mutex_lock(&s->m);
  sc::wait_blocked(parent, parent);
  s->flag = 1;
  rc |= pthread_cond_signal(&s->c);
  rc |= pthread_mutex_unlock(&s->m);
  return rc == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  sc::begin();
  if (argc == 4 && strcmp(argv[1], "signaller") == 0) {
    sc::step("the exec'd child signals");
    return signaller(atoi(argv[2]), static_cast<pid_t>(atoi(argv[3])));
  }
  const int fd = memfd_create("spinwise-preload-diff", 0);  // not close-on-exec: the child maps it
  if (fd < 0 || ftruncate(fd, sizeof(shared)) != 0) {
    perror("memfd_create");
    return 2;
  }
  shared* s = map_shared(fd);
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
  sc::out("mutex init: %s\n", sc::err(pthread_mutex_init(&s->m, &ma)));
  sc::out("cond init: %s\n", sc::err(pthread_cond_init(&s->c, &ca)));
  s->flag = 0;

  sc::step("the parent takes the mutex and starts a child without the interposer");
  sc::out("parent lock: %s\n", sc::err(pthread_mutex_lock(&s->m)));
  char fd_arg[16], pid_arg[16];
  snprintf(fd_arg, sizeof fd_arg, "%d", fd);
  snprintf(pid_arg, sizeof pid_arg, "%d", static_cast<int>(getpid()));
  // The child's environment: this one without LD_PRELOAD.
  static char* env[512];
  int n = 0;
  for (char** e = environ; *e != nullptr && n < 511; ++e)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env[n++] = *e;
  env[n] = nullptr;
  const pid_t child = fork();
  if (child == 0) {
    char* args[] = {argv[0], const_cast<char*>("signaller"), fd_arg, pid_arg, nullptr};
    execve("/proc/self/exe", args, env);
    _exit(127);
  }
  sc::track_child(child);

  sc::step("the parent waits (pthread_cond_wait) for the exec'd child's signal");
  int rc = 0;
  while (s->flag == 0 && rc == 0) rc = pthread_cond_wait(&s->c, &s->m);
  sc::out("parent woken: %s, flag %d\n", sc::err(rc), s->flag);
  sc::out("parent unlock: %s\n", sc::err(pthread_mutex_unlock(&s->m)));
  sc::step("the child exits");
  sc::out("child: %s\n", sc::status_name(sc::wait_child(child, 5000)));
  sc::step("end");
  sc::out("done\n");
  return 0;
}
