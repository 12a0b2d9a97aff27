// Scenario 2a: a thread that holds read locks on 9 rwlocks takes the 9th again for reading while a
// writer waits for it. POSIX lets a thread take a read lock it holds; glibc's default rwlock
// prefers readers, so the second read lock is granted at once and the writer gets the lock when
// both read locks are gone. The interposer remembered 8 rwlocks per thread and took the 9th as a
// first read lock, queued behind the writer that waits for this very reader: a deadlock (the
// watchdog reports it).
#include <pthread.h>

#include "scenario.hpp"

namespace {

constexpr int kLocks = 9;
pthread_rwlock_t g_rw[kLocks];
sc::gate g_held, g_go, g_done, g_finish, g_writer_started;
int g_again_rc = -1, g_unlock_rc = 0;
pid_t g_writer_tid = 0;

void* reader(void*) {
  int rc = 0;
  for (auto& rw : g_rw) rc |= pthread_rwlock_rdlock(&rw);
  if (rc != 0) sc::out("a first read lock failed\n");
  g_held.post();
  g_go.wait();
  g_again_rc = pthread_rwlock_rdlock(&g_rw[kLocks - 1]);
  g_done.post();
  g_finish.wait();
  if (g_again_rc == 0) g_unlock_rc |= pthread_rwlock_unlock(&g_rw[kLocks - 1]);
  for (auto& rw : g_rw) g_unlock_rc |= pthread_rwlock_unlock(&rw);
  return nullptr;
}

void* writer(void* p) {
  g_writer_tid = gettid();
  g_writer_started.post();
  auto* rc = static_cast<int*>(p);
  *rc = pthread_rwlock_wrlock(&g_rw[kLocks - 1]);
  if (*rc == 0) *rc = pthread_rwlock_unlock(&g_rw[kLocks - 1]);
  return nullptr;
}

}  // namespace

int main() {
  sc::begin();
  for (auto& rw : g_rw) pthread_rwlock_init(&rw, nullptr);  // default attributes: glibc prefers readers
  sc::step("a thread takes read locks on 9 rwlocks");
  pthread_t r, w;
  pthread_create(&r, nullptr, reader, nullptr);
  g_held.wait();
  sc::step("a writer waits for the 9th");
  int writer_rc = -1;
  pthread_create(&w, nullptr, writer, &writer_rc);
  g_writer_started.wait();
  sc::wait_blocked(g_writer_tid);
  sc::step("the reader takes the 9th rwlock again while the writer waits");
  g_go.post();
  g_done.wait();
  sc::out("second read lock on the 9th rwlock: %s\n", sc::err(g_again_rc));
  sc::step("the reader releases everything; the writer gets the lock");
  g_finish.post();
  pthread_join(r, nullptr);
  pthread_join(w, nullptr);
  sc::out("reader's unlocks: %s\n", sc::err(g_unlock_rc));
  sc::out("writer: wrlock and unlock %s\n", sc::err(writer_rc));
  sc::step("end");
  for (auto& rw : g_rw) pthread_rwlock_destroy(&rw);
  sc::out("done\n");
  return 0;
}
