// Scenario 1: pthread_cond_wait and pthread_cond_timedwait are cancellation points (POSIX; glibc's
// are). A thread cancelled while it waits ends with PTHREAD_CANCELED, and its cleanup handler runs
// with the mutex held again: the mutex is error-checking, so the handler's unlock returns 0 only
// if the thread owns it. Three ways in: blocked in pthread_cond_wait, blocked in
// pthread_cond_timedwait with a deadline an hour away, and entering pthread_cond_wait with a cancel
// already pending (requested while cancellation was disabled, enabled again just before the wait).
// The interposer's wait was no cancellation point: the thread waited on, and is then woken by a
// broadcast to show what it returned.
#include <pthread.h>

#include "scenario.hpp"

namespace {

enum class how { wait, timedwait, pending };

pthread_mutex_t g_m;
pthread_cond_t g_c = PTHREAD_COND_INITIALIZER;
int g_go = 0;           // guarded by g_m
int g_handler_ran = 0;  // written by the cancelled thread, read after the join
int g_handler_unlock = -1;

struct waiter_arg {
  how h;
  pid_t tid = 0;
  sc::gate started;    // the waiter holds g_m
  sc::gate cancelled;  // pending: the cancel was requested
};

void cleanup(void*) {
  g_handler_ran = 1;
  g_handler_unlock = pthread_mutex_unlock(&g_m);
}

// No stdio here: a cancel may be pending, and printing is a cancellation point.
void* waiter(void* p) {
  auto* a = static_cast<waiter_arg*>(p);
  if (a->h == how::pending) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
  pthread_mutex_lock(&g_m);
  pthread_cleanup_push(cleanup, nullptr);
  a->tid = gettid();
  a->started.post();
  if (a->h == how::pending) {
    a->cancelled.wait();
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);  // not a cancellation point
  }
  const timespec far = sc::in_ms(CLOCK_REALTIME, 3600 * 1000L);
  while (g_go == 0) {
    if (a->h == how::timedwait)
      pthread_cond_timedwait(&g_c, &g_m, &far);
    else
      pthread_cond_wait(&g_c, &g_m);
  }
  pthread_cleanup_pop(0);
  pthread_mutex_unlock(&g_m);
  return nullptr;
}

void run(how h, const char* name, const char* step_name) {
  sc::step(step_name);
  g_go = 0;
  g_handler_ran = 0;
  g_handler_unlock = -1;
  waiter_arg a;
  a.h = h;
  pthread_t t;
  pthread_create(&t, nullptr, waiter, &a);
  a.started.wait();
  int cancel_rc;
  if (h == how::pending) {
    cancel_rc = pthread_cancel(t);
    a.cancelled.post();
  } else {
    // Taking the mutex means the waiter released it inside the wait; then wait until it sleeps.
    pthread_mutex_lock(&g_m);
    pthread_mutex_unlock(&g_m);
    sc::wait_blocked(a.tid);
    cancel_rc = pthread_cancel(t);
  }
  void* result = nullptr;
  const timespec bound = sc::in_ms(CLOCK_REALTIME, 5000);
  int join_rc = pthread_timedjoin_np(t, &result, &bound);
  const char* joined = "joined";
  if (join_rc == ETIMEDOUT) {
    // Still waiting: the wait was no cancellation point. Wake it to see how it ends.
    joined = "still waiting 5 s after the cancel; woken by a broadcast";
    pthread_mutex_lock(&g_m);
    g_go = 1;
    pthread_cond_broadcast(&g_c);
    pthread_mutex_unlock(&g_m);
    join_rc = pthread_join(t, &result);
  }
  sc::out("%s: cancel=%s %s join=%s result=%s handler=%s unlock-in-handler=%s\n", name, sc::err(cancel_rc),
          joined, sc::err(join_rc), result == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned",
          g_handler_ran ? "ran" : "did-not-run", g_handler_ran ? sc::err(g_handler_unlock) : "-");
  // The handler released the mutex (or the thread did): it is free.
  sc::out("%s: mutex free afterwards=%s\n", name, pthread_mutex_trylock(&g_m) == 0 ? "yes" : "no");
  pthread_mutex_unlock(&g_m);
}

}  // namespace

int main() {
  sc::begin();
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&g_m, &ma);
  run(how::wait, "cond_wait", "cancel a thread blocked in pthread_cond_wait");
  run(how::timedwait, "cond_timedwait",
      "cancel a thread blocked in pthread_cond_timedwait (deadline in 1 h)");
  run(how::pending, "pending", "a thread enters pthread_cond_wait with a cancel pending");
  sc::step("end");
  sc::out("done\n");
  return 0;
}
