// Correct uses of every spinwise lock and guard: must compile with -Werror=thread-safety.
#include <chrono>
#include <spinwise/spinwise.hpp>

#include "guarded_fixtures.hpp"  // fake_shared_mutex, config<L>

namespace {

template <class M>
struct table {
  M mu;
  int rows SPINWISE_GUARDED_BY(mu) = 0;

  void bump() SPINWISE_REQUIRES(mu) { ++rows; }

  int read_guarded() SPINWISE_EXCLUDES(mu) {
    spinwise::lock_guard<M> g(mu);
    bump();
    return rows;
  }
  void manual() SPINWISE_EXCLUDES(mu) {
    mu.lock();
    rows = 2;
    mu.unlock();
  }
  bool attempt() SPINWISE_EXCLUDES(mu) {
    if (!mu.try_lock()) return false;
    ++rows;
    mu.unlock();
    return true;
  }
  void adopt() SPINWISE_EXCLUDES(mu) {
    mu.lock();
    spinwise::lock_guard<M> g(mu, std::adopt_lock);
    rows = 3;
  }
};

struct timed {
  spinwise::hybrid_mutex mu;
  int rows SPINWISE_GUARDED_BY(mu) = 0;
  bool attempt() SPINWISE_EXCLUDES(mu) {
    if (!mu.try_lock_for(std::chrono::milliseconds(1))) return false;
    ++rows;
    mu.unlock();
    if (mu.try_lock_until(std::chrono::steady_clock::now())) {
      ++rows;
      mu.unlock();
    }
    return true;
  }
};

}  // namespace

int main() {
  table<spinwise::tas_mutex> a;
  table<spinwise::ttas_mutex> b;
  table<spinwise::ticket_mutex> c;
  table<spinwise::mcs_mutex> d;
  table<spinwise::hybrid_mutex> e;
  config<fake_shared_mutex> cfg;  // shared_lock_guard and lock_guard over a shared lock
  timed t;
  cfg.write(1);
  return a.read_guarded() + b.read_guarded() + c.read_guarded() + d.read_guarded() + e.read_guarded() +
         static_cast<int>(a.attempt()) + cfg.read() + static_cast<int>(t.attempt());
}
