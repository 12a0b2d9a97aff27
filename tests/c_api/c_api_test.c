/* Every function of <spinwise/spinwise.h> from C99, and every error code it documents. Times are
 * only ever deadlines that have passed or will pass: no duration is asserted. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <spinwise/spinwise.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c_check.h"
#include "layout_probes.h"

#define CHECK_RC(call, want)                                                                  \
  do {                                                                                        \
    int rc_ = (call);                                                                         \
    if (rc_ != (want)) {                                                                      \
      fprintf(stderr, "%s:%d: %s returned %d (%s), not %s\n", __FILE__, __LINE__, #call, rc_, \
              spinwise_strerror(rc_), #want);                                                 \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

/* A CLOCK_MONOTONIC time `ms` milliseconds from now (negative: in the past). */
static struct timespec in_ms(long ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec += 1;
    t.tv_nsec -= 1000000000L;
  } else if (t.tv_nsec < 0) {
    t.tv_sec -= 1;
    t.tv_nsec += 1000000000L;
  }
  return t;
}

static const spinwise_mutex_kind kKinds[] = {SPINWISE_MUTEX_HYBRID, SPINWISE_MUTEX_ADAPTIVE,
                                             SPINWISE_MUTEX_TAS,    SPINWISE_MUTEX_TTAS,
                                             SPINWISE_MUTEX_TICKET, SPINWISE_MUTEX_MCS};
static const char* const kKindNames[] = {"hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"};
#define KIND_COUNT 6
#define THREADS 4
#define ROUNDS 2000

/* --- many threads on one lock ------------------------------------------------------------- */

/* Never initialized by a call: the guard against a static initializer that needs one. */
static spinwise_mutex_t static_mutex = SPINWISE_MUTEX_INITIALIZER;
static spinwise_rwlock_t static_rwlock = SPINWISE_RWLOCK_INITIALIZER;
static spinwise_recursive_mutex_t static_recursive = SPINWISE_RECURSIVE_MUTEX_INITIALIZER;

struct shared_counter {
  spinwise_mutex_t* mutex;
  pthread_barrier_t* start;
  long value;
  int errors;
};

