// A minimal engine: takes a spinwise lock from two threads and asks the runtime for the relax cost.
#include <spinwise/runtime/relax_cost.hpp>
#include <spinwise/spinwise.hpp>

#include <cstdio>
#include <thread>

int main() {
  spinwise::relax_cost_options opt;
  opt.trials = 5;
  const spinwise::relax_cost c = spinwise::measure_relax_cost(opt);
  if (c.trials != 5) return 1;
  std::thread t([] { spinwise::cpu_relax(); });
  t.join();
  std::printf("backend=%.*s relax=%.*s ticks=%.1f\n", static_cast<int>(spinwise::backend_name().size()),
              spinwise::backend_name().data(), static_cast<int>(spinwise::to_string(c.kind).size()),
              spinwise::to_string(c.kind).data(), c.ticks_median);
  return 0;
}
