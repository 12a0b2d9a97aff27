// Every kept --tune run's rounds through choose_paired as built (the tree's rule), beside the
// choice the run itself made, and each choice against the sweep run beside it (its sweep.json):
//   g++ -std=c++17 -O1 -Iinclude bench/results/tune-zen5-cheaper/replay_all.cpp \
//       build/release/src/libspinwise_runtime.a -lpthread -o /tmp/replay_all
//   /tmp/replay_all TUNE.json SWEEP.json [TUNE.json SWEEP.json ...]
// A run kept without its tune.json (tune-zen5-limit's 11 rounds) is in rates.inc there.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "spinwise/runtime/uncertainty.hpp"

namespace rt = spinwise::runtime;

int main(int argc, char** argv) {
  for (int a = 1; a + 1 < argc; a += 2) {
    std::ifstream tin(argv[a]), sin(argv[a + 1]);
    const nlohmann::json t = nlohmann::json::parse(tin), s = nlohmann::json::parse(sin);
    std::vector<std::vector<double>> rates;
    std::vector<double> cost;
    for (const auto& c : t["candidates"]) {
      rates.push_back(c["rates"].get<std::vector<double>>());
      cost.push_back(c["value"].get<double>());
    }
    std::map<int, double> med;
    for (const auto& p : s["workloads"][0]["points"])
      med[p["delay"].get<int>()] = p["qps_median"].get<double>();
    double top = 0;
    int best = -1;
    for (const auto& [d, q] : med)
      if (q > top) top = q, best = d;
    const rt::paired_choice c = rt::choose_paired(rates, cost);
    const int now = static_cast<int>(cost[static_cast<std::size_t>(c.chosen < 0 ? 0 : c.chosen)]);
    const int then = t["verdict"]["value"].get<int>();
    std::printf("%s: %zu rounds; sweep best %d; the run chose %d (%.3f); the rule now %d (%.3f)\n", argv[a],
                rates[0].size(), best, then, med[then] / top, now, med[now] / top);
  }
}
