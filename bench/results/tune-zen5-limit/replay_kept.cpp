// Every kept --tune run's rounds (their tune.json, given as arguments) through choose_paired, and
// through the rule this README weighs: when no candidate is beyond the noise above the current
// value, the cheapest candidate the rounds cannot tell from the current one.
//   g++ -std=c++17 -O1 -Iinclude bench/results/tune-zen5-limit/replay_kept.cpp \
//       build/release/src/libspinwise_runtime.a -lpthread -o /tmp/replay_kept
//   /tmp/replay_kept bench/results/tune-*/*tune.json
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "spinwise/runtime/uncertainty.hpp"

namespace rt = spinwise::runtime;

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    std::ifstream in(argv[a]);
    const nlohmann::json d = nlohmann::json::parse(in);
    std::vector<std::vector<double>> rates;
    std::vector<double> cost;
    for (const auto& c : d["candidates"]) {
      rates.push_back(c["rates"].get<std::vector<double>>());
      cost.push_back(c["value"].get<double>());
    }
    const rt::paired_choice c = rt::choose_paired(rates, cost);
    int cheaper = c.chosen;
    if (c.best < 0) {
      for (std::size_t i = 1; i < rates.size(); ++i) {
        if (!(cost[i] < cost[static_cast<std::size_t>(cheaper < 0 ? 0 : cheaper)])) continue;
        if (rt::compare_paired(rates[0], rates[i]).verdict != rt::difference::within_noise) continue;
        cheaper = static_cast<int>(i);
      }
    }
    std::printf("%s: %zu rounds; choose_paired %g, the cheaper rule %g\n", argv[a], rates[0].size(),
                cost[static_cast<std::size_t>(c.chosen < 0 ? 0 : c.chosen)],
                cost[static_cast<std::size_t>(cheaper < 0 ? 0 : cheaper)]);
  }
}
