// spinwise::sqlite under a real libsqlite3, one lock kind per process (argv[1]; ctest runs
// sqlite.<kind> for each): SQLite initializes once per process, and an install is for the process.
// Every test starts from a shut-down SQLite with the kind installed and initialized again, so the
// tests may run in any order or alone (--gtest_filter).
#include "spinwise/sqlite.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "spinwise/runtime/stats_report.hpp"
#include "test_util.hpp"

namespace {

const char* g_kind = "hybrid";  // argv[1]

constexpr int kThreads = 4;
constexpr const char* kKnownKinds = "(known: hybrid, adaptive, tas, ttas, ticket, mcs)";

const sqlite3_mutex_methods& methods() {
  const sqlite3_mutex_methods* m = spinwise_sqlite_methods(g_kind);
  if (m == nullptr) {
    std::fprintf(stderr, "FATAL: no methods for kind '%s': %s\n", g_kind, spinwise_sqlite_message());
    std::abort();
  }
  return *m;
}

// Runs f on another thread and returns its result.
template <class F>
auto on_other_thread(F f) {
  decltype(f()) r{};
  std::thread t([&] { r = f(); });
  t.join();
  return r;
}

class Sqlite : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
    ASSERT_EQ(spinwise_sqlite_install(g_kind), SQLITE_OK) << spinwise_sqlite_message();
    ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  }
  void TearDown() override { EXPECT_EQ(sqlite3_shutdown(), SQLITE_OK); }
};

// --- install ---------------------------------------------------------------------------------

// Guards against an install that reports success while SQLite keeps its own mutexes.
TEST_F(Sqlite, SqliteUsesTheInstalledMutexes) {
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  EXPECT_STREQ(spinwise_sqlite_message(), "");
  // SQLite's public allocation is ours: the same static object as our methods give.
  EXPECT_EQ(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1), methods().xMutexAlloc(SQLITE_MUTEX_STATIC_APP1));
  // A connection's own mutex is one of ours: SQLite's enter makes our Held true.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_mutex* dbm = sqlite3_db_mutex(db);
  ASSERT_NE(dbm, nullptr);
  EXPECT_FALSE(methods().xMutexHeld(dbm));
  sqlite3_mutex_enter(dbm);
  EXPECT_TRUE(methods().xMutexHeld(dbm));
  EXPECT_FALSE(methods().xMutexNotheld(dbm));
  sqlite3_mutex_leave(dbm);
  EXPECT_FALSE(methods().xMutexHeld(dbm));
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
}

// Guards against an install after initialization that half-succeeds: SQLite refuses it, and our
// kind must not change either (it would then name mutexes SQLite does not use).
TEST_F(Sqlite, InstallAfterInitializeIsMisuseAndChangesNothing) {
  const char* other = std::strcmp(g_kind, "tas") == 0 ? "mcs" : "tas";
  EXPECT_EQ(spinwise_sqlite_install(other), SQLITE_MISUSE);
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  EXPECT_NE(std::strstr(spinwise_sqlite_message(), "initialized"), nullptr) << spinwise_sqlite_message();
  EXPECT_EQ(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1), methods().xMutexAlloc(SQLITE_MUTEX_STATIC_APP1));

  // A first sqlite3_open initializes SQLite as well.
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(spinwise_sqlite_install(other), SQLITE_MISUSE);
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
}

// Guards against an unknown name that changes the installed kind, or a message that does not say
// which name was wrong.
TEST_F(Sqlite, UnknownKindIsAnErrorAndChangesNothing) {
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);  // where an install would otherwise succeed
  EXPECT_EQ(spinwise_sqlite_install("foo"), SQLITE_ERROR);
  EXPECT_STREQ(spinwise_sqlite_message(),
               (std::string("spinwise_sqlite_install: unknown lock kind 'foo' ") + kKnownKinds).c_str());
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  EXPECT_EQ(spinwise_sqlite_methods("foo"), nullptr);
  EXPECT_NE(std::strstr(spinwise_sqlite_message(), "'foo'"), nullptr);

  ASSERT_EQ(setenv("SPINWISE_SQLITE_LOCK", "bogus", 1), 0);
  EXPECT_EQ(spinwise_sqlite_install(nullptr), SQLITE_ERROR);
  EXPECT_STREQ(spinwise_sqlite_message(),
               (std::string("spinwise_sqlite_install: unknown lock kind 'bogus' from SPINWISE_SQLITE_LOCK ") +
                kKnownKinds)
                   .c_str());
  EXPECT_EQ(spinwise_sqlite_methods(nullptr), nullptr);
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  ASSERT_EQ(unsetenv("SPINWISE_SQLITE_LOCK"), 0);

  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  EXPECT_EQ(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1), methods().xMutexAlloc(SQLITE_MUTEX_STATIC_APP1))
      << "a refused install left SQLite on other mutexes";
}

