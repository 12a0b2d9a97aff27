// A minimal engine: takes a spinwise lock from two threads and asks the runtime for the relax cost.
#include <cstdio>
#include <mutex>
#include <spinwise/runtime/relax_cost.hpp>
#include <spinwise/spinwise.hpp>
#include <thread>

int main() {
  spinwise::relax_cost_options opt;
  opt.trials = 5;
  const spinwise::relax_cost c = spinwise::measure_relax_cost(opt);
  if (c.trials != 5) return 1;
  spinwise::ttas_mutex mu;
  long counter = 0;
  auto work = [&] {
    spinwise::cpu_relax();
    for (int i = 0; i < 10000; ++i) {
      std::lock_guard<spinwise::ttas_mutex> g(mu);
      ++counter;
    }
  };
  std::thread t(work);
  work();
  t.join();
  if (counter != 20000) return 1;
  std::printf("backend=%.*s relax=%.*s ticks=%.1f\n", static_cast<int>(spinwise::backend_name().size()),
              spinwise::backend_name().data(), static_cast<int>(spinwise::to_string(c.kind).size()),
              spinwise::to_string(c.kind).data(), c.ticks_median);
  return 0;
}