static void* count_under_mutex(void* arg) {
  struct shared_counter* c = arg;
  int i;
  pthread_barrier_wait(c->start);
  for (i = 0; i < ROUNDS; ++i) {
    int rc = (i % 3 == 0) ? spinwise_mutex_trylock(c->mutex) : spinwise_mutex_lock(c->mutex);
    if (rc == EBUSY) rc = spinwise_mutex_lock(c->mutex);
    if (rc != 0) {
      __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
      continue;
    }
    ++c->value; /* a lost update here is a lock that let two threads in */
    if (spinwise_mutex_unlock(c->mutex) != 0) __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void counts_under(spinwise_mutex_t* m, const char* what) {
  pthread_t t[THREADS];
  pthread_barrier_t start;
  struct shared_counter c;
  int i;
  pthread_barrier_init(&start, NULL, THREADS);
  c.mutex = m;
  c.start = &start;
  c.value = 0;
  c.errors = 0;
  for (i = 0; i < THREADS; ++i) CHECK(pthread_create(&t[i], NULL, count_under_mutex, &c) == 0);
  for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  if (c.value != (long)THREADS * ROUNDS || c.errors != 0) {
    fprintf(stderr, "%s: counted %ld of %ld, %d errors\n", what, c.value, (long)THREADS * ROUNDS, c.errors);
    ++failures;
  }
}

struct rw_counter {
  spinwise_rwlock_t* rw;
  long value;
  int errors;
};

/* Writers add 2 in two steps; a reader that sees an odd value was let in beside a writer. */
static void* write_and_read(void* arg) {
  struct rw_counter* c = arg;
  int i;
  for (i = 0; i < ROUNDS; ++i) {
    if (i % 4 == 0) {
      if (spinwise_rwlock_wrlock(c->rw) != 0) {
        __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
        continue;
      }
      __atomic_store_n(&c->value, c->value + 1, __ATOMIC_RELAXED);
      __atomic_store_n(&c->value, c->value + 1, __ATOMIC_RELAXED);
      if (spinwise_rwlock_wrunlock(c->rw) != 0) __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
    } else {
      if (spinwise_rwlock_rdlock(c->rw) != 0) {
        __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
        continue;
      }
      if (__atomic_load_n(&c->value, __ATOMIC_RELAXED) % 2 != 0)
        __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
      if (spinwise_rwlock_rdunlock(c->rw) != 0) __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

static void counts_under_rwlock(spinwise_rwlock_t* rw, const char* what) {
  pthread_t t[THREADS];
  struct rw_counter c;
  int i;
  c.rw = rw;
  c.value = 0;
  c.errors = 0;
  for (i = 0; i < THREADS; ++i) CHECK(pthread_create(&t[i], NULL, write_and_read, &c) == 0);
  for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  if (c.value != 2L * THREADS * (ROUNDS / 4) || c.errors != 0) {
    fprintf(stderr, "%s: counted %ld of %ld, %d errors\n", what, c.value, 2L * THREADS * (ROUNDS / 4),
            c.errors);
    ++failures;
  }
}

static void* lock_recursive_twice(void* arg) {
  spinwise_recursive_mutex_t* r = arg;
  int i;
  for (i = 0; i < ROUNDS / 4; ++i) {
    if (spinwise_recursive_mutex_lock(r) != 0 || spinwise_recursive_mutex_lock(r) != 0 ||
        spinwise_recursive_mutex_depth(r) != 2 || spinwise_recursive_mutex_unlock(r) != 0 ||
        spinwise_recursive_mutex_unlock(r) != 0) {
      return (void*)1;
    }
  }
  return NULL;
}

static void static_initializers_from_many_threads(void) {
  pthread_t t[THREADS];
  int i;
  CHECK(strcmp(spinwise_mutex_kind_name(&static_mutex), "hybrid") == 0);
  CHECK(strcmp(spinwise_rwlock_kind_name(&static_rwlock), "hybrid") == 0);
  counts_under(&static_mutex, "static mutex");
  counts_under_rwlock(&static_rwlock, "static rwlock");
  for (i = 0; i < THREADS; ++i)
    CHECK(pthread_create(&t[i], NULL, lock_recursive_twice, &static_recursive) == 0);
  for (i = 0; i < THREADS; ++i) {
    void* r = NULL;
    pthread_join(t[i], &r);
    CHECK(r == NULL);
  }
}

/* --- one thread, every call ------------------------------------------------------------------ */

struct held_probe {
  spinwise_mutex_t* mutex;
  spinwise_recursive_mutex_t* recursive;
  int trylock, timedlock, unlock, depth;
};

/* From a thread that does not hold it: the lock is busy, the owner is someone else. */
static void* probe_held(void* arg) {
  struct held_probe* p = arg;
  struct timespec soon = in_ms(2);
  if (p->mutex != NULL) {
    p->trylock = spinwise_mutex_trylock(p->mutex);
    p->timedlock = spinwise_mutex_timedlock(p->mutex, &soon);
  } else {
    p->trylock = spinwise_recursive_mutex_trylock(p->recursive);
    p->timedlock = spinwise_recursive_mutex_timedlock(p->recursive, &soon);
    p->unlock = spinwise_recursive_mutex_unlock(p->recursive);
    p->depth = (int)spinwise_recursive_mutex_depth(p->recursive);
  }
  return NULL;
}

static void mutex_kinds(void) {
  int k;
  for (k = 0; k < KIND_COUNT; ++k) {
    spinwise_mutex_t m, by_name;
    struct timespec past = in_ms(-1000), soon = in_ms(1), later = in_ms(60000), bad = in_ms(0);
    struct held_probe p;
    pthread_t t;
    size_t i;
    int zeros = 1;

    /* InitWritesZeros: on dirty memory, init leaves the kind byte and zeros. */
    memset(&m, 0xa5, sizeof m);
    CHECK_RC(spinwise_mutex_init(&m, kKinds[k]), 0);
    for (i = 1; i < sizeof m; ++i) zeros &= ((const unsigned char*)&m)[i] == 0;
    CHECK(zeros && ((const unsigned char*)&m)[0] == (unsigned char)kKinds[k]);
    if (kKinds[k] == SPINWISE_MUTEX_HYBRID) {
      spinwise_mutex_t init = SPINWISE_MUTEX_INITIALIZER;
      CHECK(memcmp(&m, &init, sizeof m) == 0);
    }
    memset(&by_name, 0x5a, sizeof by_name);
    CHECK_RC(spinwise_mutex_init_kind(&by_name, kKindNames[k]), 0);
    CHECK(memcmp(&m, &by_name, sizeof m) == 0);
    CHECK(strcmp(spinwise_mutex_kind_name(&m), kKindNames[k]) == 0);

    CHECK_RC(spinwise_mutex_unlock(&m), EPERM); /* not locked */
    CHECK_RC(spinwise_mutex_lock(&m), 0);
    CHECK_RC(spinwise_mutex_trylock(&m), EBUSY);
    CHECK_RC(spinwise_mutex_timedlock(&m, &past), ETIMEDOUT);
    CHECK_RC(spinwise_mutex_timedlock(&m, &soon), ETIMEDOUT);
    bad.tv_nsec = -1;
    CHECK_RC(spinwise_mutex_timedlock(&m, &bad), EINVAL);
    bad.tv_nsec = 1000000000L;
    CHECK_RC(spinwise_mutex_timedlock(&m, &bad), EINVAL);
    CHECK_RC(spinwise_mutex_timedlock(&m, NULL), EINVAL);
    CHECK_RC(spinwise_mutex_destroy(&m), EBUSY);
    p.mutex = &m;
    p.recursive = NULL;
    CHECK(pthread_create(&t, NULL, probe_held, &p) == 0);
    pthread_join(t, NULL);
    CHECK_RC(p.trylock, EBUSY);
    CHECK_RC(p.timedlock, ETIMEDOUT);
    CHECK_RC(spinwise_mutex_unlock(&m), 0);
    CHECK_RC(spinwise_mutex_timedlock(&m, &past), 0); /* free: a past deadline is a trylock */
    CHECK_RC(spinwise_mutex_unlock(&m), 0);
    CHECK_RC(spinwise_mutex_timedlock(&m, &later), 0);
    CHECK_RC(spinwise_mutex_unlock(&m), 0);
    CHECK_RC(spinwise_mutex_trylock(&m), 0);
    CHECK_RC(spinwise_mutex_unlock(&m), 0);

    counts_under(&m, kKindNames[k]);

    CHECK_RC(spinwise_mutex_destroy(&m), 0);
    CHECK(spinwise_mutex_kind_name(&m) == NULL);
    CHECK_RC(spinwise_mutex_lock(&m), EINVAL);
    CHECK_RC(spinwise_mutex_trylock(&m), EINVAL);
    CHECK_RC(spinwise_mutex_unlock(&m), EINVAL);
    CHECK_RC(spinwise_mutex_destroy(&m), EINVAL);
    CHECK_RC(spinwise_mutex_init(&m, kKinds[k]), 0); /* and back */
    CHECK_RC(spinwise_mutex_lock(&m), 0);
    CHECK_RC(spinwise_mutex_unlock(&m), 0);
  }
}

static void bad_arguments_change_nothing(void) {
  spinwise_mutex_t m = SPINWISE_MUTEX_INITIALIZER, before;
  spinwise_rwlock_t rw = SPINWISE_RWLOCK_INITIALIZER;
  spinwise_recursive_mutex_t r = SPINWISE_RECURSIVE_MUTEX_INITIALIZER;
  struct timespec t = in_ms(0);

  CHECK_RC(spinwise_mutex_init(&m, SPINWISE_MUTEX_TICKET), 0);
  before = m;
  CHECK_RC(spinwise_mutex_init_kind(&m, "nope"), EINVAL);
  CHECK_RC(spinwise_mutex_init_kind(&m, NULL), EINVAL);
  CHECK_RC(spinwise_mutex_init(&m, 99), EINVAL);
  CHECK(memcmp(&m, &before, sizeof m) == 0);
  CHECK_RC(spinwise_rwlock_init_kind(&rw, "ticket"), EINVAL); /* a mutex kind, no rwlock kind */
  CHECK_RC(spinwise_rwlock_init(&rw, 7), EINVAL);
  CHECK(strcmp(spinwise_rwlock_kind_name(&rw), "hybrid") == 0);
  CHECK_RC(spinwise_recursive_mutex_init_kind(&r, "nope"), EINVAL);

  CHECK_RC(spinwise_mutex_init(NULL, SPINWISE_MUTEX_HYBRID), EINVAL);
  CHECK_RC(spinwise_mutex_init_kind(NULL, "hybrid"), EINVAL);
  CHECK_RC(spinwise_mutex_destroy(NULL), EINVAL);
  CHECK(spinwise_mutex_kind_name(NULL) == NULL);
  CHECK_RC(spinwise_mutex_lock(NULL), EINVAL);
  CHECK_RC(spinwise_mutex_trylock(NULL), EINVAL);
  CHECK_RC(spinwise_mutex_timedlock(NULL, &t), EINVAL);
  CHECK_RC(spinwise_mutex_unlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_init(NULL, SPINWISE_RWLOCK_HYBRID), EINVAL);
  CHECK_RC(spinwise_rwlock_init_kind(NULL, "spin"), EINVAL);
  CHECK_RC(spinwise_rwlock_destroy(NULL), EINVAL);
  CHECK(spinwise_rwlock_kind_name(NULL) == NULL);
  CHECK_RC(spinwise_rwlock_rdlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_tryrdlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_timedrdlock(NULL, &t), EINVAL);
  CHECK_RC(spinwise_rwlock_rdunlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_wrlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_trywrlock(NULL), EINVAL);
  CHECK_RC(spinwise_rwlock_timedwrlock(NULL, &t), EINVAL);
  CHECK_RC(spinwise_rwlock_wrunlock(NULL), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_init(NULL, SPINWISE_MUTEX_HYBRID), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_init_kind(NULL, "hybrid"), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_destroy(NULL), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_lock(NULL), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_trylock(NULL), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_timedlock(NULL, &t), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_unlock(NULL), EINVAL);
  CHECK(spinwise_recursive_mutex_depth(NULL) == 0);

  /* A bad time changes nothing: the lock stays free. */
  t.tv_nsec = 1000000000L;
  CHECK_RC(spinwise_rwlock_timedrdlock(&rw, &t), EINVAL);
  CHECK_RC(spinwise_rwlock_timedwrlock(&rw, &t), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_timedlock(&r, &t), EINVAL);
  CHECK(spinwise_recursive_mutex_depth(&r) == 0);
  CHECK_RC(spinwise_rwlock_trywrlock(&rw), 0);
  CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);
  CHECK_RC(spinwise_recursive_mutex_trylock(&r), 0);
  CHECK_RC(spinwise_recursive_mutex_unlock(&r), 0);
}

static void rwlocks(void) {
  static const spinwise_rwlock_kind kinds[] = {SPINWISE_RWLOCK_HYBRID, SPINWISE_RWLOCK_SPIN};
  static const char* const names[] = {"hybrid", "spin"};
  int k;
  for (k = 0; k < 2; ++k) {
    spinwise_rwlock_t rw, by_name;
    struct timespec past = in_ms(-5), soon = in_ms(1);
    memset(&rw, 0xa5, sizeof rw);
    CHECK_RC(spinwise_rwlock_init(&rw, kinds[k]), 0);
    CHECK_RC(spinwise_rwlock_init_kind(&by_name, names[k]), 0);
    CHECK(memcmp(&rw, &by_name, sizeof rw) == 0);
    CHECK(strcmp(spinwise_rwlock_kind_name(&rw), names[k]) == 0);

    CHECK_RC(spinwise_rwlock_rdlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_timedrdlock(&rw, &past), 0);
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_timedwrlock(&rw, &soon), ETIMEDOUT);
    CHECK_RC(spinwise_rwlock_destroy(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), 0);

    soon = in_ms(1);
    CHECK_RC(spinwise_rwlock_wrlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_timedrdlock(&rw, &soon), ETIMEDOUT);
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_timedwrlock(&rw, &past), ETIMEDOUT);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_timedwrlock(&rw, &past), 0);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);

    counts_under_rwlock(&rw, names[k]);
    CHECK_RC(spinwise_rwlock_destroy(&rw), 0);
    CHECK(spinwise_rwlock_kind_name(&rw) == NULL);
    CHECK_RC(spinwise_rwlock_rdlock(&rw), EINVAL);
    CHECK_RC(spinwise_rwlock_wrlock(&rw), EINVAL);
  }
}

