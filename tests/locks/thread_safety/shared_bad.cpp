// Misuses of the shared locks that must NOT compile under -Werror=thread-safety, one per
// SPINWISE_TSA_CASE, over SPINWISE_TSA_LOCK where the case takes any shared lock. Each is a
// real bug the annotations exist to catch.
#include <spinwise/spinwise.hpp>

#ifndef SPINWISE_TSA_LOCK
#define SPINWISE_TSA_LOCK spinwise::spin_shared_mutex
#endif

using lock_type = SPINWISE_TSA_LOCK;

struct data {
  lock_type rw;
  int value SPINWISE_GUARDED_BY(rw) = 0;
  spinwise::sx_lock l;
  int tree SPINWISE_GUARDED_BY(l) = 0;

  void run() {
#if SPINWISE_TSA_CASE == 1
    spinwise::shared_lock_guard<lock_type> g(rw);
    value = 1;  // written under the shared lock
#elif SPINWISE_TSA_CASE == 2
    rw.lock_shared();
    rw.unlock_shared();
    const int v = value;  // read after the shared lock was released
    (void)v;
#elif SPINWISE_TSA_CASE == 3
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    tree = 1;  // written under SX: S holders may be reading it
#elif SPINWISE_TSA_CASE == 4
    l.lock_sx();
    l.upgrade();
    l.downgrade();
    tree = 1;  // written after the downgrade (SX again)
    l.unlock_sx();
#elif SPINWISE_TSA_CASE == 5
    l.upgrade();  // upgrading an SX the caller does not hold
    tree = 1;
    l.unlock();
#elif SPINWISE_TSA_CASE == 6
    l.lock_sx();
    tree = 1;  // no upgrade: still SX
    l.unlock_sx();
#elif SPINWISE_TSA_CASE == 7
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    g.upgrade();
    g.downgrade();
    tree = 1;  // written after the guard's downgrade (SX again)
#elif SPINWISE_TSA_CASE == 8
    {
      spinwise::sx_guard<spinwise::sx_lock> g(l);
      g.upgrade();
    }
    tree = 1;  // written after the upgraded guard's scope: it released X
#else
#error "define SPINWISE_TSA_CASE"
#endif
  }
};

int main() {
  data d;
  d.run();
  return 0;
}
