/* The interposer's own cost on calls that never wait: one thread locks and unlocks a mutex, signals
 * a condition variable nobody waits on, and read-locks and unlocks a rwlock, N rounds, while a
 * second thread sleeps (a threaded process, as every program that has locks is). The
 * real-program harness's probe of what the interposer adds to a call (run.py,
 * docs/engines.md, "Real programs under the interposer"): with arms KIND and KIND@base it compares
 * two builds' uncontended paths run for run. Plain C on pthreads, nothing of spinwise's.
 *
 *   spinwise-uncontended-calls [--rounds N]
 *
 * Prints one line: "calls X seconds T" (5 calls a round); exit 0, 1 when a call failed, 2 for a
 * bad flag. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_stop = PTHREAD_COND_INITIALIZER;
static int g_stopped;

static void* sleeper(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_stop_lock);
  while (!g_stopped) pthread_cond_wait(&g_stop, &g_stop_lock);
  pthread_mutex_unlock(&g_stop_lock);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  long rounds = 10000000;
  for (int i = 1; i < argc; ++i) {
    char* end = NULL;
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = strtol(argv[++i], &end, 10);
      if (*end != '\0' || rounds <= 0) {
        fprintf(stderr, "uncontended_calls: --rounds wants a positive number, not '%s'\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: %s [--rounds N]\n", argv[0]);
      return 2;
    }
  }
  pthread_t t;
  if (pthread_create(&t, NULL, sleeper, NULL) != 0) return 1;
  pthread_mutex_t m;
  pthread_cond_t c;
  pthread_rwlock_t rw;
  pthread_mutex_init(&m, NULL);
  pthread_cond_init(&c, NULL);
  pthread_rwlock_init(&rw, NULL);
  int failed = 0;
  const double start = now();
  for (long r = 0; r < rounds; ++r) {
    failed |= pthread_mutex_lock(&m);
    failed |= pthread_cond_signal(&c);
    failed |= pthread_mutex_unlock(&m);
    failed |= pthread_rwlock_rdlock(&rw);
    failed |= pthread_rwlock_unlock(&rw);
  }
  const double seconds = now() - start;
  pthread_mutex_lock(&g_stop_lock);
  g_stopped = 1;
  pthread_cond_signal(&g_stop);
  pthread_mutex_unlock(&g_stop_lock);
  pthread_join(t, NULL);
  printf("calls %ld seconds %.6f\n", 5 * rounds, seconds);
  return failed != 0 ? 1 : 0;
}
