// Compiled with SPINWISE_AARCH64_RELAX_DEFAULT=yield: the build-time choice must become the
// aarch64 default, and must not disturb the other backends' defaults.
#include <gtest/gtest.h>

#include <cstdlib>

#include "spinwise/arch.hpp"

namespace sw = spinwise;

TEST(ArchDefault, BuildTimeChoiceIsTheDefault) {
#if defined(__aarch64__) && !defined(SPINWISE_FORCE_GENERIC)
  EXPECT_EQ(sw::default_relax(), sw::relax_kind::yield);
#elif defined(__x86_64__) && !defined(SPINWISE_FORCE_GENERIC)
  EXPECT_EQ(sw::default_relax(), sw::relax_kind::pause);
#else
  EXPECT_EQ(sw::default_relax(), sw::relax_kind::barrier);
#endif
  if (std::getenv("SPINWISE_RELAX") == nullptr) {
    EXPECT_EQ(sw::active_relax(), sw::default_relax());
  }
}
