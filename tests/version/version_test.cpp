// The headers' version is project(VERSION) (read from version.h), passed in by
// tests/version/CMakeLists.txt. Bug guarded:
// config.hpp's hand-written "0.2.0" beside project(VERSION 0.3.0), so the headers, the tools and
// profiles reported a version the package did not have.

// config.hpp alone, first: it defines the SPINWISE_VERSION_* macros (docs/integration.md, "Versions").
#include "spinwise/config.hpp"
#if !defined(SPINWISE_VERSION_MAJOR) || !defined(SPINWISE_VERSION_MINOR) || \
    !defined(SPINWISE_VERSION_PATCH) || !defined(SPINWISE_VERSION_STRING)
#error "<spinwise/config.hpp> no longer defines the SPINWISE_VERSION_* macros"
#endif

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "spinwise/version.hpp"

namespace {

TEST(Version, MacrosAreTheProjectVersion) {
  EXPECT_STREQ(SPINWISE_VERSION_STRING, SPINWISE_EXPECTED_VERSION);
  EXPECT_EQ(SPINWISE_VERSION_MAJOR, SPINWISE_EXPECTED_MAJOR);
  EXPECT_EQ(SPINWISE_VERSION_MINOR, SPINWISE_EXPECTED_MINOR);
  EXPECT_EQ(SPINWISE_VERSION_PATCH, SPINWISE_EXPECTED_PATCH);
  EXPECT_EQ(std::to_string(SPINWISE_VERSION_MAJOR) + "." + std::to_string(SPINWISE_VERSION_MINOR) + "." +
                std::to_string(SPINWISE_VERSION_PATCH),
            SPINWISE_VERSION_STRING);
}

TEST(Version, KVersionIsTheProjectVersion) {
  EXPECT_EQ(spinwise::kVersion, std::string_view(SPINWISE_EXPECTED_VERSION));
  static_assert(spinwise::kVersion == SPINWISE_VERSION_STRING, "one string, one source");
}

}  // namespace
