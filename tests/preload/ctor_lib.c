/* A library whose constructor takes locks: loaded before libspinwise-preload.so in LD_PRELOAD, its
 * constructor runs before the interposer's (ctor_lib_before_interposer says whether it did), and
 * its calls must reach the interposer all the same (the statistics count them). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif
int ctor_lib_ok = 0;                 /* 1: every step gave what POSIX says; < 0: the step that failed */
int ctor_lib_before_interposer = -1; /* 1: the interposer's constructor had not run yet */
#ifdef __cplusplus
}
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rm = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t em = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

__attribute__((constructor)) static void ctor_lib_start(void) {
  const int* constructed = (const int*)dlsym(RTLD_DEFAULT, "spinwise_preload_constructed");
  if (constructed != NULL) ctor_lib_before_interposer = *constructed == 0;
  if (pthread_mutex_lock(&m) != 0 || pthread_mutex_unlock(&m) != 0) {
    ctor_lib_ok = -1;
    return;
  }
  if (pthread_mutex_lock(&rm) != 0 || pthread_mutex_lock(&rm) != 0 || pthread_mutex_unlock(&rm) != 0 ||
      pthread_mutex_unlock(&rm) != 0) {
    ctor_lib_ok = -2;
    return;
  }
  /* 37 error-checking acquisitions: the statistics check looks for at least that many. */
  for (int i = 0; i < 37; ++i) {
    if (pthread_mutex_lock(&em) != 0 || pthread_mutex_lock(&em) != EDEADLK ||
        pthread_mutex_unlock(&em) != 0) {
      ctor_lib_ok = -3;
      return;
    }
  }
  if (pthread_rwlock_rdlock(&rw) != 0 || pthread_rwlock_unlock(&rw) != 0 || pthread_rwlock_wrlock(&rw) != 0 ||
      pthread_rwlock_unlock(&rw) != 0) {
    ctor_lib_ok = -4;
    return;
  }
  struct timespec at;
  clock_gettime(CLOCK_REALTIME, &at);
  at.tv_nsec += 1000000;
  if (at.tv_nsec >= 1000000000) {
    at.tv_sec += 1;
    at.tv_nsec -= 1000000000;
  }
  pthread_mutex_lock(&m);
  const int rc = pthread_cond_timedwait(&c, &m, &at);
  pthread_mutex_unlock(&m);
  ctor_lib_ok = rc == ETIMEDOUT ? 1 : -5;
}
