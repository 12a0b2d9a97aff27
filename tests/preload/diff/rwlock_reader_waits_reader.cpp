// Scenario 2b: thread A holds a read lock, a writer waits for the lock, and A waits for thread B
// to take a read lock too. glibc's default rwlock prefers readers: B gets its read lock, A's wait
// ends, both release, the writer gets the lock. A writer-preferring lock queues B behind the
// writer, which waits for A, which waits for B: a deadlock (the watchdog reports it).
#include <pthread.h>

#include "scenario.hpp"

namespace {

pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
sc::gate g_writer_started;
pid_t g_writer_tid = 0;

void* writer(void* p) {
  g_writer_tid = gettid();
  g_writer_started.post();
  auto* rc = static_cast<int*>(p);
  *rc = pthread_rwlock_wrlock(&g_rw);
  if (*rc == 0) *rc = pthread_rwlock_unlock(&g_rw);
  return nullptr;
}

void* reader_b(void* p) {
  auto* rc = static_cast<int*>(p);
  *rc = pthread_rwlock_rdlock(&g_rw);
  if (*rc == 0) *rc = pthread_rwlock_unlock(&g_rw);
  return nullptr;
}

}  // namespace

int main() {
  sc::begin();
  sc::step("thread A takes a read lock");
  sc::out("A rdlock: %s\n", sc::err(pthread_rwlock_rdlock(&g_rw)));
  sc::step("a writer waits");
  int writer_rc = -1, b_rc = -1;
  pthread_t w, b;
  pthread_create(&w, nullptr, writer, &writer_rc);
  g_writer_started.wait();
  sc::wait_blocked(g_writer_tid);
  sc::step("A waits for thread B to take a read lock while the writer waits");
  pthread_create(&b, nullptr, reader_b, &b_rc);
  pthread_join(b, nullptr);
  sc::out("B rdlock and unlock: %s\n", sc::err(b_rc));
  sc::step("A releases its read lock; the writer gets the lock");
  sc::out("A unlock: %s\n", sc::err(pthread_rwlock_unlock(&g_rw)));
  pthread_join(w, nullptr);
  sc::out("writer: wrlock and unlock %s\n", sc::err(writer_rc));
  sc::step("end");
  sc::out("done\n");
  return 0;
}
