#include <cstdio>
#include <string>
#include <vector>

#include "rates.inc"
#include "spinwise/runtime/uncertainty.hpp"
int main() {
  namespace rt = spinwise::runtime;
  for (std::size_t i = 1; i < kRates.size(); ++i) {
    const auto vs = rt::compare_paired(kRates[0], kRates[i]);
    std::printf("%g vs %g: %.3f [%.3f, %.3f] %s\n", kCost[i], kCost[0], vs.ratio, vs.lo, vs.hi,
                std::string(rt::to_string(vs.verdict)).c_str());
  }
  const auto c = rt::choose_paired(kRates, kCost);
  std::printf("best %d chosen %d\n", c.best, c.chosen);
}
