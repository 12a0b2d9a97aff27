// The multi-module test's host. Built, like its plugins, with -fvisibility=hidden
// -fvisibility-inlines-hidden: every module has its own copy of the headers' inline code, and
// spinwise's process-wide state must still be one (detail/process_state.hpp).
//
//   spinwise_plugin_host          links plugin A, dlopen()s plugin B with RTLD_LOCAL
//   spinwise_plugin_host_dlopen   links no plugin (PLUGIN_A_LINKED undefined), dlopen()s both with
//                                 RTLD_LOCAL, and is linked with spinwise::export_state
//
// Every check names what it compares; any failure exits non-zero.

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <spinwise/relax_table.hpp>

#include "plugin_api.hpp"

#if defined(PLUGIN_A_LINKED)
extern "C" const engine::view* plugin_a_view();
#endif

namespace {

int g_failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++g_failures;
}

const engine::view* open_plugin(const char* path, const char* symbol) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    std::exit(2);
  }
  using view_fn = const engine::view* (*)();
  auto fn = reinterpret_cast<view_fn>(dlsym(h, symbol));
  if (fn == nullptr) {
    std::fprintf(stderr, "dlsym %s: %s\n", symbol, dlerror());
    std::exit(2);
  }
  return fn();
}

std::uint64_t host_acquisitions() {
  std::uint64_t n = 0;
  spinwise::for_each_stats_class([&](std::string_view name, const spinwise::lock_stats_totals& t) {
    if (name == engine::buf_pool_class::name) n += t.acquisitions;
  });
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN_B_PATH [PLUGIN_A_PATH]\n", argv[0]);
    return 2;
  }
#if defined(PLUGIN_A_LINKED)
  const engine::view* a = plugin_a_view();
#else
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLUGIN_B_PATH PLUGIN_A_PATH\n", argv[0]);
    return 2;
  }
  const engine::view* a = open_plugin(argv[2], "plugin_a_view");
#endif
  const engine::view* b = open_plugin(argv[1], "plugin_b_view");

  const void* mine = &spinwise::detail::process();
  check(a->state_address() == mine && b->state_address() == mine, "one process state in host, A and B");

  // Knobs: set in each module in turn, seen by all three.
  check(spinwise::time_policy<>::set_spin_wait_delay(30).ok(), "host sets time.spin_wait_delay 30");
  check(a->time_delay() == 30 && b->time_delay() == 30, "A and B see time.spin_wait_delay 30");
  check(spinwise::hybrid_mutex::policy::set_spin_wait_delay(17).ok(),
        "host sets hybrid_mutex.spin_wait_delay 17");
  check(a->hybrid_delay() == 17 && b->hybrid_delay() == 17, "A and B see hybrid_mutex's Tag override 17");
  b->set_buf_pool_delay(9);
  check(engine::buf_pool_latch::policy::spin_wait_delay() == 9 && a->buf_pool_delay() == 9,
        "B sets the engine Tag's delay 9 (a hidden type): host and A see 9");
  a->set_buf_pool_delay(11);
  check(engine::buf_pool_latch::policy::spin_wait_delay() == 11 && b->buf_pool_delay() == 11,
        "A sets it to 11: host and B see 11");

  // The relax table: installed by one module, used by the others.
  check(!spinwise::relax_ns_installed(), "no relax table before the install");
  check(b->install_relax(77.0), "B installs a relax table (77 ns for every CPU)");
  check(spinwise::relax_ns_installed() && a->relax_installed(), "host and A see the table installed");
  check(spinwise::relax_ns_here() == 77.0 && a->relax_ns() == 77.0 && b->relax_ns() == 77.0,
        "host, A and B convert with 77 ns per relax");
  check(spinwise::set_relax(spinwise::relax_kind::none), "host switches the relax kind to none");
  check(a->relax_kind() == static_cast<int>(spinwise::relax_kind::none) &&
            b->relax_kind() == static_cast<int>(spinwise::relax_kind::none),
        "A and B issue the kind the host chose");

  // Statistics: one class record for the name, whichever module took the latch.
  a->lock_buf_pool(5);
  b->lock_buf_pool(7);
  {
    engine::buf_pool_latch host_latch;
    for (int i = 0; i < 3; ++i) std::lock_guard<engine::buf_pool_latch> g(host_latch);
  }
  check(host_acquisitions() == 15 && a->buf_pool_acquisitions() == 15 && b->buf_pool_acquisitions() == 15,
        "host, A and B count 15 acquisitions of the class (5 in A, 7 in B, 3 in host)");
  check(b->classes_named_buf_pool() == 1, "the class is listed once");

  // The calling thread's jitter generator: seeded in the host, drawn in the plugins.
  spinwise::seed_spin_jitter(42);
  const std::uint64_t h1 = spinwise::detail::jitter_next();
  const std::uint64_t h2 = spinwise::detail::jitter_next();
  spinwise::seed_spin_jitter(42);
  check(a->jitter_draw() == h1 && b->jitter_draw() == h2,
        "A and B continue the host thread's seeded sequence");

  // The error category: one object, so a code made in a plugin equals the host's enumerator.
  const std::error_code ea = a->knob_error(), eb = b->knob_error();
  check(&ea.category() == &spinwise::error_category() && &eb.category() == &spinwise::error_category(),
        "A's and B's knob errors are in the host's spinwise category");
  check(ea == spinwise::errc::knob_out_of_range && eb == spinwise::errc::knob_out_of_range &&
            ea == std::errc::argument_out_of_domain,
        "a plugin's out-of-range code compares equal to spinwise::errc and its std::errc condition");

  // The knob registry: a class registered by A is found by the host and B, set through either.
  check(a->register_buf_pool() == 0, "A registers the engine latch as knob class plugin_test_buf_pool");
  check(b->register_buf_pool() == static_cast<int>(spinwise::errc::knob_class_exists),
        "B's registration of the same name is refused (knob_class_exists)");
  const auto cls = spinwise::find_knob_class("plugin_test_buf_pool");
  check(cls && cls->set("spin_wait_delay", 13).ok(), "the host finds it and sets spin_wait_delay 13");
  check(engine::buf_pool_latch::policy::spin_wait_delay() == 13 && a->buf_pool_delay() == 13 &&
            b->registry_buf_pool_delay() == 13,
        "the host's latch, A and B's registry lookup see 13");

  std::printf("%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