// Guards against NULL ignoring the environment, or an empty variable counting as a name.
TEST_F(Sqlite, NullKindComesFromTheEnvironmentElseHybrid) {
  EXPECT_EQ(spinwise_sqlite_methods(nullptr), spinwise_sqlite_methods("hybrid"));
  ASSERT_EQ(setenv("SPINWISE_SQLITE_LOCK", "", 1), 0);
  EXPECT_EQ(spinwise_sqlite_methods(nullptr), spinwise_sqlite_methods("hybrid"));
  ASSERT_EQ(setenv("SPINWISE_SQLITE_LOCK", g_kind, 1), 0);
  EXPECT_EQ(spinwise_sqlite_methods(nullptr), &methods());
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
  EXPECT_EQ(spinwise_sqlite_install(nullptr), SQLITE_OK) << spinwise_sqlite_message();
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  EXPECT_STREQ(spinwise_sqlite_message(), "");
  ASSERT_EQ(unsetenv("SPINWISE_SQLITE_LOCK"), 0);
  // Every kind has its own table.
  std::set<const sqlite3_mutex_methods*> tables;
  for (const char* k : {"hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"}) {
    const sqlite3_mutex_methods* m = spinwise_sqlite_methods(k);
    ASSERT_NE(m, nullptr) << k;
    tables.insert(m);
  }
  EXPECT_EQ(tables.size(), 6u);
}

// Guards against a shutdown that leaves the plug-in unusable, or a reinstall SQLite ignores.
TEST_F(Sqlite, ReinstallAfterShutdown) {
  const char* other = std::strcmp(g_kind, "ticket") == 0 ? "hybrid" : "ticket";
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
  ASSERT_EQ(spinwise_sqlite_install(other), SQLITE_OK) << spinwise_sqlite_message();
  EXPECT_STREQ(spinwise_sqlite_kind(), other);
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  sqlite3_mutex* app1 = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1);
  EXPECT_EQ(app1, spinwise_sqlite_methods(other)->xMutexAlloc(SQLITE_MUTEX_STATIC_APP1));
  EXPECT_NE(app1, methods().xMutexAlloc(SQLITE_MUTEX_STATIC_APP1)) << "each kind has its own static mutexes";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
  ASSERT_EQ(spinwise_sqlite_install(g_kind), SQLITE_OK);
  EXPECT_STREQ(spinwise_sqlite_kind(), g_kind);
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  EXPECT_EQ(sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1), methods().xMutexAlloc(SQLITE_MUTEX_STATIC_APP1));
}

// --- the mutex methods -----------------------------------------------------------------------

