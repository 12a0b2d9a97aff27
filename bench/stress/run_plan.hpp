#pragma once
// The runs of one invocation and their order: every setting (a --compare setting, a sweep point,
// or the one configuration of a plain run) `repeat` times, interleaved.
//
// Why interleaved: on a shared machine the noise drifts over a session (another job starts, the
// host's clock or steal changes). Run A A A B B B and that drift becomes a difference between A
// and B; run A B A B A B and it falls on both alike. Round r runs every setting once: round 0 in
// the settings' order, each later round in the same order (order seed 0: A B A B ...) or in a
// fresh order drawn from the seed (runtime::interleaved_order, <spinwise/runtime/uncertainty.hpp>).
// A run's seed is its setting's seed plus its repeat, as sweeps always did: repeat r of every
// setting meets the same workload choices and spin jitter.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload.hpp"

namespace spinwise::stress {

// One setting: what it is called, the flags that make it, and its resolved configuration.
struct setting {
  std::string label;  // "A", "B", ... (--compare), "skylake/innodb/6" (a sweep point), "" (a plain run)
  std::string args;   // the flags on top of the base ("--spin-wait-delay 30"); "" for the base itself
  workload_config config;
};

struct run_order {
  unsigned repeat = 1;     // runs per setting
  std::uint64_t seed = 0;  // 0: round-robin (A B A B ...); else each round after the first shuffled
};

struct planned_run {
  std::size_t setting = 0;
  unsigned repeat = 0;     // the how-manieth run of its setting
  workload_config config;  // the setting's, with seed + repeat
};

// The runs in the order they run: settings.size() x order.repeat of them.
std::vector<planned_run> plan_runs(const std::vector<setting>& settings, const run_order& order);

// "round-robin" or "shuffled per round (--order-seed S)".
std::string order_name(const run_order& order);

// "A B A B" (the settings' labels in run order; "#i" for an unlabelled one).
std::string order_text(const std::vector<planned_run>& plan, const std::vector<setting>& settings);

// What --dry-run prints: the settings, then every run with its setting, repeat and seed.
std::string plan_text(const std::vector<planned_run>& plan, const std::vector<setting>& settings,
                      const run_order& order);

// {"interleaving": ..., "seed": S, "repeat": N, "settings": [indices in run order]}
nlohmann::json order_json(const std::vector<planned_run>& plan, const run_order& order);

// How one run is made: run_workload, or what a test injects.
using run_fn = std::function<run_result(const workload_config&)>;

// Runs the plan in order, marking each result with its setting and repeat; `done`, when given, is
// called after each run.
std::vector<run_result> run_planned(const std::vector<planned_run>& plan, const run_fn& run,
                                    const std::function<void(const run_result&)>& done = {});

// The runs of each setting (in run order), `settings` groups.
std::vector<std::vector<run_result>> runs_by_setting(const std::vector<run_result>& runs,
                                                     std::size_t settings);

}  // namespace spinwise::stress
