// SQLite, thinly (db.hpp): the calls every mode and the checks make.
#include "db.hpp"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace spinwise::sqlite_bench {
namespace {

constexpr const char* kSharedCacheUri = "file:spinwise_sqlite_bench?mode=memory&cache=shared";

// SQLITE_LOCKED: a shared-cache table lock; SQLITE_BUSY: WAL's write lock (or a checkpoint), taken
// by another connection. Either is retried after a reset and a yield.
bool held_elsewhere(int rc) noexcept { return (rc & 0xff) == SQLITE_LOCKED || (rc & 0xff) == SQLITE_BUSY; }

int open_flags(mode m) {
  switch (m) {
    case mode::private_db:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    case mode::shared_cache:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
             SQLITE_OPEN_SHAREDCACHE;
    case mode::serialized:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    case mode::wal:
      return SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  }
  return 0;
}

}  // namespace

sqlite_error fail(int rc, const std::string& what, sqlite3* db) {
  std::string msg = what + ": " + sqlite3_errstr(rc);
  // On a connection other threads share (serialized), errmsg may be another thread's: the code is
  // this call's, the message a hint.
  if (db != nullptr) msg += std::string(" (") + sqlite3_errmsg(db) + ")";
  return {rc, msg};
}

const char* open_flags_text(mode m) {
  switch (m) {
    case mode::private_db:
      return "READWRITE|CREATE|NOMUTEX";
    case mode::shared_cache:
      return "READWRITE|CREATE|NOMUTEX|URI|SHAREDCACHE";
    case mode::serialized:
      return "READWRITE|CREATE|FULLMUTEX";
    case mode::wal:
      return "READWRITE|CREATE|NOMUTEX";
  }
  return "";
}

std::string scratch_dir::make(std::string parent) {
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string templ = parent + "/spinwise-sqlite-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr)
    return "cannot make a directory in " + parent + ": " + std::strerror(errno);
  path_ = templ;
  return {};
}

bool scratch_dir::remove() noexcept {
  if (path_.empty()) return true;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    ::unlink((path_ + "/bench.db" + suffix).c_str());
  const bool gone = ::rmdir(path_.c_str()) == 0;
  path_.clear();
  return gone;
}

std::string db_name(const options& o) {
  switch (o.m) {
    case mode::shared_cache:
      return kSharedCacheUri;
    case mode::wal:
      return o.db_file;
    default:
      return ":memory:";
  }
}

sqlite_error open_db(const options& o, db_ptr& out) {
  sqlite3* db = nullptr;
  const std::string name = db_name(o);
  const int rc = sqlite3_open_v2(name.c_str(), &db, open_flags(o.m), nullptr);
  out.reset(db);  // sqlite3_open_v2 may hand back a handle on failure too: closed with `out`
  if (rc != SQLITE_OK) return fail(rc, "sqlite3_open_v2 " + name, db);
  return {};
}

int step_retrying(sqlite3_stmt* s, bool want_row, std::uint64_t& retries) {
  for (;;) {
    const int rc = sqlite3_step(s);
    if (!held_elsewhere(rc))
      return (want_row && rc == SQLITE_ROW) || (!want_row && rc == SQLITE_DONE) ? SQLITE_OK : rc;
    sqlite3_reset(s);
    ++retries;
    sched_yield();
  }
}

sqlite_error prepare(sqlite3* db, const char* sql, stmt_ptr& out) {
  for (;;) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    out.reset(s);
    if (rc == SQLITE_OK) return {};
    if (!held_elsewhere(rc)) return fail(rc, std::string("prepare ") + sql, db);
    sched_yield();  // the schema's table lock, held by a writer of the shared cache (or WAL's lock)
  }
}

sqlite_error exec(sqlite3* db, const char* sql) {
  std::uint64_t retries = 0;
  stmt_ptr s;
  if (sqlite_error e = prepare(db, sql, s)) return e;
  const int rc = step_retrying(s.get(), false, retries);
  return rc == SQLITE_OK ? sqlite_error{} : fail(rc, sql, db);
}

sqlite_error pragma(sqlite3* db, const char* sql, std::string& answer) {
  stmt_ptr s;
  if (sqlite_error e = prepare(db, sql, s)) return e;
  answer.clear();
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0));
    if (answer.empty() && text != nullptr) answer = text;
  }
  return rc == SQLITE_DONE ? sqlite_error{} : fail(rc, sql, db);
}

sqlite_error wal_connection(sqlite3* db) {
  std::string answer;
  return pragma(db, "PRAGMA synchronous=NORMAL", answer);
}

table_check check_table(sqlite3* db) {
  table_check c;
  std::uint64_t retries = 0;
  stmt_ptr count;
  if ((c.error = prepare(db, "SELECT COUNT(*) FROM t", count))) return c;
  if (int rc = step_retrying(count.get(), true, retries); rc != SQLITE_OK) {
    c.error = fail(rc, "SELECT COUNT(*)", db);
    return c;
  }
  c.rows = sqlite3_column_int64(count.get(), 0);
  stmt_ptr check;
  if ((c.error = prepare(db, "PRAGMA integrity_check", check))) return c;
  int rc;
  int lines = 0;
  while ((rc = sqlite3_step(check.get())) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(check.get(), 0));
    if (lines++ < 5) c.integrity += (c.integrity.empty() ? "" : "; ") + std::string(text ? text : "(null)");
  }
  if (rc != SQLITE_DONE) c.error = fail(rc, "PRAGMA integrity_check", db);
  return c;
}

}  // namespace spinwise::sqlite_bench