/* Bug guarded (issue 44, item 2): rdunlock on a free rwlock (both kinds) and wrunlock on a free
 * spin rwlock returned 0 and wrapped the lock word around, so that trywrlock and destroy said
 * EBUSY for ever. Unlocking a mode nobody holds is EPERM, as for the mutex, and changes nothing. */
static void unlock_of_a_mode_not_held(void) {
  static const spinwise_rwlock_kind kinds[] = {SPINWISE_RWLOCK_HYBRID, SPINWISE_RWLOCK_SPIN};
  int k;
  for (k = 0; k < 2; ++k) {
    spinwise_rwlock_t rw;
    const char* name;
    const int failures_before = failures;
    CHECK_RC(spinwise_rwlock_init(&rw, kinds[k]), 0);
    name = spinwise_rwlock_kind_name(&rw);
    /* Free. */
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), EPERM);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), EPERM);
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), 0);
    /* Held exclusively: no reader to let go; the writer still holds it. (Try forms only: a lock
     * the old code had wrapped around would make a waiting call wait for ever.) */
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), EPERM);
    CHECK_RC(spinwise_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), EPERM);
    /* Held shared: no writer to let go; the reader still holds it. */
    CHECK_RC(spinwise_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), EPERM);
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_rdunlock(&rw), EPERM);
    /* Usable and free after all of it. */
    CHECK_RC(spinwise_rwlock_trywrlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_wrunlock(&rw), 0);
    CHECK_RC(spinwise_rwlock_destroy(&rw), 0);
    if (failures != failures_before) fprintf(stderr, "  (rwlock kind %s)\n", name != NULL ? name : "?");
  }
  /* The static initializer's lock, never initialized by a call, alike. */
  CHECK_RC(spinwise_rwlock_rdunlock(&static_rwlock), EPERM);
  CHECK_RC(spinwise_rwlock_trywrlock(&static_rwlock), 0);
  CHECK_RC(spinwise_rwlock_wrunlock(&static_rwlock), 0);
}

