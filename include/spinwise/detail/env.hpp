#pragma once
// The environment as spinwise reads it (SPINWISE_RELAX, SPINWISE_KNOBS, SPINWISE_PROFILE, the
// interposer's SPINWISE_PRELOAD_*, any other variable the runtime looks at), one way everywhere:
// glibc's secure_getenv, which answers nullptr in a set-user-ID, set-group-ID or
// capability-raised program (AT_SECURE), so that the environment of whoever runs such a program
// cannot pick its files, its knobs or where its statistics go. Elsewhere getenv, the only thing a
// C library without secure_getenv offers.

#include <cstdlib>

namespace spinwise::detail {

inline const char* env(const char* name) noexcept {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return ::secure_getenv(name);
#else
  return std::getenv(name);
#endif
}

}  // namespace spinwise::detail