// Guards against xMutexInit that is not safe to call concurrently and repeatedly.
TEST_F(Sqlite, InitIsConcurrentAndIdempotent) {
  const sqlite3_mutex_methods& m = methods();
  std::atomic<int> failures{0}, calls{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (m.xMutexInit() != SQLITE_OK) failures.fetch_add(1);
        calls.fetch_add(1);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(calls.load(), 8000);
  // The statics still work after the repeated inits.
  sqlite3_mutex* app2 = m.xMutexAlloc(SQLITE_MUTEX_STATIC_APP2);
  ASSERT_NE(app2, nullptr);
  EXPECT_EQ(m.xMutexTry(app2), SQLITE_OK);
  m.xMutexLeave(app2);
  EXPECT_EQ(m.xMutexEnd(), SQLITE_OK);
  EXPECT_EQ(m.xMutexInit(), SQLITE_OK);
}

// Guards against a recursive mutex that is not recursive, lets another thread in before the
// owner's last leave, or keeps it out after.
TEST_F(Sqlite, RecursiveDepthAndOwnership) {
  const sqlite3_mutex_methods& m = methods();
  sqlite3_mutex* r = m.xMutexAlloc(SQLITE_MUTEX_RECURSIVE);
  ASSERT_NE(r, nullptr);
  auto other_try = [&] {
    return on_other_thread([&] {
      const int rc = m.xMutexTry(r);
      if (rc == SQLITE_OK) m.xMutexLeave(r);
      return rc;
    });
  };
  m.xMutexEnter(r);
  m.xMutexEnter(r);
  EXPECT_EQ(m.xMutexTry(r), SQLITE_OK) << "the owner's try re-enters";  // depth 3
  EXPECT_TRUE(m.xMutexHeld(r));
  EXPECT_EQ(other_try(), SQLITE_BUSY);
  EXPECT_FALSE(on_other_thread([&] { return m.xMutexHeld(r); }));
  EXPECT_TRUE(on_other_thread([&] { return m.xMutexNotheld(r); }));
  m.xMutexLeave(r);
  m.xMutexLeave(r);  // depth 1: still owned
  EXPECT_TRUE(m.xMutexHeld(r));
  EXPECT_EQ(other_try(), SQLITE_BUSY);
  m.xMutexLeave(r);
  EXPECT_FALSE(m.xMutexHeld(r));
  EXPECT_TRUE(m.xMutexNotheld(r));
  EXPECT_EQ(other_try(), SQLITE_OK);
  // Another thread owns it now: our try fails, and our enter waits until its last leave.
  std::atomic<int> stage{0};
  std::thread owner([&] {
    m.xMutexEnter(r);
    m.xMutexEnter(r);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    m.xMutexLeave(r);
    m.xMutexLeave(r);
  });
  while (stage.load() != 1) std::this_thread::yield();
  EXPECT_EQ(m.xMutexTry(r), SQLITE_BUSY);
  EXPECT_FALSE(m.xMutexHeld(r));
  stage = 2;
  m.xMutexEnter(r);
  EXPECT_TRUE(m.xMutexHeld(r));
  m.xMutexLeave(r);
  owner.join();
  m.xMutexFree(r);
}

// Guards against Held/Notheld that answer for the mutex instead of for the calling thread.
TEST_F(Sqlite, FastMutexTryAndHeld) {
  const sqlite3_mutex_methods& m = methods();
  sqlite3_mutex* a = m.xMutexAlloc(SQLITE_MUTEX_FAST);
  sqlite3_mutex* b = m.xMutexAlloc(SQLITE_MUTEX_FAST);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b) << "every fast allocation is a new mutex";
  EXPECT_FALSE(m.xMutexHeld(a));
  EXPECT_TRUE(m.xMutexNotheld(a));
  EXPECT_EQ(m.xMutexTry(a), SQLITE_OK);
  EXPECT_TRUE(m.xMutexHeld(a));
  EXPECT_FALSE(m.xMutexNotheld(a));
  EXPECT_FALSE(m.xMutexHeld(b)) << "holding one mutex is not holding another";
  EXPECT_FALSE(on_other_thread([&] { return m.xMutexHeld(a); }));
  EXPECT_TRUE(on_other_thread([&] { return m.xMutexNotheld(a); }));
  EXPECT_EQ(on_other_thread([&] { return m.xMutexTry(a); }), SQLITE_BUSY);
  m.xMutexLeave(a);
  EXPECT_FALSE(m.xMutexHeld(a));
  // Held by another thread: not by us.
  std::atomic<int> stage{0};
  std::thread holder([&] {
    m.xMutexEnter(a);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    m.xMutexLeave(a);
  });
  while (stage.load() != 1) std::this_thread::yield();
  EXPECT_FALSE(m.xMutexHeld(a));
  EXPECT_TRUE(m.xMutexNotheld(a));
  EXPECT_EQ(m.xMutexTry(a), SQLITE_BUSY);
  stage = 2;
  holder.join();
  EXPECT_EQ(m.xMutexTry(a), SQLITE_OK);
  m.xMutexLeave(a);
  m.xMutexFree(a);
  m.xMutexFree(b);
  // SQLite's own answer for "no mutex".
  EXPECT_TRUE(m.xMutexHeld(nullptr));
  EXPECT_TRUE(m.xMutexNotheld(nullptr));
}

