#pragma once
// What the test's host and its two plugins share: one lock class of the engine's own (a Tag and a
// statistics class declared here, hidden like every other type of a -fvisibility=hidden module)
// and the functions each plugin exports.

#include <cstdint>
#include <spinwise/hybrid_mutex.hpp>
#include <spinwise/knob_text.hpp>
#include <spinwise/lock_stats.hpp>
#include <spinwise/time_policy.hpp>
#include <string_view>
#include <system_error>

namespace engine {

struct buf_pool_tag {};
struct buf_pool_class {
  static constexpr std::string_view name = "plugin_test.buf_pool";
};
// The engine's latch: its own knobs (Tag) and statistics class.
using buf_pool_latch =
    spinwise::hybrid_mutex_t<spinwise::time_policy<buf_pool_tag>, spinwise::class_stats<buf_pool_class>>;

// Each plugin exports one of these (plugin_a_view / plugin_b_view): what its own copy of the
// headers sees, and a way to change it from inside the plugin.
struct view {
  std::uint32_t (*time_delay)();      // time_policy<>::spin_wait_delay(): process-wide knob
  std::uint32_t (*hybrid_delay)();    // hybrid_mutex::policy::spin_wait_delay(): the alias's Tag
  std::uint32_t (*buf_pool_delay)();  // the engine's Tag, declared in a hidden type
  void (*set_buf_pool_delay)(std::uint32_t);
  double (*relax_ns)();                      // relax_ns_here()
  bool (*relax_installed)();                 // relax_ns_installed()
  bool (*install_relax)(double ns);          // install_relax_ns(active kind, one value for all CPUs)
  int (*relax_kind)();                       // active_relax()
  void (*lock_buf_pool)(int times);          // takes the engine latch `times` times
  std::uint64_t (*buf_pool_acquisitions)();  // the class's acquisitions, from for_each_stats_class
  int (*classes_named_buf_pool)();           // how many classes for_each_stats_class lists by that name
  std::uint64_t (*jitter_draw)();            // the calling thread's next jitter draw
  const void* (*state_address)();            // &shared_process_state_v4, as this module resolves it
  std::error_code (*knob_error)();           // a refused knob's error code, made in this module
  int (*register_buf_pool)();                // register_knob_class<buf_pool_latch>: errc value, 0 ok
  int (*registry_buf_pool_delay)();          // find_knob_class("plugin_test_buf_pool")->get(...), -1: absent
};

}  // namespace engine

#define ENGINE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
