// spinwise-calibrate: measure what one relax instruction costs on every CPU of this machine.
#include <sched.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "spinwise/runtime/relax_cost.hpp"
#include "spinwise/version.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list-backends") == 0) {
    // The relax kinds this CPU can issue through this build's backend, one per line.
    for (spinwise::relax_kind k : spinwise::kAllRelaxKinds) {
      if (spinwise::relax_supported(k)) std::printf("%.*s\n", static_cast<int>(spinwise::to_string(k).size()),
                                                    spinwise::to_string(k).data());
    }
    return 0;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    std::perror("spinwise-calibrate: sched_getaffinity");
    return 1;
  }
  std::printf("spinwise %.*s  backend %.*s  relax %.*s  counter %.*s at %.3f MHz (%s)\n",
              static_cast<int>(spinwise::kVersion.size()), spinwise::kVersion.data(),
              static_cast<int>(spinwise::backend_name().size()), spinwise::backend_name().data(),
              static_cast<int>(spinwise::to_string(spinwise::active_relax()).size()),
              spinwise::to_string(spinwise::active_relax()).data(),
              static_cast<int>(spinwise::counter_name().size()), spinwise::counter_name().data(),
              static_cast<double>(spinwise::counter_frequency()) / 1e6,
              spinwise::counter_is_invariant() ? "invariant" : "NOT invariant");
  std::printf("%4s %-8s %10s %10s %10s %10s\n", "cpu", "relax", "ticks_min", "ticks_med", "ticks_p90", "ns_med");
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) continue;
    for (spinwise::relax_kind k : spinwise::kAllRelaxKinds) {
      if (!spinwise::relax_supported(k)) continue;
      spinwise::relax_cost_options opt;
      opt.kind = k;
      const spinwise::relax_cost c = spinwise::measure_relax_cost(opt);
      std::printf("%4d %-8.*s %10.2f %10.2f %10.2f %10.2f\n", cpu, static_cast<int>(spinwise::to_string(k).size()),
                  spinwise::to_string(k).data(), c.ticks_min, c.ticks_median, c.ticks_p90, c.ns_median);
    }
  }
  sched_setaffinity(0, sizeof(allowed), &allowed);
  return 0;
}
