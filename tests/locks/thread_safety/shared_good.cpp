// Correct uses of the shared locks under Clang's thread-safety analysis: must compile with
// -Werror=thread-safety (registered by tests/locks/CMakeLists.txt through thread_safety.cmake).
// SX is a shared capability to the analysis (it has only shared and exclusive): data that SX
// holders may write needs X; upgrade() turns shared into exclusive, downgrade() the reverse.
#include <chrono>
#include <spinwise/spinwise.hpp>

#include "guarded_fixtures.hpp"  // config<L>

namespace {

struct timed {
  spinwise::hybrid_shared_mutex rw;
  int value SPINWISE_GUARDED_BY(rw) = 0;
  int attempt() SPINWISE_EXCLUDES(rw) {
    int v = 0;
    if (rw.try_lock_shared_for(std::chrono::milliseconds(1))) {
      v = value;
      rw.unlock_shared();
    }
    if (rw.try_lock_shared_until(std::chrono::steady_clock::now())) {
      v += value;
      rw.unlock_shared();
    }
    if (rw.try_lock_for(std::chrono::milliseconds(1))) {
      value = v;
      rw.unlock();
    }
    return v;
  }
};

struct latch {
  spinwise::sx_lock l;
  int tree SPINWISE_GUARDED_BY(l) = 0;

  int peek() SPINWISE_EXCLUDES(l) {
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    return tree;
  }
  void modify() SPINWISE_EXCLUDES(l) {
    l.lock_sx();
    const int seen = tree;  // read under SX, beside S holders
    l.upgrade();
    tree = seen + 1;  // written under X
    l.downgrade();
    const int again = tree;  // read under SX again
    l.unlock_sx();
    (void)again;
  }
  bool try_sx() SPINWISE_EXCLUDES(l) {
    if (!l.try_lock_sx()) return false;
    const bool odd = (tree & 1) != 0;
    l.unlock_sx();
    return odd;
  }
  void guarded_upgrade() SPINWISE_EXCLUDES(l) {  // the latch's own, back to SX before the scope ends
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    const int seen = tree;
    l.upgrade();
    tree = seen + 1;
    l.downgrade();
  }
  void guard_upgrade_downgrade() SPINWISE_EXCLUDES(l) {  // docs/locks.md's example
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    const int seen = tree;
    g.upgrade();
    tree = seen + 1;  // X
    g.downgrade();
    const int again = tree;  // SX again
    (void)again;
  }
  void guard_left_upgraded() SPINWISE_EXCLUDES(l) {  // the guard releases X
    spinwise::sx_guard<spinwise::sx_lock> g(l);
    g.upgrade();
    tree = 1;
  }
  void adopt() SPINWISE_EXCLUDES(l) {
    l.lock_sx();
    spinwise::sx_guard<spinwise::sx_lock> g(l, std::adopt_lock);
    (void)tree;
  }
};

}  // namespace

int main() {
  config<spinwise::spin_shared_mutex> a;
  config<spinwise::hybrid_shared_mutex> b;
  config<spinwise::sx_lock> c;
  timed t;
  latch x;
  a.write(1);
  b.write(2);
  c.write(3);
  (void)a.write_try(4);
  x.modify();
  x.guarded_upgrade();
  x.guard_upgrade_downgrade();
  x.guard_left_upgraded();
  x.adopt();
  return a.read() + b.read_manual() + c.read() + static_cast<int>(a.read_try()) + t.attempt() + x.peek() +
         static_cast<int>(x.try_sx());
}