// Guards against static mutexes that are allocated (a new one per call, or freed by xMutexFree),
// shared between ids, or invented for ids SQLite does not have.
TEST_F(Sqlite, StaticMutexesAreFixedObjects) {
  const sqlite3_mutex_methods& m = methods();
  std::set<sqlite3_mutex*> seen;
  for (int id = SQLITE_MUTEX_STATIC_MAIN; id <= SQLITE_MUTEX_STATIC_VFS3; ++id) {
    sqlite3_mutex* s = m.xMutexAlloc(id);
    ASSERT_NE(s, nullptr) << "id " << id;
    EXPECT_EQ(m.xMutexAlloc(id), s) << "id " << id;
    EXPECT_EQ(sqlite3_mutex_alloc(id), s) << "id " << id;
    m.xMutexFree(s);  // does nothing
    EXPECT_EQ(m.xMutexAlloc(id), s) << "id " << id;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 12u) << "each id its own mutex";
  for (int id : {-1, SQLITE_MUTEX_STATIC_VFS3 + 1, 100}) EXPECT_EQ(m.xMutexAlloc(id), nullptr) << "id " << id;

  // Held and Notheld on a static one (an application's: SQLite itself never takes it).
  for (int id : {SQLITE_MUTEX_STATIC_APP1, SQLITE_MUTEX_STATIC_APP3}) {
    sqlite3_mutex* s = m.xMutexAlloc(id);
    EXPECT_FALSE(m.xMutexHeld(s));
    m.xMutexEnter(s);
    EXPECT_TRUE(m.xMutexHeld(s));
    EXPECT_FALSE(m.xMutexNotheld(s));
    EXPECT_FALSE(on_other_thread([&] { return m.xMutexHeld(s); }));
    EXPECT_TRUE(on_other_thread([&] { return m.xMutexNotheld(s); }));
    EXPECT_EQ(on_other_thread([&] { return m.xMutexTry(s); }), SQLITE_BUSY);
    m.xMutexFree(s);  // still does nothing: the mutex stays held and usable
    EXPECT_TRUE(m.xMutexHeld(s));
    m.xMutexLeave(s);
    EXPECT_FALSE(m.xMutexHeld(s));
    EXPECT_EQ(on_other_thread([&] {
                const int rc = m.xMutexTry(s);
                if (rc == SQLITE_OK) m.xMutexLeave(s);
                return rc;
              }),
              SQLITE_OK);
  }
}

// --- SQLite on these mutexes -----------------------------------------------------------------

int exec(sqlite3* db, const std::string& sql) {
  return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
}

// The first column of the first row as text ("" for none), or the error.
int query(sqlite3* db, const char* sql, std::string& out) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
  if (rc != SQLITE_OK) return rc;
  out.clear();
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    out = t != nullptr ? reinterpret_cast<const char*>(t) : "";
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

