#pragma once
// spinwise's version: the one place it is written. The top CMakeLists.txt reads these three lines
// into project(VERSION), so the package version, pkg-config and every tool's --version follow
// them; a plain -I include build sees the same. Edit the numbers here, nowhere else.
#include <string_view>

#define SPINWISE_VERSION_MAJOR 0
#define SPINWISE_VERSION_MINOR 3
#define SPINWISE_VERSION_PATCH 0

#define SPINWISE_VERSION_STR_(x) #x
#define SPINWISE_VERSION_STR(x) SPINWISE_VERSION_STR_(x)
#define SPINWISE_VERSION_STRING                \
  SPINWISE_VERSION_STR(SPINWISE_VERSION_MAJOR) \
  "." SPINWISE_VERSION_STR(SPINWISE_VERSION_MINOR) "." SPINWISE_VERSION_STR(SPINWISE_VERSION_PATCH)

namespace spinwise {
inline constexpr std::string_view kVersion = SPINWISE_VERSION_STRING;
}  // namespace spinwise
