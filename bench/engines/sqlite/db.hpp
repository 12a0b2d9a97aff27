// SQLite, thinly: connections and statements that close themselves, a failed call with what was
// being done, the retry of what another connection holds, the wal mode's scratch directory, and
// the table's check after the run.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "options.hpp"

namespace spinwise::sqlite_bench {

struct db_closer {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct stmt_finalizer {
  void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using db_ptr = std::unique_ptr<sqlite3, db_closer>;
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

// A failed SQLite call, with what was being done; rc SQLITE_OK: none.
struct sqlite_error {
  int rc = SQLITE_OK;
  std::string what;
  explicit operator bool() const noexcept { return rc != SQLITE_OK; }
};

sqlite_error fail(int rc, const std::string& what, sqlite3* db = nullptr);

const char* open_flags_text(mode m);

// The wal mode's database: a file in a directory of its own, made for the run and removed after it
// with whatever SQLite left there (the -wal and -shm files), also when the run fails.
class scratch_dir {
 public:
  scratch_dir() = default;
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() { remove(); }

  // Makes <parent>/spinwise-sqlite-XXXXXX; an empty string on success, else why not.
  std::string make(std::string parent);
  const std::string& path() const noexcept { return path_; }
  // False when the directory is still there (something else was left in it).
  bool remove() noexcept;

 private:
  std::string path_;
};

// The name the mode opens: ":memory:", the shared cache's URI or the wal mode's file.
std::string db_name(const options& o);
sqlite_error open_db(const options& o, db_ptr& out);

// Steps `s` until it is done (or gives a row, with `want_row`), retrying what another connection
// holds (held_elsewhere) after a reset and a yield; counts the retries into `retries`.
int step_retrying(sqlite3_stmt* s, bool want_row, std::uint64_t& retries);
sqlite_error prepare(sqlite3* db, const char* sql, stmt_ptr& out);
sqlite_error exec(sqlite3* db, const char* sql);

// A PRAGMA that answers one row: sets `answer` to its first column ("" when it gives no row).
sqlite_error pragma(sqlite3* db, const char* sql, std::string& answer);

// What every wal connection runs first: commits that write the WAL without an fsync each (the
// checkpoints still sync), SQLite's advice for WAL.
sqlite_error wal_connection(sqlite3* db);

// SELECT COUNT(*) and PRAGMA integrity_check of the table, after the run.
struct table_check {
  std::int64_t rows = -1;
  std::string integrity;  // "ok", or integrity_check's first lines
  sqlite_error error;
};

table_check check_table(sqlite3* db);

}  // namespace spinwise::sqlite_bench
