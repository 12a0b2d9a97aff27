// A header renamed since 0.3 keeps its old path as a forwarding header (docs/integration.md,
// "Renamed headers"): code that includes only the old path still builds and names what it used.
// Bug guarded: a rename that breaks every engine including the old path, or a forwarding header
// that forwards to less than the old header held. One old path per source file, and nothing else
// of spinwise included, so that another header cannot bring what the forwarding header lacks.
#include <gtest/gtest.h>

#include <system_error>

#include "spinwise/knobs.hpp"

namespace {

// knobs.hpp held cpu_relaxer, errc and its category, knob_status and kMaxSpinLoops.
TEST(OldHeaderPaths, KnobsHppStillHasWhatItHeld) {
  spinwise::cpu_relaxer::relax_n(1);
  const std::error_code ec = spinwise::make_error_code(spinwise::errc::unknown_knob);
  EXPECT_EQ(&ec.category(), &spinwise::error_category());
  const spinwise::knob_status st(spinwise::errc::knob_out_of_range, "out");
  EXPECT_EQ(st.code(), std::errc::argument_out_of_domain);
  EXPECT_EQ(spinwise::kMaxSpinLoops, 1'000'000u);
}

}  // namespace
