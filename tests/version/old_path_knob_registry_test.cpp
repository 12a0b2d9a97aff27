// A header renamed since 0.3 keeps its old path as a forwarding header (docs/integration.md,
// "Renamed headers"): code that includes only the old path still builds and names what it used.
// Bug guarded: a rename that breaks every engine including the old path, or a forwarding header
// that forwards to less than the old header held. One old path per source file, and nothing else
// of spinwise included, so that another header cannot bring what the forwarding header lacks.
#include <gtest/gtest.h>

#include "spinwise/knob_registry.hpp"

namespace {

// knob_registry.hpp held the knob text and brought the registry (knob_class.hpp) with it.
TEST(OldHeaderPaths, KnobRegistryHppStillHasTheTextAndTheRegistry) {
  EXPECT_TRUE(spinwise::check_knobs("time.spin_loops=5").ok());
  EXPECT_FALSE(spinwise::check_knobs("time.no_such_knob=5").ok());
  EXPECT_TRUE(spinwise::find_knob_class("hybrid_mutex").has_value());
  EXPECT_FALSE(spinwise::format_knob_table().empty());
}

}  // namespace
