// The run context (<spinwise/runtime/run_context.hpp>): one shape in every tool's JSON. It lives
// here because this suite links the stress tool's report and the runtime (--advise's writer); the
// bench's flat context is checked against a real spinwise-bench run in tests/bench.

#include "spinwise/runtime/run_context.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "report.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/engine_advice.hpp"

namespace {

namespace sw = spinwise;
namespace st = spinwise::stress;

std::set<std::string> keys(const nlohmann::json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

// Guards against the tools drifting apart again: they wrote the machine in four shapes (stress
// "machine.cpus", --advise "machine.cpus_measured", the bench "machine.cpus_allowed", profiles
// "machine.cpu_count"), so a script read each differently. spinwise-stress's document, --advise's
// JSON and spinwise-bench's flat context now carry the same keys under "run", and the machine in
// it is named with a profile's keys.
TEST(RunContext, TheThreeToolsWriteTheSameKeys) {
  sw::run_context here = sw::detect_run_context();
  here.relax_ns = 12.5;
  const std::set<std::string> stress = keys(st::make_document({}).at(sw::kRunContextKey));
  const std::set<std::string> advice =
      keys(nlohmann::json::parse(sw::format_advice_json(sw::engine_advice{}, nullptr, &here)).at("run"));
  const std::set<std::string> refusal =
      keys(nlohmann::json::parse(sw::format_refusal_json(sw::advice_result{}, nullptr, &here)).at("run"));
  std::set<std::string> bench;
  for (const auto& [key, value] : sw::run_context_fields(here)) {
    ASSERT_EQ(key.rfind("run.", 0), 0u) << key;
    bench.insert(key.substr(4));
  }
  EXPECT_EQ(stress, advice);
  EXPECT_EQ(stress, refusal);
  EXPECT_EQ(stress, bench);
  for (const char* k : {"cpu_model", "cpu_id", "cpu_count", "cpus_online", "cpus_allowed", "kernel",
                        "compiler", "arch", "relax", "relax_ns", "date", "load_average"}) {
    EXPECT_EQ(stress.count(k), 1u) << k;
  }
  // A profile's and a --watch report's machine: the same keys, the run context adds to them.
  const nlohmann::json watch = nlohmann::json::parse(sw::watch_to_json(sw::watch_result{}));
  for (const std::string& k : keys(watch.at("machine"))) EXPECT_EQ(stress.count(k), 1u) << k;
}

// Guards against a reader that must guess: what is not known is null (not 0, not ""), every key
// is still there, and the flat form carries the same values as text.
TEST(RunContext, WhatIsNotKnownIsNullAndTheFlatFormMatches) {
  const nlohmann::json unknown = nlohmann::json::parse(sw::run_context_json(sw::run_context{}));
  for (const char* k :
       {"cpus_online", "cpus_allowed", "kernel_arch", "compiler", "relax", "relax_ns", "date"})
    EXPECT_TRUE(unknown.at(k).is_null()) << k;
  ASSERT_EQ(unknown.at("load_average").size(), 3u);
  for (const auto& l : unknown.at("load_average")) EXPECT_TRUE(l.is_null());

  sw::run_context c = sw::detect_run_context();
  c.relax_ns = 12.5;
  EXPECT_GT(c.cpus_online, 0);
  EXPECT_GT(c.cpus_allowed, 0);
  EXPECT_LE(c.cpus_allowed, c.cpus_online);
  EXPECT_FALSE(c.compiler.empty());
  EXPECT_EQ(c.date.size(), 20u) << c.date;  // 2025-01-31T12:00:00Z
  const nlohmann::json j = nlohmann::json::parse(sw::run_context_json(c));
  EXPECT_EQ(j.at("cpus_allowed"), c.cpus_allowed);
  EXPECT_EQ(j.at("relax_ns"), 12.5);
  EXPECT_EQ(j.at("cpu_model"), c.machine.cpu_model);
  for (const auto& [key, text] : sw::run_context_fields(c)) {
    const nlohmann::json& v = j.at(key.substr(4));
    EXPECT_EQ(text, v.is_string() ? v.get<std::string>() : v.dump()) << key;
  }
}

}  // namespace
