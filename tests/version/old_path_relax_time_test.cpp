// A header renamed since 0.3 keeps its old path as a forwarding header (docs/integration.md,
// "Renamed headers"): code that includes only the old path still builds and names what it used.
// Bug guarded: a rename that breaks every engine including the old path, or a forwarding header
// that forwards to less than the old header held. One old path per source file, and nothing else
// of spinwise included, so that another header cannot bring what the forwarding header lacks.
#include <gtest/gtest.h>

#include "spinwise/relax_time.hpp"

namespace {

// relax_time.hpp held the relax table.
TEST(OldHeaderPaths, RelaxTimeHppStillHasTheRelaxTable) {
  EXPECT_GT(spinwise::relax_ns_here(), 0.0);
  EXPECT_EQ(spinwise::relaxes_for_ns(0.0), 0u);
  EXPECT_FALSE(spinwise::install_relax_ns(spinwise::active_relax(), nullptr, 1, 1.0));  // no table
}

}  // namespace