static void recursive_mutexes(void) {
  int k;
  for (k = 0; k < KIND_COUNT; ++k) {
    spinwise_recursive_mutex_t r;
    struct timespec past = in_ms(-5);
    struct held_probe p;
    pthread_t t;
    uint32_t deepest = UINT32_MAX, one = 1;
    memset(&r, 0xa5, sizeof r);
    CHECK_RC(k % 2 ? spinwise_recursive_mutex_init(&r, kKinds[k])
                   : spinwise_recursive_mutex_init_kind(&r, kKindNames[k]),
             0);
    CHECK(spinwise_recursive_mutex_depth(&r) == 0);
    CHECK_RC(spinwise_recursive_mutex_unlock(&r), EPERM); /* not the owner: nobody is */
    CHECK_RC(spinwise_recursive_mutex_lock(&r), 0);
    CHECK_RC(spinwise_recursive_mutex_lock(&r), 0);
    CHECK_RC(spinwise_recursive_mutex_trylock(&r), 0);
    CHECK_RC(spinwise_recursive_mutex_timedlock(&r, &past), 0); /* the owner never waits */
    CHECK(spinwise_recursive_mutex_depth(&r) == 4);
    CHECK_RC(spinwise_recursive_mutex_destroy(&r), EBUSY);

    p.mutex = NULL;
    p.recursive = &r;
    CHECK(pthread_create(&t, NULL, probe_held, &p) == 0);
    pthread_join(t, NULL);
    CHECK_RC(p.trylock, EBUSY);
    CHECK_RC(p.timedlock, ETIMEDOUT);
    CHECK_RC(p.unlock, EPERM); /* unlock by a thread that is not the owner */
    CHECK(p.depth == 0);
    CHECK(spinwise_recursive_mutex_depth(&r) == 4); /* and the owner's depth is untouched */

    /* EAGAIN at the deepest depth. The depth is private (src/c/c_api.cpp's `recursion`: the owner,
     * then a 32-bit depth at byte 8 of owner_); 2^32 locks would take too long. */
    memcpy(r.owner_.bytes + 8, &deepest, sizeof deepest);
    CHECK_RC(spinwise_recursive_mutex_lock(&r), EAGAIN);
    CHECK_RC(spinwise_recursive_mutex_trylock(&r), EAGAIN);
    CHECK(spinwise_recursive_mutex_depth(&r) == UINT32_MAX);
    memcpy(r.owner_.bytes + 8, &one, sizeof one);
    CHECK_RC(spinwise_recursive_mutex_unlock(&r), 0);
    CHECK(spinwise_recursive_mutex_depth(&r) == 0);
    CHECK_RC(spinwise_recursive_mutex_unlock(&r), EPERM);
    CHECK_RC(spinwise_recursive_mutex_destroy(&r), 0);
    CHECK_RC(spinwise_recursive_mutex_lock(&r), EINVAL);
  }
}

