// The kind from the environment, the knobs, and the library's constructor (interposer.hpp).

#include <cstdio>
#include <cstring>

#include "interposer.hpp"
#include "spinwise/runtime/knob_config.hpp"

namespace spinwise::preload {

__thread thread_state tl_state __attribute__((tls_model("initial-exec")));

SPINWISE_COLD int init_kind() noexcept {
  const char* v = detail::env("SPINWISE_PRELOAD_LOCK");
  int k = k_adaptive;  // the default kind
  bool unknown = false;
  if (v != nullptr && *v != '\0') {
    unknown = true;
    for (int i = 0; i < static_cast<int>(std::size(kKindNames)); ++i) {
      if (std::strcmp(v, kKindNames[i]) == 0) {
        k = i;
        unknown = false;
      }
    }
    if (unknown) k = k_glibc;
  }
  const auto set = [](const char* name) {
    const char* v = detail::env(name);
    return v != nullptr && *v != '\0';
  };
  // Every first caller sets the same mode, before the kind: a call that sees the kind counts. The
  // profile (which counts the statistics too) has its table first (profile_start: one first
  // caller maps it, the others wait), so that both count from the same first call.
  int mode = kStatsOff;
  if (k != k_glibc && set("SPINWISE_PRELOAD_PROFILE") && profile_start()) {
    mode = kStatsProfile;
  } else if (k != k_glibc && set("SPINWISE_PRELOAD_STATS")) {
    mode = kStatsOn;
  }
  if (mode != kStatsOff) {
    int off = kStatsOff;
    g_stats.compare_exchange_strong(off, mode, std::memory_order_relaxed);
  }
  int expected = -1;
  if (!g_kind.compare_exchange_strong(expected, k, std::memory_order_acq_rel)) return expected;
  // The first caller: its messages and the knobs, once. Locks taken meanwhile see the kind.
  if (unknown) {
    std::fprintf(
        stderr,
        "spinwise-preload: unknown SPINWISE_PRELOAD_LOCK '%s' (known: glibc, hybrid, adaptive, ttas); "
        "the program runs on glibc's locks\n",
        v);
  }
  if (k != k_glibc) {
    ++tl_state.inside;
    const startup_status st = configure_from_env();
    if (!st.ok()) {
      std::fprintf(stderr, "spinwise-preload: %s (no knob changed)\n", st.message().c_str());
    }
    if (g_stats.load(std::memory_order_relaxed) != kStatsOff) {
      std::atexit(write_stats_at_exit);
      pthread_atfork(stats_fork_prepare, stats_fork_parent, stats_fork_child);
    }
    if (g_stats.load(std::memory_order_relaxed) == kStatsProfile) {
      std::atexit(write_profile_at_exit);
      profile_warm_unwinder();
    }
    --tl_state.inside;
  }
  return k;
}

}  // namespace spinwise::preload

// Set by the library's constructor, which only settles the kind early: nothing depends on it
// having run. Exported for tests/preload, whose library checks that its own constructor took its
// locks before this one ran.
extern "C" {
__attribute__((visibility("default"))) int spinwise_preload_constructed = 0;
}
__attribute__((constructor)) static void preload_start() {
  (void)spinwise::preload::current_kind();
  spinwise_preload_constructed = 1;
}
