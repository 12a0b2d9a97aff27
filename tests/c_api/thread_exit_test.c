/* Bug guarded (issue 44, item 1): a thread made a failing knob call, then a pthread key destructor
 * of the same thread made another. glibc runs key destructors after the thread's C++ thread_local
 * destructors, and the per-thread message was a thread_local std::string, already destroyed: the
 * second call wrote into its freed buffer (ASan: heap-use-after-free; without ASan, glibc's tcache
 * could abort the program later). The header promises that no call aborts, so a call from a key
 * destructor, and the message it leaves, must work like any other. spinwise_strerror's buffer for
 * unknown codes is per thread too, and is checked the same way. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <spinwise/spinwise.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8

static pthread_key_t key;

struct outcome {
  int first_rc, exit_rc, exit_message_ok, exit_strerror_ok, destructor_ran;
};

static struct outcome outcomes[THREADS];

/* Runs at thread exit, after the thread's thread_local destructors. */
static void at_thread_exit(void* arg) {
  struct outcome* o = arg;
  const char* message;
  o->destructor_ran = 1;
  /* Through apply_knobs, as the first call: a class that does not exist. */
  o->exit_rc = spinwise_set_knob("no_such_class_at_exit", "delay_unit_ns", "150");
  message = spinwise_last_message();
  o->exit_message_ok = message != NULL && strstr(message, "no_such_class_at_exit") != NULL;
  o->exit_strerror_ok = strcmp(spinwise_strerror(23456), "Unknown error 23456") == 0;
}

static void* fail_once_then_exit(void* arg) {
  struct outcome* o = arg;
  /* A long message (well past any small-string buffer), left in the thread's storage. */
  o->first_rc = spinwise_set_knob("no_such_class_in_the_thread", "delay_unit_ns", "150");
  (void)spinwise_strerror(12345);
  pthread_setspecific(key, o);
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  int i, failures = 0;
  if (pthread_key_create(&key, at_thread_exit) != 0) return 2;
  for (i = 0; i < THREADS; ++i) {
    if (pthread_create(&t[i], NULL, fail_once_then_exit, &outcomes[i]) != 0) return 2;
  }
  for (i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  for (i = 0; i < THREADS; ++i) {
    const struct outcome* o = &outcomes[i];
    if (o->first_rc != EINVAL || !o->destructor_ran || o->exit_rc != EINVAL || !o->exit_message_ok ||
        !o->exit_strerror_ok) {
      fprintf(stderr,
              "thread %d: first call %d, key destructor ran %d, its call %d, its message right %d, "
              "its strerror right %d\n",
              i, o->first_rc, o->destructor_ran, o->exit_rc, o->exit_message_ok, o->exit_strerror_ok);
      ++failures;
    }
  }
  pthread_key_delete(key);
  if (failures != 0) return 1;
  printf("spinwise C API: calls from %d pthread key destructors after thread_local destructors\n", THREADS);
  return 0;
}
