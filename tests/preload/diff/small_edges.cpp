// Scenario 9, smaller differences:
//   - pthread_mutex_destroy of a locked mutex gives EBUSY (glibc 2.36 checks its user count),
//     for each mutex type; unlocked, the destroy gives 0;
//   - the timed rwlock calls with tv_nsec 2e9 or -1 on a free lock give EINVAL: glibc checks the
//     deadline before it tries the lock (POSIX allows either; the interposer took the lock);
//     pthread_mutex_timedlock on a free mutex, where glibc takes the lock, beside them.
#include <pthread.h>

#include "scenario.hpp"

namespace {

struct type_name {
  int type;
  const char* name;
};
constexpr type_name kTypes[] = {{PTHREAD_MUTEX_NORMAL, "normal"},
                                {PTHREAD_MUTEX_RECURSIVE, "recursive"},
                                {PTHREAD_MUTEX_ERRORCHECK, "errorcheck"},
                                {PTHREAD_MUTEX_ADAPTIVE_NP, "adaptive"}};

}  // namespace

int main() {
  sc::begin();
  sc::step("pthread_mutex_destroy of a locked mutex");
  for (const type_name& t : kTypes) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, t.type);
    pthread_mutex_t m;
    pthread_mutex_init(&m, &a);
    sc::out("%s mutex: lock %s", t.name, sc::err(pthread_mutex_lock(&m)));
    sc::out(", destroy while locked %s", sc::err(pthread_mutex_destroy(&m)));
    sc::out(", unlock %s", sc::err(pthread_mutex_unlock(&m)));
    sc::out(", destroy %s\n", sc::err(pthread_mutex_destroy(&m)));
  }

  sc::step("timed calls with an invalid tv_nsec on a free lock");
  for (long nsec : {2'000'000'000L, -1L}) {
    timespec at = sc::in_ms(CLOCK_REALTIME, 1000);
    at.tv_nsec = nsec;
    timespec mono = sc::in_ms(CLOCK_MONOTONIC, 1000);
    mono.tv_nsec = nsec;
    static const char* const kRwCalls[] = {"pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
                                           "pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock"};
    for (int i = 0; i < 4; ++i) {
      // Each call on a free lock: whatever one took is released before the next.
      pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
      int rc;
      switch (i) {
        case 0:
          rc = pthread_rwlock_timedrdlock(&l, &at);
          break;
        case 1:
          rc = pthread_rwlock_timedwrlock(&l, &at);
          break;
        case 2:
          rc = pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &mono);
          break;
        default:
          rc = pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &mono);
      }
      sc::out("%s (tv_nsec %ld) on a free rwlock: %s\n", kRwCalls[i], nsec, sc::err(rc));
      if (rc == 0) pthread_rwlock_unlock(&l);
    }
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    int rc = pthread_mutex_timedlock(&m, &at);
    sc::out("pthread_mutex_timedlock (tv_nsec %ld) on a free mutex: %s\n", nsec, sc::err(rc));
    if (rc == 0) pthread_mutex_unlock(&m);
    rc = pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono);
    sc::out("pthread_mutex_clocklock (tv_nsec %ld) on a free mutex: %s\n", nsec, sc::err(rc));
    if (rc == 0) pthread_mutex_unlock(&m);
  }
  sc::step("end");
  sc::out("done\n");
  return 0;
}
