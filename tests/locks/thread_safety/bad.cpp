// Misuses that must NOT compile under -Werror=thread-safety, one per SPINWISE_TSA_CASE, over the
// lock type SPINWISE_TSA_LOCK. Each case is a real bug the annotations exist to catch.
#include <chrono>
#include <spinwise/spinwise.hpp>

#include "guarded_fixtures.hpp"  // fake_shared_mutex

#ifndef SPINWISE_TSA_LOCK
#define SPINWISE_TSA_LOCK spinwise::ttas_mutex
#endif

using lock_type = SPINWISE_TSA_LOCK;

struct table {
  lock_type mu;
  int rows SPINWISE_GUARDED_BY(mu) = 0;
  fake_shared_mutex rw;
  int value SPINWISE_GUARDED_BY(rw) = 0;

  void bump() SPINWISE_REQUIRES(mu) { ++rows; }

  void run() {
#if SPINWISE_TSA_CASE == 1
    rows = 1;  // guarded member written without the lock
#elif SPINWISE_TSA_CASE == 2
    { spinwise::lock_guard<lock_type> g(mu); }
    rows = 1;  // the guard's scope has ended
#elif SPINWISE_TSA_CASE == 3
    bump();  // a function that requires the lock, called without it
#elif SPINWISE_TSA_CASE == 4
    spinwise::shared_lock_guard<fake_shared_mutex> g(rw);
    value = 1;  // written under a shared (read) lock
#elif SPINWISE_TSA_CASE == 5
    (void)mu.try_lock();  // result ignored: the lock may not be held
    rows = 1;
    mu.unlock();
#elif SPINWISE_TSA_CASE == 6
    spinwise::lock_guard<lock_type> g(mu);
    mu.lock();  // self-deadlock
    mu.unlock();
#elif SPINWISE_TSA_CASE == 7
    mu.lock();
    rows = 1;  // returns holding the lock
#else
#error "define SPINWISE_TSA_CASE"
#endif
  }
};

int main() {
  table t;
  t.run();
  return 0;
}
