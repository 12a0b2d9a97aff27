// A minimal engine, as docs/knobs.md's start-up shows it: its own latch class (knobs and
// statistics), one start-up call for profile, knobs and relax, the statistics report; two threads
// take the latch, and the runtime measures the relax cost. Built by every packaging path.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <spinwise/runtime/knob_config.hpp>
#include <spinwise/runtime/relax_cost.hpp>
#include <spinwise/runtime/stats_report.hpp>
#include <spinwise/spinwise.hpp>
#include <string_view>
#include <thread>

struct buf_pool {
  static constexpr std::string_view name = "consumer.buf_pool";
};
using buf_pool_latch = spinwise::sx_lock_t<spinwise::time_policy<buf_pool>>::with_stats<buf_pool>;

int main() {
  // The engine's start-up: register its class, then profile + knobs + relax in one call.
  ::setenv("SPINWISE_KNOBS", "buf_pool.spin_wait_delay=4,time.delay_unit_ns=150", 1);
  if (!spinwise::register_knob_class<buf_pool_latch>("buf_pool").ok()) return 1;
  if (const auto st = spinwise::configure_from_env(); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  if (buf_pool_latch::policy::spin_wait_delay() != 4 || spinwise::time_policy<>::delay_unit_ns() != 150)
    return 1;

  spinwise::relax_cost_options opt;
  opt.trials = 5;
  const spinwise::relax_cost c = spinwise::measure_relax_cost(opt);
  if (c.trials != 5) return 1;
  buf_pool_latch latch;
  long counter = 0;
  auto work = [&] {
    spinwise::cpu_relax();
    for (int i = 0; i < 10000; ++i) {
      std::lock_guard<buf_pool_latch> g(latch);
      ++counter;
    }
  };
  std::thread t(work);
  work();
  t.join();
  if (counter != 20000) return 1;
  // SHOW ENGINE ... STATUS
  const std::string report = spinwise::format_stats_text(spinwise::take_stats_snapshot());
  if (report.find(buf_pool::name) == std::string::npos) return 1;
  std::printf("backend=%.*s relax=%.*s ticks=%.1f\n", static_cast<int>(spinwise::backend_name().size()),
              spinwise::backend_name().data(), static_cast<int>(spinwise::to_string(c.kind).size()),
              spinwise::to_string(c.kind).data(), c.ticks_median);
  return 0;
}