/* --- knobs, profiles, statistics, messages ---------------------------------------------------- */

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static void knobs_and_profiles(const char* dir) {
  char path[512];
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "delay_unit_ns", "150"), 0);
  CHECK(strcmp(spinwise_last_message(), "") == 0);
  CHECK_RC(spinwise_set_knob("no_such_class", "delay_unit_ns", "150"), EINVAL);
  CHECK(strlen(spinwise_last_message()) > 0);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "no_such_knob", "1"), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "spin_wait_delay", "1001"), EDOM); /* 0..1000 */
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "spin_wait_delay", "six"), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "spin_wait_delay", "6,time.delay_unit_ns=1"), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex.spin_wait_delay", "x", "6"), EINVAL);
  CHECK_RC(spinwise_set_knob(NULL, "delay_unit_ns", "1"), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", NULL, "1"), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "delay_unit_ns", NULL), EINVAL);
  CHECK_RC(spinwise_set_knob("hybrid_mutex", "delay_unit_ns", ""), EINVAL);

  CHECK_RC(spinwise_check_knobs("hybrid_mutex.spin_wait_delay=6,time.delay_unit_ns=150"), 0);
  CHECK_RC(spinwise_check_knobs("hybrid_mutex.spin_wait_delay=6,hybrid_mutex.spin_wait_delay=7"), EINVAL);
  CHECK_RC(spinwise_check_knobs(NULL), EINVAL);
  CHECK_RC(spinwise_apply_knobs("hybrid_mutex.spin_wait_delay=6,adaptive.spin_cpu_pct=20"), 0);
  CHECK_RC(spinwise_apply_knobs("adaptive.spin_cpu_pct=0"), EDOM);
  CHECK_RC(spinwise_apply_knobs(NULL), EINVAL);

  snprintf(path, sizeof path, "%s/no-such-file", dir);
  CHECK_RC(spinwise_load_knobs(path), ENOENT);
  CHECK_RC(spinwise_load_profile(path), ENOENT);
  CHECK(strlen(spinwise_last_message()) > 0);
  CHECK_RC(spinwise_load_knobs(NULL), EINVAL);
  CHECK_RC(spinwise_load_profile(NULL), EINVAL);
  snprintf(path, sizeof path, "%s/knobs.conf", dir);
  write_file(path, "# a comment\nhybrid_mutex.spin_wait_delay = 5\n");
  CHECK_RC(spinwise_load_knobs(path), 0);
  write_file(path, "hybrid_mutex.spin_wait_delay = 5000\n");
  CHECK_RC(spinwise_load_knobs(path), EDOM);
  snprintf(path, sizeof path, "%s/profile.json", dir);
  write_file(path, "{ not json");
  CHECK_RC(spinwise_load_profile(path), EINVAL);

  {
    /* A message longer than the thread's buffer (1023 bytes) is cut, ending in "...". */
    static char long_class[3000];
    const char* message;
    memset(long_class, 'x', sizeof long_class - 1);
    CHECK_RC(spinwise_set_knob(long_class, "delay_unit_ns", "150"), EINVAL);
    message = spinwise_last_message();
    CHECK(strlen(message) == 1023 && strcmp(message + 1020, "...") == 0 && strstr(message, "xxxx") != NULL);
  }

  unsetenv("SPINWISE_PROFILE");
  unsetenv("SPINWISE_RELAX");
  unsetenv("SPINWISE_KNOBS");
  CHECK_RC(spinwise_configure_from_env(), 0);
  setenv("SPINWISE_KNOBS", "hybrid_mutex.spin_wait_delay=4", 1);
  CHECK_RC(spinwise_configure_from_env(), 0);
  setenv("SPINWISE_KNOBS", "hybrid_mutex.nope=4", 1);
  CHECK_RC(spinwise_configure_from_env(), EINVAL);
  CHECK(strstr(spinwise_last_message(), "nope") != NULL);
  unsetenv("SPINWISE_KNOBS");
}

