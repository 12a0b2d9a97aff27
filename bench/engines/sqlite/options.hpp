// spinwise-sqlite-bench's options, as sqlite_bench.cpp parses them, and the exit codes.
#pragma once

#include <cstdint>
#include <string>

namespace spinwise::sqlite_bench {

constexpr int kExitFailed = 1;  // a check or a SQLite call failed: the JSON line says which
constexpr int kExitUsage = 2;

enum class mode { private_db, shared_cache, serialized, wal };

struct options {
  std::string arm = "sqlite";
  std::string mode_name = "private";
  int threads = 2;
  double seconds = 2.0;
  std::uint64_t ops = 0;  // per thread; 0: run for `seconds`
  double warmup = 0.5;
  bool memstatus = true;
  std::string dir;  // wal: where its directory is made; empty: $TMPDIR, else /tmp
  mode m = mode::private_db;
  std::string db_file;  // wal: <its directory>/bench.db, set by run() before any connection opens
};

inline const char* mode_name(mode m) {
  switch (m) {
    case mode::private_db:
      return "private";
    case mode::shared_cache:
      return "shared-cache";
    case mode::serialized:
      return "serialized";
    case mode::wal:
      return "wal";
  }
  return "";
}

// One arm in one mode, start to end: prints the JSON line and returns the exit status (run.cpp).
int run(options o);

}  // namespace spinwise::sqlite_bench
