// One plugin of the multi-module test, built twice (PLUGIN_VIEW names its export): as
// libspinwise_plugin_a.so, which the host links, and libspinwise_plugin_b.so, which the host
// dlopen()s with RTLD_LOCAL. Each is built with -fvisibility=hidden -fvisibility-inlines-hidden,
// so it has its own copy of every inline function and type of the headers.

#include <mutex>
#include <spinwise/relax_table.hpp>

#include "plugin_api.hpp"

namespace {

engine::buf_pool_latch g_latch;

std::uint64_t acquisitions() {
  std::uint64_t n = 0;
  spinwise::for_each_stats_class([&](std::string_view name, const spinwise::lock_stats_totals& t) {
    if (name == engine::buf_pool_class::name) n += t.acquisitions;
  });
  return n;
}

int classes_named() {
  int n = 0;
  spinwise::for_each_stats_class([&](std::string_view name, const spinwise::lock_stats_totals&) {
    n += name == engine::buf_pool_class::name;
  });
  return n;
}

const engine::view kView = {
    [] { return spinwise::time_policy<>::spin_wait_delay(); },
    [] { return spinwise::hybrid_mutex::policy::spin_wait_delay(); },
    [] { return engine::buf_pool_latch::policy::spin_wait_delay(); },
    [](std::uint32_t v) { (void)engine::buf_pool_latch::policy::set_spin_wait_delay(v); },
    [] { return spinwise::relax_ns_here(); },
    [] { return spinwise::relax_ns_installed(); },
    [](double ns) { return spinwise::install_relax_ns(spinwise::active_relax(), nullptr, 0, ns); },
    [] { return static_cast<int>(spinwise::active_relax()); },
    [](int times) {
      for (int i = 0; i < times; ++i) std::lock_guard<engine::buf_pool_latch> g(g_latch);
    },
    acquisitions,
    classes_named,
    [] { return spinwise::detail::jitter_next(); },
    [] { return static_cast<const void*>(&spinwise::detail::process()); },
    [] { return engine::buf_pool_latch::policy::set_spin_wait_delay(5000).error_code(); },
    [] {
      return spinwise::register_knob_class<engine::buf_pool_latch>("plugin_test_buf_pool")
          .error_code()
          .value();
    },
    [] {
      const auto c = spinwise::find_knob_class("plugin_test_buf_pool");
      const auto v = c ? c->get("spin_wait_delay") : std::nullopt;
      return v ? static_cast<int>(*v) : -1;
    },
};

}  // namespace

ENGINE_PLUGIN_EXPORT const engine::view* PLUGIN_VIEW() { return &kView; }
