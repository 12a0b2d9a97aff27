#pragma once
#include <string_view>

#include "spinwise/config.hpp"

namespace spinwise {
inline constexpr std::string_view kVersion = SPINWISE_VERSION_STRING;
}  // namespace spinwise
