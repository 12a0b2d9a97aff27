#pragma once
// Shared by calibration.cpp (measuring), recommend.cpp (advice) and relax_watch.cpp (the relax
// cost over time); not installed.

#include "common/format_number.hpp"
#include "spinwise/runtime/calibration.hpp"

namespace spinwise::detail {

// A relax kind whose cost is only loop overhead: no recommendation is meaningful for it.
inline bool trivial_kind(relax_kind k) { return k == relax_kind::none || k == relax_kind::barrier; }

// Busy for `ms` so a core that idled ramps its clock (and a vCPU that slept is running) before
// it is measured.
void warm_up(double ms);

// What a reader must not miss in `r` (failed CPUs, implausible clocks, unstable measurements,
// core kinds whose CPUs disagree), appended to r.warnings. Needs r.cpus and r.summaries.
void add_calibration_warnings(calibration_result& r);

}  // namespace spinwise::detail
