// Scenario 4: a pthread call returns its error; it leaves errno alone (glibc's do: POSIX says no
// pthread function sets errno). errno is set to 12345 before each call and checked after:
// timed-out pthread_cond_timedwait, pthread_mutex_timedlock and pthread_rwlock_timedrdlock, a
// contended pthread_mutex_lock (the caller waits), and a pthread_cond_wait woken by a signal. The
// interposer's futex calls left ETIMEDOUT, EAGAIN or EINTR there.
#include <pthread.h>

#include "scenario.hpp"

namespace {

constexpr int kMarker = 12345;

pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_c = PTHREAD_COND_INITIALIZER;
pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
int g_flag = 0;  // guarded by g_m
pid_t g_main_tid = 0;
std::atomic<int> g_main_locks{0};  // the main thread's next action is the contended lock
sc::gate g_holding, g_release, g_released;

void report(const char* what, int rc, int e) {
  sc::out("%s: %s, errno %s\n", what, sc::err(rc), e == kMarker ? "unchanged" : "changed");
}

// Holds g_m until told to release it.
void* mutex_holder(void*) {
  pthread_mutex_lock(&g_m);
  g_holding.post();
  g_release.wait();
  pthread_mutex_unlock(&g_m);
  g_released.post();
  return nullptr;
}

// Holds g_m until the main thread waits for it, then releases it.
void* mutex_holder_until_contended(void*) {
  pthread_mutex_lock(&g_m);
  g_holding.post();
  while (g_main_locks.load() == 0) usleep(100);  // until then it may still sleep in the handshake
  sc::wait_blocked(g_main_tid);
  pthread_mutex_unlock(&g_m);
  return nullptr;
}

void* rw_writer(void*) {
  pthread_rwlock_wrlock(&g_rw);
  g_holding.post();
  g_release.wait();
  pthread_rwlock_unlock(&g_rw);
  g_released.post();
  return nullptr;
}

// Signals once the main thread sleeps in pthread_cond_wait (it holds the mutex then: the waiter
// released it inside the wait).
void* signaller(void*) {
  pthread_mutex_lock(&g_m);
  sc::wait_blocked(g_main_tid);
  g_flag = 1;
  pthread_cond_signal(&g_c);
  pthread_mutex_unlock(&g_m);
  return nullptr;
}

}  // namespace

int main() {
  sc::begin();
  g_main_tid = gettid();
  pthread_t t;
  int rc, e;

  sc::step("timed-out pthread_cond_timedwait");
  pthread_mutex_lock(&g_m);
  timespec at = sc::in_ms(CLOCK_REALTIME, 50);
  errno = kMarker;
  rc = pthread_cond_timedwait(&g_c, &g_m, &at);
  e = errno;
  pthread_mutex_unlock(&g_m);
  report("pthread_cond_timedwait timed out", rc, e);

  sc::step("timed-out pthread_mutex_timedlock");
  pthread_create(&t, nullptr, mutex_holder, nullptr);
  g_holding.wait();
  at = sc::in_ms(CLOCK_REALTIME, 50);
  errno = kMarker;
  rc = pthread_mutex_timedlock(&g_m, &at);
  e = errno;
  g_release.post();
  g_released.wait();
  pthread_join(t, nullptr);
  report("pthread_mutex_timedlock timed out", rc, e);

  sc::step("timed-out pthread_rwlock_timedrdlock");
  pthread_create(&t, nullptr, rw_writer, nullptr);
  g_holding.wait();
  at = sc::in_ms(CLOCK_REALTIME, 50);
  errno = kMarker;
  rc = pthread_rwlock_timedrdlock(&g_rw, &at);
  e = errno;
  g_release.post();
  g_released.wait();
  pthread_join(t, nullptr);
  report("pthread_rwlock_timedrdlock timed out", rc, e);

  sc::step("contended pthread_mutex_lock");
  pthread_create(&t, nullptr, mutex_holder_until_contended, nullptr);
  g_holding.wait();
  g_main_locks.store(1);
  errno = kMarker;
  rc = pthread_mutex_lock(&g_m);
  e = errno;
  pthread_mutex_unlock(&g_m);
  pthread_join(t, nullptr);
  report("pthread_mutex_lock contended", rc, e);

  sc::step("pthread_cond_wait woken by pthread_cond_signal");
  pthread_mutex_lock(&g_m);
  g_flag = 0;
  pthread_create(&t, nullptr, signaller, nullptr);
  errno = kMarker;
  rc = 0;
  while (g_flag == 0 && rc == 0) rc = pthread_cond_wait(&g_c, &g_m);
  e = errno;
  pthread_mutex_unlock(&g_m);
  pthread_join(t, nullptr);
  report("pthread_cond_wait woken by a signal", rc, e);

  sc::step("end");
  sc::out("done\n");
  return 0;
}
