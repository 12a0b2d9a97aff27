#pragma once
// Helpers shared by the statistics tests (tests/stats/ and tests/locks/shared_stats_test.cpp), on
// top of tests/common/test_util.hpp (scale(), this_tid(), thread_state(), await_asleep()).

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string_view>
#include <thread>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "test_util.hpp"

// Declares `type`, a statistics class (spinwise/lock_stats.hpp: a type with `static constexpr
// std::string_view name`) that reports under `text`; one line a class, for tests that need many.
#define SPINWISE_TEST_STATS_CLASS(type, text)      \
  struct type {                                    \
    static constexpr std::string_view name = text; \
  }

namespace spinwise_test {

// A Relax that says when a waiter reached its slow path (its first snooze) and counts relaxes.
struct flag_relaxer {
  static inline std::atomic<bool> snoozed{false};
  static inline std::atomic<std::uint64_t> issued{0};
  static void relax_n(std::uint32_t n) noexcept {
    issued.fetch_add(n, std::memory_order_relaxed);
    snoozed.store(true, std::memory_order_release);
    spinwise::cpu_relax_n(n);
  }
};

// One contended acquisition, by construction: the caller holds the lock; `waiter` (which takes
// and drops it) runs in a new thread, and `release` (which drops the caller's hold) runs once that
// thread has reached its slow path, i.e. the policy's Relax is flag_relaxer and it snoozed.
template <class Waiter, class Release>
void contend_once(Waiter waiter, Release release) {
  flag_relaxer::snoozed = false;
  std::thread t(waiter);
  while (!flag_relaxer::snoozed.load(std::memory_order_acquire)) std::this_thread::yield();
  release();
  t.join();
}

// The class named `name` in a snapshot, or nullptr.
inline const spinwise::lock_class_stats* find_class(const spinwise::stats_snapshot& s,
                                                    std::string_view name) {
  for (const auto& c : s.classes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// What the class named `name` recorded since `before` (a take_stats_snapshot()); a test failure,
// and no counts, where it is not in the report.
inline spinwise::lock_class_stats recorded_since(const spinwise::stats_snapshot& before,
                                                 std::string_view name) {
  const spinwise::stats_snapshot d = spinwise::diff_stats(before, spinwise::take_stats_snapshot());
  if (const spinwise::lock_class_stats* c = find_class(d, name)) return *c;
  ADD_FAILURE() << "no class " << name << " in the statistics";
  return {};
}

}  // namespace spinwise_test
