#pragma once
// One number through a printf format, as a std::string: the runtime's reports and messages
// (calibration, advice, the relax watch, the statistics report). Not installed.

#include <cstdio>
#include <string>

namespace spinwise::detail {

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

}  // namespace spinwise::detail
