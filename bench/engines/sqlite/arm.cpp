// Installing the arm's mutexes (arm.hpp).
#include "arm.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "spinwise/sqlite.h"

namespace spinwise::sqlite_bench {
namespace {

sqlite3_mutex_methods current_methods(int& rc) {
  sqlite3_mutex_methods m{};
  rc = sqlite3_config(SQLITE_CONFIG_GETMUTEX, &m);
  return m;
}

}  // namespace

std::string object_of(const void* function) {
  Dl_info info{};
  if (function == nullptr || dladdr(function, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  char path[PATH_MAX];
  return realpath(info.dli_fname, path) != nullptr ? path : info.dli_fname;
}

mutex_setup install_arm(const options& o) {
  mutex_setup s;
  // SQLite fills in its own methods at its first initialize; before it GETMUTEX reads an empty
  // table. Initialize and shut down once, in every arm alike, to read what SQLite would use.
  if (int rc = sqlite3_initialize(); rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_initialize (first)");
    return s;
  }
  if (int rc = sqlite3_shutdown(); rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_shutdown");
    return s;
  }
  int rc = SQLITE_OK;
  const sqlite3_mutex_methods own = current_methods(rc);
  if (rc != SQLITE_OK) {
    s.error = fail(rc, "sqlite3_config(SQLITE_CONFIG_GETMUTEX)");
    return s;
  }
  if (o.arm == "sqlite") {
    // Saved and left installed: SQLite initializes with the table it already holds.
    s.mutexes = "sqlite";
    s.methods_saved = own.xMutexAlloc != nullptr && own.xMutexEnter != nullptr && own.xMutexLeave != nullptr;
    s.methods_from = object_of(reinterpret_cast<const void*>(own.xMutexEnter));
  } else {
    if (int irc = spinwise_sqlite_install(o.arm.c_str()); irc != SQLITE_OK) {
      s.error = {irc, std::string("spinwise_sqlite_install: ") + spinwise_sqlite_message()};
      return s;
    }
    s.mutexes = std::string("spinwise ") + o.arm;
    const sqlite3_mutex_methods now = current_methods(rc);
    s.methods_from = rc == SQLITE_OK ? object_of(reinterpret_cast<const void*>(now.xMutexEnter)) : "unknown";
  }
  if (int mrc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, o.memstatus ? 1 : 0); mrc != SQLITE_OK) {
    s.error = fail(mrc, "sqlite3_config(SQLITE_CONFIG_MEMSTATUS)");
    return s;
  }
  if (int irc = sqlite3_initialize(); irc != SQLITE_OK) {
    s.error = fail(irc, "sqlite3_initialize");
    return s;
  }
  // What SQLite runs on now, as spinwise::sqlite knows it: nullptr is SQLite's own.
  const char* kind = spinwise_sqlite_kind();
  const std::string running = kind == nullptr ? "sqlite" : std::string("spinwise ") + kind;
  if (running != s.mutexes) s.error = {SQLITE_ERROR, "asked for " + s.mutexes + ", running on " + running};
  return s;
}

}  // namespace spinwise::sqlite_bench