bool retryable(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

using clock_type = std::chrono::steady_clock;
constexpr auto kGiveUp = std::chrono::seconds(60);

// Runs `sql` as one IMMEDIATE transaction, again while SQLite says busy or locked (a shared-cache
// table lock is not waited for by busy_timeout). False after kGiveUp or on another error.
bool transact(sqlite3* db, const std::string& sql, std::string& error) {
  const auto give_up = clock_type::now() + kGiveUp;
  for (;;) {
    int rc = exec(db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK) rc = exec(db, sql);
    if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
    if (rc == SQLITE_OK) return true;
    const std::string why = sqlite3_errmsg(db);
    exec(db, "ROLLBACK");  // fails harmlessly where the transaction did not begin
    if (!retryable(rc) || clock_type::now() > give_up) {
      error = why;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// The count of rows, again while busy or locked.
bool count_rows(sqlite3* db, const char* sql, long& n, std::string& error) {
  const auto give_up = clock_type::now() + kGiveUp;
  for (;;) {
    std::string v;
    const int rc = query(db, sql, v);
    if (rc == SQLITE_OK) {
      n = std::atol(v.c_str());
      return true;
    }
    if (!retryable(rc) || clock_type::now() > give_up) {
      error = sqlite3_errmsg(db);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// kThreads threads, each on its own connection to `uri`: transactions of inserts, each followed by
// a read that must see at least the thread's own rows. Then every row is there, each thread's
// exactly, and the database is intact.
void hammer(const std::string& uri, bool wal) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
  sqlite3* keeper = nullptr;  // keeps a shared-cache memory database alive; checks at the end
  ASSERT_EQ(sqlite3_open_v2(uri.c_str(), &keeper, flags, nullptr), SQLITE_OK) << uri;
  sqlite3_busy_timeout(keeper, 10000);
  if (wal) {
    std::string mode;
    ASSERT_EQ(query(keeper, "PRAGMA journal_mode=WAL", mode), SQLITE_OK);
    ASSERT_EQ(mode, "wal");
    ASSERT_EQ(exec(keeper, "PRAGMA synchronous=NORMAL"), SQLITE_OK);
  }
  ASSERT_EQ(exec(keeper, "CREATE TABLE t(id INTEGER PRIMARY KEY, thread INT, seq INT, UNIQUE(thread, seq))"),
            SQLITE_OK)
      << sqlite3_errmsg(keeper);

  const int transactions = spinwise_test::scaled(150, 20);
  constexpr int kRowsPerTransaction = 5;
  std::atomic<long> reads{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(uri.c_str(), &db, flags, nullptr) != SQLITE_OK) {
        ADD_FAILURE() << "open " << uri << ": " << sqlite3_errmsg(db);
        sqlite3_close(db);
        return;
      }
      sqlite3_busy_timeout(db, 10000);
      std::string error;
      for (int i = 0; i < transactions; ++i) {
        std::string sql;
        for (int r = 0; r < kRowsPerTransaction; ++r) {
          sql += "INSERT INTO t(thread, seq) VALUES(" + std::to_string(t) + ", " +
                 std::to_string(i * kRowsPerTransaction + r) + ");";
        }
        if (!transact(db, sql, error)) {
          ADD_FAILURE() << "thread " << t << " transaction " << i << ": " << error;
          break;
        }
        const std::string mine = "SELECT count(*) FROM t WHERE thread = " + std::to_string(t);
        long n = 0;
        if (!count_rows(db, mine.c_str(), n, error)) {
          ADD_FAILURE() << "thread " << t << " read: " << error;
          break;
        }
        EXPECT_EQ(n, static_cast<long>(i + 1) * kRowsPerTransaction)
            << "thread " << t << " reads its own rows";
        if (!count_rows(db, "SELECT count(*) FROM t", n, error)) {
          ADD_FAILURE() << "thread " << t << " read: " << error;
          break;
        }
        reads.fetch_add(2);
      }
      EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
    });
  }
  for (auto& t : ts) t.join();

  EXPECT_EQ(reads.load(), 2L * kThreads * transactions) << "every thread did all its work";
  long n = 0;
  std::string error;
  ASSERT_TRUE(count_rows(keeper, "SELECT count(*) FROM t", n, error)) << error;
  EXPECT_EQ(n, static_cast<long>(kThreads) * transactions * kRowsPerTransaction);
  ASSERT_TRUE(count_rows(keeper, "SELECT count(DISTINCT thread) FROM t", n, error)) << error;
  EXPECT_EQ(n, kThreads);
  std::string ok;
  ASSERT_EQ(query(keeper, "PRAGMA integrity_check", ok), SQLITE_OK) << sqlite3_errmsg(keeper);
  EXPECT_EQ(ok, "ok");
  EXPECT_EQ(sqlite3_close(keeper), SQLITE_OK);
}

// Guards against a lock that lets two holders in (lost or torn rows, a corrupt file): SQLite's
// own structures (the shared page cache, the WAL index's in-process part, the VFS's inode list)
// are what these mutexes protect.
TEST_F(Sqlite, ThreadsOnOneFileKeepEveryRowAndIntegrity) {
  char dir[] = "/tmp/spinwise_sqlite_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/test.db";
  hammer("file:" + path, /*wal=*/true);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  EXPECT_EQ(rmdir(dir), 0) << dir;
}

TEST_F(Sqlite, ThreadsOnASharedCacheMemoryDatabaseKeepEveryRowAndIntegrity) {
  hammer(
      std::string("file:spinwise_") + g_kind + "_" + std::to_string(getpid()) + "?mode=memory&cache=shared",
      /*wal=*/false);
}

// --- statistics ------------------------------------------------------------------------------

const spinwise::lock_class_stats* find_class(const spinwise::stats_snapshot& s, const std::string& name) {
  for (const auto& c : s.classes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Guards against SQLite's mutexes that count nowhere, or into one class for all types. Statistics
// need nothing at compile time: every spinwise::sqlite lock is a with_stats lock.
TEST_F(Sqlite, StatisticsReportTheSqliteClasses) {
  const spinwise::stats_snapshot before = spinwise::take_stats_snapshot();
  // SQLite's own use: the static and recursive mutexes of opening and running a connection.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_EQ(exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(randomblob(100));"), SQLITE_OK);
  ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
  // Contention on one fast mutex, through SQLite's public calls: until a wait is counted.
  sqlite3_mutex* m = sqlite3_mutex_alloc(SQLITE_MUTEX_FAST);
  ASSERT_NE(m, nullptr);
  const auto give_up = clock_type::now() + std::chrono::seconds(30);
  std::atomic<bool> contended{false};
  std::atomic<long> entries{0};
  long inside = 0;  // guarded by m
  const int per_round = spinwise_test::scaled(20000, 2000);
  while (!contended.load() && clock_type::now() < give_up) {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < per_round; ++i) {
          sqlite3_mutex_enter(m);
          for (int k = 0; k < 20; ++k) inside = inside + 1;
          sqlite3_mutex_leave(m);
        }
        entries.fetch_add(per_round);
      });
    }
    for (auto& t : ts) t.join();
    const spinwise::stats_snapshot d = spinwise::diff_stats(before, spinwise::take_stats_snapshot());
    const spinwise::lock_class_stats* c = find_class(d, "sqlite.fast");
    contended = c != nullptr && c->totals.contended > 0;
  }
  sqlite3_mutex_free(m);
  EXPECT_EQ(inside, entries.load() * 20) << "the fast mutex let two threads in";
  EXPECT_TRUE(contended.load()) << "no contended entry counted in 30 s";

  const spinwise::stats_snapshot d = spinwise::diff_stats(before, spinwise::take_stats_snapshot());
  const spinwise::lock_class_stats* fast = find_class(d, "sqlite.fast");
  ASSERT_NE(fast, nullptr);
  EXPECT_GE(fast->totals.acquisitions, static_cast<std::uint64_t>(entries.load()));
  for (const char* name : {"sqlite.recursive", "sqlite.static_main"}) {
    const spinwise::lock_class_stats* c = find_class(d, name);
    ASSERT_NE(c, nullptr) << name << " is not in the report";
    EXPECT_GT(c->totals.acquisitions, 0u) << name;
  }
  const std::string text = spinwise::format_stats_text(spinwise::take_stats_snapshot());
  EXPECT_NE(text.find("sqlite.fast"), std::string::npos) << text;
  EXPECT_NE(text.find("sqlite.static_main"), std::string::npos) << text;
  std::string classes;
  for (const auto& c : d.classes) {
    if (c.name.rfind("sqlite.", 0) == 0 && c.totals.acquisitions > 0) {
      classes += " " + c.name + " (" + std::to_string(c.totals.acquisitions) + ", contended " +
                 std::to_string(c.totals.contended) + ")";
    }
  }
  std::printf("[ kind %s ] classes (acquisitions, contended):%s\n", g_kind, classes.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [gtest options] [kind]\n", argv[0]);
    return 2;
  }
  if (argc == 2) g_kind = argv[1];
  if (spinwise_sqlite_methods(g_kind) == nullptr) {
    std::fprintf(stderr, "%s\n", spinwise_sqlite_message());
    return 2;
  }
  unsetenv("SPINWISE_SQLITE_LOCK");  // the tests set it themselves
  std::printf("[ kind %s ]\n", g_kind);
  return RUN_ALL_TESTS();
}
