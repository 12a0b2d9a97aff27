/* spinwise's version: the one place it is written, for C and C++ alike. The top CMakeLists.txt
 * reads these three lines into project(VERSION), so the package version, pkg-config and every
 * tool's --version follow them; a plain -I include build sees the same. <spinwise/version.hpp>
 * (C++) and <spinwise/spinwise.h> (C) include it. Edit the numbers here, nowhere else. */
#ifndef SPINWISE_VERSION_H
#define SPINWISE_VERSION_H

#define SPINWISE_VERSION_MAJOR 0
#define SPINWISE_VERSION_MINOR 3
#define SPINWISE_VERSION_PATCH 0

/* One number to compare: major * 1000000 + minor * 1000 + patch (0.3.0 is 3000), as SQLite's
 * SQLITE_VERSION_NUMBER. spinwise_version() (C API) gives the library's, to compare with this. */
#define SPINWISE_VERSION \
  (SPINWISE_VERSION_MAJOR * 1000000 + SPINWISE_VERSION_MINOR * 1000 + SPINWISE_VERSION_PATCH)

#define SPINWISE_VERSION_STR_(x) #x
#define SPINWISE_VERSION_STR(x) SPINWISE_VERSION_STR_(x)
#define SPINWISE_VERSION_STRING                \
  SPINWISE_VERSION_STR(SPINWISE_VERSION_MAJOR) \
  "." SPINWISE_VERSION_STR(SPINWISE_VERSION_MINOR) "." SPINWISE_VERSION_STR(SPINWISE_VERSION_PATCH)

#endif /* SPINWISE_VERSION_H */