static void statistics(void) {
  static const spinwise_stats_format formats[] = {SPINWISE_STATS_TEXT, SPINWISE_STATS_JSON,
                                                  SPINWISE_STATS_PROMETHEUS};
  int f;
  for (f = 0; f < 3; ++f) {
    size_t needed = 0, again = 0;
    char small[4] = "abc";
    char* buf;
    CHECK_RC(spinwise_stats_report(formats[f], NULL, 0, &needed), ERANGE);
    CHECK(needed > 1);
    CHECK_RC(spinwise_stats_report(formats[f], small, sizeof small, NULL), ERANGE);
    CHECK(strcmp(small, "abc") == 0); /* left as it was */
    needed += 4096;                   /* room for what other threads may add meanwhile */
    buf = malloc(needed);
    CHECK(buf != NULL);
    if (buf == NULL) continue;
    CHECK_RC(spinwise_stats_report(formats[f], buf, needed, &again), 0);
    CHECK(again == strlen(buf) + 1);
    CHECK(strstr(buf, "c.hybrid") != NULL);
    CHECK(strstr(buf, "c.rwlock.spin") != NULL);
    free(buf);
  }
  CHECK_RC(spinwise_stats_report(9, NULL, 0, NULL), EINVAL);
  CHECK_RC(spinwise_stats_report(SPINWISE_STATS_JSON, NULL, 10, NULL), EINVAL);
  CHECK_RC(spinwise_stats_reset(), 0);
}

