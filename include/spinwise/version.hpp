#pragma once
// spinwise's version in C++: spinwise::kVersion. The numbers and the SPINWISE_VERSION_* macros
// are written once, in <spinwise/version.h>, which C programs include too.
#include <string_view>

#include "spinwise/version.h"

namespace spinwise {
inline constexpr std::string_view kVersion = SPINWISE_VERSION_STRING;
}  // namespace spinwise
