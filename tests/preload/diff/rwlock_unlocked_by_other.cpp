// Scenario 3: thread A's read lock is released by another thread (glibc's rwlock does not track
// which thread reads, so the unlock returns 0 and the lock is free). Then, while the main thread
// holds the lock for writing, A's timed read lock must time out (ETIMEDOUT), and once the writer
// left, A's write lock works. The interposer still counted the read lock as A's: the timed read
// lock "re-entered" a lock held for writing (0), and the write lock gave EDEADLK.
#include <pthread.h>

#include "scenario.hpp"

namespace {

pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
sc::gate g_a_read, g_go_timed, g_a_timed, g_go_write, g_a_done;
int g_rd_rc = -1, g_timed_rc = -1, g_timed_unlock_rc = -1, g_wr_rc = -1, g_wr_unlock_rc = -1;

void* thread_a(void*) {
  g_rd_rc = pthread_rwlock_rdlock(&g_rw);
  g_a_read.post();
  g_go_timed.wait();
  const timespec at = sc::in_ms(CLOCK_REALTIME, 100);
  g_timed_rc = pthread_rwlock_timedrdlock(&g_rw, &at);
  if (g_timed_rc == 0) g_timed_unlock_rc = pthread_rwlock_unlock(&g_rw);
  g_a_timed.post();
  g_go_write.wait();
  g_wr_rc = pthread_rwlock_wrlock(&g_rw);
  if (g_wr_rc == 0) g_wr_unlock_rc = pthread_rwlock_unlock(&g_rw);
  g_a_done.post();
  return nullptr;
}

}  // namespace

int main() {
  sc::begin();
  pthread_t a;
  sc::step("thread A takes a read lock");
  pthread_create(&a, nullptr, thread_a, nullptr);
  g_a_read.wait();
  sc::out("A rdlock: %s\n", sc::err(g_rd_rc));
  sc::step("the main thread releases A's read lock");
  sc::out("main unlocks A's read lock: %s\n", sc::err(pthread_rwlock_unlock(&g_rw)));
  sc::step("the main thread takes the write lock");
  sc::out("main wrlock: %s\n", sc::err(pthread_rwlock_wrlock(&g_rw)));
  sc::step("A's timed read lock (100 ms) while the main thread writes");
  g_go_timed.post();
  g_a_timed.wait();
  sc::out("A timedrdlock while main writes: %s", sc::err(g_timed_rc));
  if (g_timed_rc == 0) sc::out(" (then its unlock: %s)", sc::err(g_timed_unlock_rc));
  sc::out("\n");
  sc::step("the main thread releases the write lock");
  sc::out("main unlock: %s\n", sc::err(pthread_rwlock_unlock(&g_rw)));
  sc::step("A takes the write lock");
  g_go_write.post();
  g_a_done.wait();
  sc::out("A wrlock: %s", sc::err(g_wr_rc));
  if (g_wr_rc == 0) sc::out(" (then its unlock: %s)", sc::err(g_wr_unlock_rc));
  sc::out("\n");
  pthread_join(a, nullptr);
  sc::step("the lock is free afterwards");
  const int w = pthread_rwlock_trywrlock(&g_rw);
  sc::out("main trywrlock: %s\n", sc::err(w));
  if (w == 0) pthread_rwlock_unlock(&g_rw);
  sc::step("end");
  sc::out("done\n");
  return 0;
}
