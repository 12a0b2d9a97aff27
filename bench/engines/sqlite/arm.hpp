// Installing the arm's mutexes: SQLite's own (saved and left in place) or spinwise's
// (spinwise_sqlite_install), through the start-up every arm shares (sqlite_bench.cpp's top).
#pragma once

#include <string>

#include "db.hpp"
#include "options.hpp"

namespace spinwise::sqlite_bench {

struct mutex_setup {
  std::string mutexes;         // "sqlite" or "spinwise <kind>"
  bool methods_saved = false;  // SQLITE_CONFIG_GETMUTEX gave a complete table (kept, for the sqlite arm)
  std::string methods_from;    // the object file that holds the xMutexEnter in place at initialize
  sqlite_error error;
};

// The object file that holds `function` (a real path where it resolves), or "unknown".
std::string object_of(const void* function);

// Initializes SQLite on the arm's mutexes; the error says what failed, or that SQLite runs on
// other mutexes than the arm asked for.
mutex_setup install_arm(const options& o);

}  // namespace spinwise::sqlite_bench