static void error_names(void) {
  static const int codes[] = {0,    EINVAL, EBUSY,  ETIMEDOUT, EPERM, EAGAIN, ENOMEM,
                              EDOM, ERANGE, ENOENT, EIO,       EFBIG, EEXIST, ENOTSUP};
  size_t i;
  for (i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
    const char* s = spinwise_strerror(codes[i]);
    CHECK(s != NULL && strcmp(s, spinwise_strerror(-12345)) != 0);
  }
  CHECK(spinwise_strerror(-12345) != NULL);
}

/* Bug guarded (issue 44, item 5): what the header says, word for word. */

static void header_promises(void) {
  spinwise_mutex_t m;
  spinwise_rwlock_t rw;
  spinwise_recursive_mutex_t r;

  /* "Unknown error N" for a code this API does not return (it said "unknown error"), as glibc. */
  CHECK(strcmp(spinwise_strerror(12345), "Unknown error 12345") == 0);
  CHECK(strcmp(spinwise_strerror(-7), "Unknown error -7") == 0);
#ifdef __GLIBC__
  CHECK(strcmp(spinwise_strerror(12345), strerror(12345)) == 0);
#endif

  /* kind_name: all zeros is the static initializer's hybrid lock; NULL for a destroyed lock and
   * for bytes whose kind byte names no kind. */
  memset(&m, 0, sizeof m);
  CHECK(spinwise_mutex_kind_name(&m) != NULL && strcmp(spinwise_mutex_kind_name(&m), "hybrid") == 0);
  memset(&rw, 0, sizeof rw);
  CHECK(spinwise_rwlock_kind_name(&rw) != NULL && strcmp(spinwise_rwlock_kind_name(&rw), "hybrid") == 0);
  memset(&m, 0xa5, sizeof m);
  CHECK(spinwise_mutex_kind_name(&m) == NULL);
  CHECK_RC(spinwise_mutex_lock(&m), EINVAL);
  memset(&rw, 0xa5, sizeof rw);
  CHECK(spinwise_rwlock_kind_name(&rw) == NULL);
  CHECK_RC(spinwise_rwlock_rdunlock(&rw), EINVAL);

  /* After destroy every call but init is EINVAL: the recursive unlock said EPERM. */
  CHECK_RC(spinwise_recursive_mutex_init(&r, SPINWISE_MUTEX_TICKET), 0);
  CHECK_RC(spinwise_recursive_mutex_destroy(&r), 0);
  CHECK_RC(spinwise_recursive_mutex_unlock(&r), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_lock(&r), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_trylock(&r), EINVAL);
  CHECK_RC(spinwise_recursive_mutex_destroy(&r), EINVAL);
  CHECK(spinwise_recursive_mutex_depth(&r) == 0);
  CHECK_RC(spinwise_recursive_mutex_init(&r, SPINWISE_MUTEX_HYBRID), 0);
  CHECK_RC(spinwise_recursive_mutex_lock(&r), 0);
  CHECK_RC(spinwise_recursive_mutex_unlock(&r), 0);

  /* 8-byte aligned (layout_test.c checks it for i386 at compile time). */
  CHECK(offsetof(struct mutex_probe, m) == 8);
  CHECK(offsetof(struct rwlock_probe, rw) == 8);
  CHECK(offsetof(struct recursive_probe, r) == 8);

  /* The version: the header's macros are the project's, and the library says which it is. */
  CHECK(strcmp(SPINWISE_VERSION_STRING, SPINWISE_EXPECTED_VERSION) == 0);
  CHECK(SPINWISE_VERSION ==
        SPINWISE_VERSION_MAJOR * 1000000L + SPINWISE_VERSION_MINOR * 1000L + SPINWISE_VERSION_PATCH);
  CHECK(spinwise_version() == SPINWISE_VERSION);
}

int main(void) {
  char dir[] = "/tmp/spinwise-c-api-XXXXXX";
  char path[600];
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  static_initializers_from_many_threads();
  mutex_kinds();
  bad_arguments_change_nothing();
  rwlocks();
  unlock_of_a_mode_not_held();
  recursive_mutexes();
  header_promises();
  knobs_and_profiles(dir);
  statistics();
  error_names();
  snprintf(path, sizeof path, "%s/knobs.conf", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/profile.json", dir);
  remove(path);
  remove(dir);
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("spinwise C API: every check passed\n");
  return 0;
}
